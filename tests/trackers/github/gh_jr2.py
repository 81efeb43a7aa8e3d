"""`python tests/trackers/github/gh_jr2.py ARGS`: the jr2 command line, `github` kind included.

The `github` kind is one of jr2's own entry points, so this is the plain CLI; the tests keep
launching it by this path.
"""

from __future__ import annotations

from jr2_core.cli import main

if __name__ == "__main__":
    main()
