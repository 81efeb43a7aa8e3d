"""A newcomer's first steps: the README's set-up commands, where `jr2` lives, and the CI workflow
that runs `.ci/run` (the README's test command after Redmine's packages) on pushes and PRs."""

from __future__ import annotations

import os
import re
import tomllib
from typing import Any

import yaml

from clihelp import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "ci.yml"


def _blocks(text: str) -> list[list[str]]:
    return [b.strip("\n").splitlines() for b in re.findall(r"^```(?:sh|console)\n(.*?)^```", text,
                                                           re.S | re.M)]


def test_the_readme_starts_with_the_two_commands_and_says_jr2_is_in_venv_bin() -> None:
    text = (ROOT / "README.md").read_text()
    blocks = _blocks(text)
    assert [ln.split("#")[0].strip() for ln in blocks[0]] == [
        "python3 tools/dev.py demo", "python3 tools/dev.py test"]
    lines = [ln for block in blocks for ln in block]  # the commands, in page order
    first_jr2 = next(i for i, ln in enumerate(lines) if re.match(r"(\$ )?jr2 ", ln))
    told = [i for i, ln in enumerate(lines) if 'PATH="$PWD/.venv/bin:$PATH"' in ln]
    assert told and told[0] < first_jr2, "the README uses jr2 before saying it is in .venv/bin"
    assert ".github/workflows/ci.yml" in text and "`.ci/run`" in text


def test_the_ci_workflow_runs_ci_run_on_pushes_and_pull_requests() -> None:
    doc: dict[Any, Any] = yaml.safe_load(WORKFLOW.read_text())
    on = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` as true
    assert {"push", "pull_request"} <= set(on if isinstance(on, (list, dict)) else [on])
    runs = []
    for job in doc["jobs"].values():
        steps = job["steps"]
        uses = [s.get("uses", "") for s in steps]
        for n, step in enumerate(steps):
            if step.get("run", "").split()[:1] == [".ci/run"]:
                assert job["runs-on"] == "ubuntu-latest"  # apt-get, and sudo without a password
                assert any(u.startswith("actions/checkout@") for u in uses[:n])
                [py] = [s for s in steps[:n]
                        if s.get("uses", "").startswith("actions/setup-python@")]
                need = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
                low = tuple(int(p) for p in need["requires-python"].lstrip(">=").split("."))
                got = tuple(int(p) for p in str(py["with"]["python-version"]).split("."))
                assert got >= low, (got, low)
                runs.append(step)
    assert len(runs) == 1, doc["jobs"]
    script = ROOT / ".ci" / "run"
    assert os.access(script, os.X_OK) and "sudo" in script.read_text()
