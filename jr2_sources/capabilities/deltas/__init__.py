"""Deltas: a tracker read by what changed since the last reading, so a claim costs what changed,
not the backlog's size. `reader` is what a pool reads before each claim (`ReadyReader`);
`incremental` keeps the Ready-set current from `Delta`s; `sincewindow` is the bookkeeping of a
tracker whose deltas list issues by update time (GitHub, GitLab)."""
