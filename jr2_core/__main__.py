"""`python -m jr2_core` runs the `jr2` command line."""

from .cli import entry

entry(prog_name="jr2")
