"""Every GraphQL operation jr2 sends to Linear, as text, and what each one costs.

Design notes
------------
* One place for the documents, so the tests validate each of them against Linear's schema
  (`tests/fixtures/linear/schema.graphql`) and the fake executes exactly these.
* Blockers: an `IssueRelation` reads "`issue` <type> `relatedIssue`" (Linear's schema: `issue`
  is "the source issue ... from which the relation originates", `relatedIssue` "the target").
  So the issues that block X are X's `inverseRelations` of type `blocks` (X is their
  `relatedIssue`); X's `relations` of type `blocks` are the issues X blocks. Sub-issues are
  `children` / `parent`. Each reference carries its workflow state's `type` inline, so a page
  of issues is the whole Ready-set input: no request per issue.
* Complexity follows Linear's rate-limiting page: a property costs 0.1 point, an object 1, and a
  connection multiplies what it selects by its page size (`first`, default 50). One issue of
  `ISSUE_FIELDS` is 119 points by that rule (the fake's `complexity` computes it), so `PAGE`
  issues a page keep `Jr2Issues` under the 10,000 points Linear allows one query. Complexity is
  also budgeted per hour, so a poll asks first only which issues changed (`Jr2Changed`, a few
  hundred points) and reads whole only those.
* Markers live in attachments whose URL holds `#jr2-` (see `markers.py`); the issue reads them
  inline, filtered by that URL, so a claimed issue needs no extra request either.
"""

from __future__ import annotations

PAGE = 83
"""Issues per page of `Jr2Issues`: as many as Linear's 10,000 points a query allow (84 would
pass them; a test pins both)."""

INLINE = 10
"""Children and blocking relations read inline per issue; an issue with more is read again on
its own (`MORE`), 250 at a time."""

MARKER_TAG = "#jr2-"
"""What the URL of every jr2 marker attachment contains (the issue's URL, then `#jr2-NONCE`)."""

MARKERS_INLINE = 5
"""Marker attachments read inline per issue (a claim and its outcome; a released claim is
deleted, so few stay); an issue with more has them all read on their own (`MARKERS`)."""

_REF = "identifier trashed state { type }"

ISSUE_FIELDS = f"""
fragment Jr2Issue on Issue {{
  id identifier title url priority createdAt updatedAt branchName trashed
  state {{ type }}
  labels(first: 10) {{ nodes {{ name }} }}
  parent {{ {_REF} }}
  children(first: {INLINE}) {{ pageInfo {{ hasNextPage }} nodes {{ {_REF} }} }}
  inverseRelations(first: {INLINE}) {{
    pageInfo {{ hasNextPage }}
    nodes {{ type issue {{ {_REF} }} }}
  }}
  attachments(first: {MARKERS_INLINE}, filter: {{ url: {{ contains: "{MARKER_TAG}" }} }}) {{
    pageInfo {{ hasNextPage }}
    nodes {{ id url metadata createdAt updatedAt creator {{ id name email }} }}
  }}
}}
"""

SETUP = """
query Jr2Setup($team: String!) {
  viewer { id name email }
  teams(filter: { key: { eq: $team } }, first: 1) {
    nodes { id key name states(first: 50) { nodes { id name type position } } }
  }
}
"""

ISSUES = """
query Jr2Issues($filter: IssueFilter!, $first: Int!, $after: String) {
  issues(filter: $filter, first: $first, after: $after, orderBy: createdAt) {
    pageInfo { hasNextPage endCursor }
    nodes { ...Jr2Issue }
  }
}
""" + ISSUE_FIELDS

CHANGED = """
query Jr2Changed($touched: IssueFilter!) {
  issues(filter: $touched, first: 100, orderBy: updatedAt) {
    pageInfo { hasNextPage }
    nodes { id identifier updatedAt trashed state { type } }
  }
}
"""
"""What changed: the ids and states of the issues updated since (a poll's one small request;
the changed issues of the scope are then read whole with `Jr2Issues`)."""

HELD_FIRST = 25
"""Held issues one `Jr2Held` reads (more: one request per 25)."""

HELD = """
query Jr2Held($ids: [ID!], $scoped: IssueFilter!) {
  held: issues(filter: { id: { in: $ids } }, first: 25) { nodes { ...Jr2Issue } }
  scoped: issues(filter: $scoped, first: 25) { nodes { id } }
}
""" + ISSUE_FIELDS

ISSUE = """
query Jr2Issue($id: String!) {
  issue(id: $id) { ...Jr2Issue }
}
""" + ISSUE_FIELDS

CHECK = """
query Jr2Check($id: String!, $scoped: IssueFilter!) {
  issue(id: $id) { id identifier url trashed state { type } }
  issues(filter: $scoped, first: 1) { nodes { id } }
}
"""

MARKERS = f"""
query Jr2Markers($id: String!) {{
  issue(id: $id) {{
    attachments(first: 50, filter: {{ url: {{ contains: "{MARKER_TAG}" }} }}) {{
      nodes {{ id url metadata createdAt updatedAt creator {{ id name email }} }}
    }}
  }}
}}
"""

MORE = f"""
query Jr2IssueMore($id: String!) {{
  issue(id: $id) {{
    children(first: 250) {{ nodes {{ {_REF} }} }}
    inverseRelations(first: 250) {{ nodes {{ type issue {{ {_REF} }} }} }}
  }}
}}
"""

CREATE_MARKER = """
mutation Jr2MarkerCreate($input: AttachmentCreateInput!) {
  attachmentCreate(input: $input) { success attachment { id createdAt updatedAt } }
}
"""

UPDATE_MARKER = """
mutation Jr2MarkerUpdate($id: String!, $input: AttachmentUpdateInput!) {
  attachmentUpdate(id: $id, input: $input) { success attachment { id updatedAt } }
}
"""

DELETE_MARKER = """
mutation Jr2MarkerDelete($id: String!) {
  attachmentDelete(id: $id) { success }
}
"""

MOVE = """
mutation Jr2IssueMove($id: String!, $input: IssueUpdateInput!) {
  issueUpdate(id: $id, input: $input) { success issue { id state { type } } }
}
"""

ALL = {"Jr2Setup": SETUP, "Jr2Issues": ISSUES, "Jr2Changed": CHANGED, "Jr2Held": HELD,
       "Jr2Issue": ISSUE, "Jr2Check": CHECK, "Jr2Markers": MARKERS,
       "Jr2IssueMore": MORE, "Jr2MarkerCreate": CREATE_MARKER,
       "Jr2MarkerUpdate": UPDATE_MARKER, "Jr2MarkerDelete": DELETE_MARKER,
       "Jr2IssueMove": MOVE}
"""Every operation by name (the tests validate each one against Linear's schema)."""
