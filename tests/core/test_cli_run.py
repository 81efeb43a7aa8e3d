"""`jr2 run`, `jr2 gates`, `jr2 send` end to end, and their one-line errors."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from clihelp import ROOT, jr2, popen, wait_for

TICKETS = str(ROOT / "examples" / "tickets.py") + ":machine"


def gate_ids(cwd: Path) -> list[str]:
    res = jr2("gates", "--json", cwd=cwd)
    if res.returncode != 0:
        return []
    return [g["id"] for g in json.loads(res.stdout)["gates"]]


def test_the_tickets_example_through_the_cli_ends_deadlocked(tmp_path: Path) -> None:
    proc = popen("run", TICKETS, cwd=tmp_path)
    try:
        assert wait_for(lambda: sorted(gate_ids(tmp_path)) ==
                        ["T-1.review", "T-2.review", "source"])
        assert jr2("send", "T-1.review", "approve", cwd=tmp_path).returncode == 0
        assert "T-3.review" not in gate_ids(tmp_path)  # T-3 waits for both
        assert jr2("send", "T-2.review", "reject", "--input", '{"reason": "Not now."}',
                   cwd=tmp_path).returncode == 0
        wait_for(lambda: "T-3.review" in gate_ids(tmp_path))
        assert jr2("send", "T-3.review", "approve", cwd=tmp_path).returncode == 0
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 3
    result = json.loads(out)
    assert result["output"]["status"] == "deadlocked"
    assert set(result["output"]["items"]) == {"T-1", "T-2", "T-3"}
    assert "started  T-1" in err and "gate open   T-3.review" in err


def test_sigint_interrupts_a_run_with_exit_130(tmp_path: Path) -> None:
    proc = popen("run", TICKETS, cwd=tmp_path)
    try:
        wait_for(lambda: gate_ids(tmp_path))
        proc.send_signal(signal.SIGINT)
        out, _err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert json.loads(out)["state"] == "interrupted"
    assert not list((tmp_path / ".jr2" / "runs").glob("*.json"))


def test_send_refuses_a_bad_payload_in_one_line(tmp_path: Path) -> None:
    proc = popen("run", TICKETS, cwd=tmp_path)
    try:
        wait_for(lambda: gate_ids(tmp_path))
        res = jr2("send", "T-1.review", "reject", cwd=tmp_path)
        assert res.returncode != 0
        assert res.stderr.strip() == "error: event 'reject': reason: Field required"
        res = jr2("send", "T-1.review", "reject", "--input", "{bad", cwd=tmp_path)
        assert res.returncode == 2 and "not JSON" in res.stderr
        res = jr2("send", "T-9.review", "approve", cwd=tmp_path)
        assert res.returncode != 0 and "no open gate 'T-9.review'" in res.stderr
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("missing.py:machine", "error: missing.py: no such file"),
        (TICKETS.replace(":machine", ":nope"), "has no attribute 'nope'"),
        (TICKETS.replace(":machine", ":BACKLOG"), "is a list, not a Machine"),
        ("no_such_module_x:machine", "no module named 'no_such_module_x'"),
        ("just-a-name", "expected FILE.py:ATTR or module:attr"),
    ],
)
def test_run_refuses_bad_targets_in_one_line(tmp_path: Path, target: str, message: str) -> None:
    res = jr2("run", target, cwd=tmp_path)
    assert res.returncode == 2
    assert message in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_run_refuses_input_that_is_not_json(tmp_path: Path) -> None:
    res = jr2("run", TICKETS, "--input", "{x", cwd=tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.startswith("error: --input: not JSON") and res.stderr.count("\n") == 1


def test_gates_without_a_live_run_says_so(tmp_path: Path) -> None:
    res = jr2("gates", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.startswith("error: no live run")


def test_a_workflow_that_raises_on_import_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "wf.py").write_text("raise RuntimeError('no config here')\n")
    res = jr2("run", "wf.py:machine", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.strip() == (
        "error: wf.py: importing it raised RuntimeError: no config here")
