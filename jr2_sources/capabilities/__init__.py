"""jr2_sources.capabilities: one slice per optional capability a tracker may have.

Design notes
------------
`Tracker` (jr2_sources.tracker) is the seam every tracker implements: four required methods.
Everything else a tracker may do is a capability, and each capability is one slice here that
owns all of it: what the WorkSource calls, the options of `jr2 work`/`jr2 ready`, and the
helpers a tracker reuses.

* `deltas`: read by what changed since the last reading (`reader`: the pool's Ready-set reader;
  `incremental`: the incremental Ready-set and its `Delta`; `sincewindow`: the bookkeeping of
  a tracker read by update time).
* `retries`: bounded retries with failure classes (`--max-attempts`), the attempt record a
  tracker keeps.
* `limits`: global caps and conflict groups (`--global-cap`, `--exclusive-by`; `policy`),
  decided in the tracker's claim or by lock comments on a coordination issue
  (`comment_locks`), and what `jr2 ready` counts of them (`lockreport`).
* `gates`: approval gates (`--gate`; `policy`), read from comment threads (`comments`),
  answered through a live run (`approvals`) or the dashboard (`desk`).
* `dashboard`: one issue's body kept up to date with the Ready-set report (`jr2 dashboard`,
  `jr2 work --dashboard`; `command` runs it).
* `webhooks`: signature checks, replay protection and the run host's `POST /webhook` route.

A capability never reaches into another's modules but through its public names; the core layer
(`readyset`, `worksource`, `cli`) imports the slices, never the reverse, except for the data
types a snapshot carries (`Gate`, `Delta`).
"""
