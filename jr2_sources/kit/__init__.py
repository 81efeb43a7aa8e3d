"""jr2_sources.kit: what a tracker plugin reuses, public and versioned as a unit. Each name is
imported from its module; this package imports none of them, so using one piece (a duration in
a config model) costs that piece only.

`durations`, `sizes` (option values), `redact` (secrets out of output), `claims` (the claim
protocol by comment history) run by `comment_claims`, `markers` (the one reader of jr2's markers:
trust and signatures), `bounds` (what a marker can make a pool do), `retry` and `rest` (the one
retry layer and a REST client over it), `labeloptions` and `labeltracker` (a tracker whose claims
are comments and whose marks are labels), `fence` (the command supervisor). The capabilities'
helpers live in their slices (`jr2_sources.capabilities`: webhooks, approvals.comments,
deltas.since); `BlockerState` is `jr2_sources.readyset`'s.
"""
