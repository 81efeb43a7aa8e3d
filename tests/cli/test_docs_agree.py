"""What the docs state in prose (costs, exit codes, fields, messages), checked against what the
code does, where the docs-examples test (`test_docs_examples.py`) runs no example that shows it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pty
import re
import subprocess
from pathlib import Path
from typing import BinaryIO

from clihelp import JR2, ROOT, env, jr2

DOCS = ROOT / "docs"


def test_a_won_github_claim_costs_what_every_page_says(tmp_path: Path) -> None:
    from pydantic import SecretStr

    from jr2_sources.readyset import SnapshotItem
    from jr2_sources.registry import SourceEnv
    from jr2_sources.testing.fakes.github_server import FakeGitHub
    from jr2_sources.trackers.github.client import GitHubClient
    from jr2_sources.trackers.github.config import GitHubConfig
    from jr2_sources.trackers.github.tracker import GitHubTracker

    with FakeGitHub() as fake:
        fake.add_issue("o/r", "one")
        config = GitHubConfig(target="o/r", write_spacing=0.001)
        client = GitHubClient(fake.url, SecretStr("x"), label="github:o/r", write_spacing=0.001)
        adapter = GitHubTracker(config, SourceEnv(state_dir=tmp_path), client=client)
        adapter.snapshot()
        before = len(fake.requests())
        assert adapter.claim(SnapshotItem(id="o/r#1", title="one"), "r-1@h", 600)
        cost = len(fake.requests()) - before
        other = GitHubTracker(config, SourceEnv(state_dir=tmp_path / "other"),
                              client=GitHubClient(fake.url, SecretStr("x"), label="github:o/r",
                                                  write_spacing=0.001))
        before = len(fake.requests())
        assert not other.claim(SnapshotItem(id="o/r#1", title="one"), "r-2@h", 600)
        taken = [e for e in fake.requests()[before:] if e["path"] != "/user"]  # once a process
    assert [(e["method"], e["path"]) for e in taken] == [
        ("GET", "/repos/o/r/issues/1"), ("GET", "/repos/o/r/issues/1/comments")], taken
    said = {page.name: [int(n) for n in re.findall(r"a won claim costs (\d+) requests",
                                                   page.read_text())]
            for page in (DOCS / "guides" / "github-actions.md", DOCS / "performance.md")}
    assert said == {name: [cost] for name in said}, (cost, said)
    for page in (DOCS / "guides" / "github-actions.md", DOCS / "performance.md"):
        assert re.search(r"(seen|sees) taken 2", page.read_text()), page.name


def test_a_missing_backlog_exits_2_as_the_tables_and_the_help_say(tmp_path: Path) -> None:
    res = jr2("work", "local:nope.toml", "--", "true", cwd=tmp_path)
    assert (res.returncode, res.stderr) == (2, "error: nope.toml: no such file\n")
    assert "2 bad usage" in jr2("work", "--help", cwd=tmp_path).stdout
    rows = [ln for ln in (DOCS / "reference" / "cli.md").read_text().splitlines()
            if re.match(r"\|\s*4\s*\|", ln)]
    assert len(rows) == 2
    for row in rows:  # exit 4 never claims a backlog missing at the start
        assert "missing" not in row or "exit 2" in row, row
    twos = [ln for ln in (DOCS / "reference" / "cli.md").read_text().splitlines()
            if re.match(r"\|\s*2\s*\|", ln)]
    assert len(twos) == 2 and all("missing" in row for row in twos), twos


def test_json_is_indented_on_a_terminal_and_compact_when_piped_as_the_references_say(
        tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n')
    out = jr2("ready", "local:b.toml", "--json", cwd=tmp_path).stdout
    assert out.count("\n") == 1 and json.loads(out)["schema_version"] == 1
    leader, follower = pty.openpty()
    with os.fdopen(leader, "rb") as tty:
        proc = subprocess.Popen([*JR2, "ready", "local:b.toml", "--json"], cwd=tmp_path,
                                stdout=follower, stderr=subprocess.DEVNULL, env=env())
        os.close(follower)
        shown = b""
        while chunk := _read(tty):
            shown += chunk
        assert proc.wait(timeout=60) == 0
    lines = shown.decode().splitlines()
    assert json.loads(shown)["schema_version"] == 1 and lines[1].startswith('  "'), lines[:3]
    rows = [ln for page in ("ready-report.md", "cli.md")
            for ln in (DOCS / "reference" / page).read_text().splitlines()
            if re.match(r"\| `--json`", ln) and ("schema_version" in ln or "JSON contract" in ln)]
    assert len(rows) == 2, rows
    for row in rows:
        said = re.search(r"compact line when (stdout is )?(a pipe|piped)", row)
        assert "on a terminal" in row and said, row


def _read(tty: BinaryIO) -> bytes:
    """What the terminal got next; b"" once the writer closed it (EIO on Linux)."""
    try:
        return os.read(tty.fileno(), 65536)
    except OSError:
        return b""


def test_every_page_names_every_field_of_run_output() -> None:
    from jr2_core import RunOutput

    fields = [f.name for f in dataclasses.fields(RunOutput)]
    text = (DOCS / "concepts" / "pools-and-sources.md").read_text()
    m = re.search(r"a \[`RunOutput`\]\([^)]*\) with (\w+) fields: (.*?)\. ", text, re.S)
    assert m is not None
    named = re.findall(r"`(\w+)`", m.group(2))
    assert named == fields and m.group(1) == ["three", "four", "five", "six"][len(fields) - 3]
    spelt = "{" + ", ".join(fields) + "}"
    for page, times in (("concepts/pools-and-sources.md", 1), ("reference/run-host.md", 2)):
        found = re.findall(r"\{status, items[^}]*\}", (DOCS / page).read_text())
        assert found == [spelt] * times, (page, found)
    api = (DOCS / "reference" / "api.md").read_text()
    block = api[api.index("class RunOutput:"):]
    block = block[:block.index("def to_json")]
    assert re.findall(r"^    (\w+):", block, re.M) == fields
