"""jr2_sources.kit: what a tracker plugin reuses, public and versioned as a unit. Each name is
imported from its module; this package imports none of them, so using one piece (a duration in
a config model) costs that piece only.

- `durations`: `Duration`, `parse_duration` (`10m`-style options).
- `redact`: `Redactor`, `secret_values` (keep secrets out of logs and output).
- `claims`: the claim protocol by comment history; `comment_claims`: `CommentClaims` and
  `CommentThread` run it, `ClaimsByComment` delegates a tracker's claim / renew / release.
- `markers`: `MarkerTrust`, `Reading`, `Ignored`, `marker_key`, `TRUST_HELP`: the one reader of
  jr2's markers (only trusted authors' markers count; with `JR2_MARKER_KEY` only signed ones).
- `retry`: the one retry layer.
- `rest`: `RestClient`, `RestResponse`, `RequestStats`, `parse_http_date` (a counted, retried,
  spaced REST client).
- `labeloptions`: `LabelOptions`; `labeltracker`: `LabelCommentTracker`, `labels_of` (the
  options and the base of a tracker whose claims are comments and whose marks are labels).
- `fence`: the command supervisor; `bounds`: what a marker can make a pool do; `sizes`: `10MiB`.

The capabilities' helpers live in their slices: webhooks (`verify_signature`, `hmac_sha256`,
`header`, `DeliveryDeduper`, `Verdict`, `attach_webhook`: `jr2_sources.capabilities.webhooks`),
gates read from a thread (`approvals_of`: `...approvals.comments`), deltas by update time
(`SinceWindow`, `WindowGap`, `Page`, `iso_z`: `...deltas.sincewindow`; `SinceReader`:
`...deltas.since`); `BlockerState` is `jr2_sources.readyset`'s.
"""
