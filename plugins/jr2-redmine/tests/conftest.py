"""The real Redmine these tests run against: one per test run, shared by the xdist workers.

The first worker to take the lock starts `python -m jr2_redmine.server` in a temporary
directory of the run (keyed by xdist's run id, or this process without xdist); the others wait
for its state file and use the same server. The server watches the run's main process and,
once it has ended, stops Redmine and deletes that directory: nothing is written outside it.
Each test gets a fresh project (`redmine_project`). Without Redmine installed the tests are
skipped with one line saying how to install it.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from redmine_helpers import Project, new_project

from jr2_redmine.server import Instance, missing


def _run_dir() -> tuple[Path, int]:
    """The run's directory and the pid of the run's main process."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run:
        return Path(tempfile.gettempdir()) / f"jr2-redmine-{run}", os.getppid()
    return Path(tempfile.gettempdir()) / f"jr2-redmine-{os.getpid()}", os.getpid()


@pytest.fixture(scope="session")
def redmine() -> Iterator[Instance]:
    why = missing()
    if why is not None:
        pytest.skip(why)
    base, owner = _run_dir()
    base.mkdir(exist_ok=True)
    state = base / "state.json"
    with (base / "lock").open("a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not state.exists():
            with (base / "supervisor.log").open("ab") as log:
                subprocess.Popen([sys.executable, "-m", "jr2_redmine.server", str(base),
                                  "--watch", str(owner), "--state", str(state)],
                                 stdout=subprocess.DEVNULL, stderr=log,
                                 start_new_session=True)
            deadline = time.monotonic() + 300
            while not state.exists():
                if time.monotonic() > deadline:
                    pytest.fail("the throwaway Redmine did not start in 300 s")
                time.sleep(0.2)
        data = json.loads(state.read_text(encoding="utf-8"))
    if "error" in data:
        pytest.fail(f"the throwaway Redmine did not start: {data['error']}")
    yield Instance(**data)


@pytest.fixture
def redmine_project(redmine: Instance) -> Project:
    return new_project(redmine)
