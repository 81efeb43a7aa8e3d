"""jr2-gitlab: a jr2 Work Source over the issues of a GitLab project (kind `gitlab`).

It imports only jr2's public API (`jr2_core`, `jr2_sources` and its public modules `claims`,
`retry`, `webhooks`, `testing`) and passes jr2's conformance kit.
"""

from .config import GitLabConfig

__all__ = ["GitLabConfig"]
