"""`python tests/github/gh_jr2.py ARGS`: the jr2 command line with the `github` kind registered.

Until `jr2_sources.github.plugin` is in `jr2_core.plugins.BUILTIN`, the end-to-end tests run the
real CLI through this launcher, which adds it for this process only (then it is a no-op).
"""

from __future__ import annotations

import jr2_core.plugins as plugins

if "jr2_sources.github.plugin" not in plugins.BUILTIN:
    plugins.BUILTIN = (*plugins.BUILTIN, "jr2_sources.github.plugin")

from jr2_core.cli import main

if __name__ == "__main__":
    main()
