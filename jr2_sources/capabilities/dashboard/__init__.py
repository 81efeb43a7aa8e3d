"""The dashboard issue (`jr2 dashboard`, `jr2 work --dashboard N`): one issue's body kept up to
date with the Ready-set report, with boxes a person ticks to retry a failed item or approve a
gate. A tracker declares it by inheriting `HasDashboard` (`mixin`). `body` cuts and merges the
body, `model` builds jr2's section once from the Ready-set, `layout` (Markdown), `adf`
(ADF) and `wiki` (wiki markup) format it, `sync` decides when to write and acts on ticks
(`Dashboard`, `Board`), `scope` keeps the dashboard issue out of the backlog, `target` says what
each kind of board allows (length, write spacing). Only the mixin is exported here, so declaring
the capability imports nothing else."""

from .mixin import HasDashboard

__all__ = ["HasDashboard"]
