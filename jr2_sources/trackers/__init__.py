"""The built-in trackers: `local` (a TOML backlog file), `github`, `jira`.

Each is a plugin registered through the `jr2` entry points and the `jr2_register_sources` hook,
exactly like the plugins under plugins/: nothing in jr2 names them.
"""
