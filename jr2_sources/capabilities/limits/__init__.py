"""Limits shared by every pool on one tracker: global caps and conflict groups (`--global-cap`,
`--exclusive-by`). `policy` parses the options and tags items with their groups;
`comment_locks` keeps them as lock comments on a coordination issue (`--control-issue`) for a
tracker whose claims are comments; `lockreport` is what `jr2 ready` counts of those locks."""
