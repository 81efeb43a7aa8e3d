"""`jr2 work` when its own doors are forced: a command that kills its pool, a state disk that
fills up, a command that cleans its working tree."""

from __future__ import annotations

import time
from pathlib import Path

from clihelp import jr2


def test_an_item_that_kills_its_pool_runs_at_most_twice_in_six_restarts(tmp_path: Path
                                                                           ) -> None:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "BOOM"\ntitle = "kills its pool"\n')
    runs = tmp_path / "runs"
    killer = ["--", "sh", "-c", f'echo run >> {runs}; kill -9 $PPID']
    ends = []
    t0 = time.monotonic()
    for _ in range(6):  # a service manager's Restart=always
        res = jr2("work", "local:b.toml", "--lease", "1s", "--max-attempts", "2", *killer,
                  cwd=tmp_path, timeout=60)
        ends.append((res.returncode, res.stderr))
    assert runs.read_text().split() == ["run", "run"], ends
    assert [rc for rc, _ in ends[:2]] == [-9, -9]
    rc, err = ends[2]
    assert rc == 1 and "failed BOOM: its pool died 2 times while it ran" in err, err
    assert time.monotonic() - t0 < 60
