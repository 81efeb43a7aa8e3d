"""What the docs state in prose (costs, exit codes, fields, messages), checked against what the
code does, where the docs-examples test (`test_docs_examples.py`) runs no example that shows it."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

from clihelp import ROOT, jr2

DOCS = ROOT / "docs"


def test_a_won_github_claim_costs_what_every_page_says(tmp_path: Path) -> None:
    from pydantic import SecretStr

    from jr2_sources.readyset import SnapshotItem
    from jr2_sources.registry import SourceEnv
    from jr2_sources.testing.fakes.github_server import FakeGitHub
    from jr2_sources.trackers.github.adapter import GitHubAdapter
    from jr2_sources.trackers.github.client import GitHubClient
    from jr2_sources.trackers.github.config import GitHubConfig

    with FakeGitHub() as fake:
        fake.add_issue("o/r", "one")
        config = GitHubConfig(target="o/r", write_spacing=0.001)
        client = GitHubClient(fake.url, SecretStr("x"), label="github:o/r", write_spacing=0.001)
        adapter = GitHubAdapter(config, SourceEnv(state_dir=tmp_path), client=client)
        adapter.snapshot()
        before = len(fake.requests())
        assert adapter.claim(SnapshotItem(id="o/r#1", title="one"), "r-1@h", 600)
        cost = len(fake.requests()) - before
    said = {page.name: [int(n) for n in re.findall(r"a won claim costs (\d+) requests",
                                                   page.read_text())]
            for page in (DOCS / "guides" / "github-actions.md", DOCS / "performance.md")}
    assert said == {name: [cost] for name in said}, (cost, said)


def test_a_missing_backlog_exits_2_as_the_tables_and_the_help_say(tmp_path: Path) -> None:
    res = jr2("work", "local:nope.toml", "--", "true", cwd=tmp_path)
    assert (res.returncode, res.stderr) == (2, "error: nope.toml: no such file\n")
    assert "2 bad usage" in jr2("work", "--help", cwd=tmp_path).stdout
    rows = [ln for ln in (DOCS / "reference" / "cli.md").read_text().splitlines()
            if re.match(r"\|\s*4\s*\|", ln)]
    assert len(rows) == 2
    for row in rows:  # exit 4 never claims a backlog missing at the start
        assert "missing" not in row or "exit 2" in row, row


def test_piped_json_is_one_compact_line_as_the_report_reference_says(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n')
    out = jr2("ready", "local:b.toml", "--json", cwd=tmp_path).stdout
    assert out.count("\n") == 1 and json.loads(out)["schema_version"] == 1
    [row] = [ln for ln in (DOCS / "reference" / "ready-report.md").read_text().splitlines()
             if ln.startswith("| `--json` or `--format json`")]
    assert "indented by 2 on a terminal" in row and "compact line when stdout is a pipe" in row


def test_a_misspelt_jr2_toml_key_is_the_message_the_guide_shows(tmp_path: Path) -> None:
    (tmp_path / "jr2.toml").write_text('[sources.bad]\nkind = "local"\ntarget = "b.toml"\n'
                                       'lable = ["cli"]\n')
    res = jr2("ready", "bad", cwd=tmp_path, env={**os.environ, "COLUMNS": "120"})
    shown = [ln for ln in (DOCS / "guides" / "local-backlog.md").read_text().splitlines()
             if ln.startswith("error: jr2.toml: source 'bad': lable")]
    assert res.returncode == 2 and shown == [res.stderr.rstrip("\n")]


def test_the_concepts_page_names_every_field_of_run_output() -> None:
    from jr2_core import RunOutput

    text = (DOCS / "concepts" / "pools-and-sources.md").read_text()
    m = re.search(r"a \[`RunOutput`\]\([^)]*\) with (\w+) fields: (.*?)\. ", text, re.S)
    assert m is not None
    named = re.findall(r"`(\w+)`", m.group(2))
    fields = [f.name for f in dataclasses.fields(RunOutput)]
    assert named == fields and m.group(1) == ["three", "four", "five", "six"][len(fields) - 3]
    assert "{" + ", ".join(fields) + "}" in text
