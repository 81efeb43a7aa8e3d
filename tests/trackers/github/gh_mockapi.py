"""A `responses` callback that serves GitHub JSON by path, with ETags, 304s and Link pages."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import responses

API = "https://api.github.com"


class MockAPI:
    """Routes `(method, path)` to JSON; lists are paged (`per_page`, `page`) with `Link`."""

    def __init__(self, rsps: responses.RequestsMock) -> None:
        self.routes: dict[tuple[str, str], Any] = {}
        self.calls: list[tuple[str, str, int]] = []
        rsps.add_callback(responses.GET, re.compile(re.escape(API) + r"/.*"), self._serve)
        for method in (responses.POST, responses.PATCH, responses.DELETE, responses.PUT):
            rsps.add_callback(method, re.compile(re.escape(API) + r"/.*"), self._serve)

    def set(self, path: str, data: Any, method: str = "GET", status: int = 200,
            headers: dict[str, str] | None = None) -> None:
        self.routes[(method, path)] = (status, data, headers or {})

    def count(self, method: str | None = None, path: str | None = None) -> int:
        return sum(1 for m, p, _ in self.calls
                   if (method is None or m == method) and (path is None or re.search(path, p)))

    def _serve(self, request: Any) -> tuple[int, dict[str, str], str]:
        parts = urlsplit(request.url)
        q = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        route = self.routes.get((request.method, parts.path))
        if route is None:
            self.calls.append((request.method, parts.path, 404))
            return 404, {}, json.dumps({"message": "Not Found"})
        status, data, headers = route
        headers = dict(headers)
        if callable(data):
            data = data(q)
        if isinstance(data, list) and request.method == "GET":
            per = int(q.get("per_page", "30"))
            page = int(q.get("page", "1"))
            last = max(1, -(-len(data) // per))
            if page < last:
                query = "&".join(f"{k}={v}" for k, v in sorted({**q, "page": str(page + 1)}
                                                               .items()))
                headers["Link"] = f'<{API}{parts.path}?{query}>; rel="next"'
            data = data[(page - 1) * per: page * per]
        body = json.dumps(data)
        if request.method == "GET" and status == 200:
            etag = 'W/"' + hashlib.sha1(body.encode()).hexdigest() + '"'
            headers["ETag"] = etag
            if request.headers.get("If-None-Match") == etag:
                self.calls.append((request.method, parts.path, 304))
                return 304, headers, ""
        self.calls.append((request.method, parts.path, status))
        return status, headers, body


def issue(number: int, repo: str = "octo/app", **fields: Any) -> dict[str, Any]:
    """A minimal issue object with GitHub's documented field names."""
    base = f"{API}/repos/{repo}"
    data: dict[str, Any] = {
        "id": 1000 + number, "node_id": f"I_{number}", "url": f"{base}/issues/{number}",
        "repository_url": base, "html_url": f"https://github.com/{repo}/issues/{number}",
        "number": number, "state": "open", "state_reason": None, "title": f"Issue {number}",
        "body": None, "labels": [], "assignees": [], "milestone": None, "comments": 0,
        "created_at": f"2024-01-01T00:{number // 60 % 60:02d}:{number % 60:02d}Z",
        "updated_at": "2024-01-02T00:00:00Z", "closed_at": None,
        "sub_issues_summary": {"total": 0, "completed": 0, "percent_completed": 0},
        "issue_dependencies_summary": {"blocked_by": 0, "blocking": 0, "total_blocked_by": 0,
                                       "total_blocking": 0},
    }
    data.update(fields)
    return data


def labels(*names: str) -> list[dict[str, Any]]:
    return [{"id": i, "node_id": f"LA_{i}", "url": f"{API}/labels/{n}", "name": n,
             "color": "ededed", "default": False, "description": None}
            for i, n in enumerate(names)]
