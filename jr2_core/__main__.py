"""`python -m jr2_core`: the `jr2` command line."""

from .cli import main

main(prog_name="jr2")
