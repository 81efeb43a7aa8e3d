"""The GitHub Work Source (`github:owner/repo`).

Design note: this package's `__init__` imports nothing, so loading the plugin (`plugin.py`)
stays cheap and never pulls in `requests` or PyGithub; the tracker is imported by the factory.
"""
