"""Approval gates (`jr2 work --gate NAME`): `policy` is how a worker asks, how a person answers
and what the next attempt is told; `comments` reads gates from a comment thread; `approvals` is
the `approvals` gate of a live run (`jr2 send approvals ...`); `desk` answers gates from the
dashboard."""
