"""Set up a private virtualenv and run the demo or the whole test suite.

Only Python 3.11+ and the package registries are needed: the first run creates `.venv/`,
installs jr2 (editable) with its development extras, and reinstalls whenever `pyproject.toml`
or a plugin's changes. `python3 tools/dev.py demo` runs the main job on the embedded default;
`python3 tools/dev.py test` runs ruff, mypy and pytest (on two processes: `-n 2`), exactly what
CI runs; arguments after `test` go to pytest (`-n 0` runs it in one process).
`python3 tools/dev.py lines` prints the line budgets' counts (ISSUE-NOTES 11: `wc -l` of every
`.py` file under `jr2_core/` and `jr2_sources/`, the playground and its fake servers excepted).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
STAMP = VENV / ".jr2-installed"


def _plugins() -> list[Path]:
    return sorted(p for p in (ROOT / "plugins").glob("*") if (p / "pyproject.toml").is_file())


def _fingerprint() -> str:
    h = hashlib.sha256()
    for f in [ROOT / "pyproject.toml", *(p / "pyproject.toml" for p in _plugins())]:
        h.update(f.read_bytes())
    return h.hexdigest()


def ensure_env() -> None:
    """Create the virtualenv and install jr2 (and the plugins in plugins/) when needed."""
    if not PY.exists():
        print("creating .venv ...", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(VENV)
    want = _fingerprint()
    if STAMP.exists() and STAMP.read_text() == want:
        return
    print("installing jr2 and its development tools into .venv ...", file=sys.stderr)
    pip = [str(PY), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "-e", f"{ROOT}[dev,github,jira]"], check=True)
    for plugin in _plugins():
        subprocess.run([*pip, "-e", str(plugin)], check=True)
    STAMP.write_text(want)


# not counted in the line budgets: the playground and the fake trackers it serves
UNBUDGETED = ("jr2_sources/playground/", "jr2_sources/testing/fakes/")


def budget_files(package: str) -> list[Path]:
    """The `.py` files of `package` (`jr2_core` or `jr2_sources`) its line budget counts."""
    return sorted(p for p in (ROOT / package).rglob("*.py")
                  if not p.relative_to(ROOT).as_posix().startswith(UNBUDGETED))


def budget_lines() -> dict[str, int]:
    """Lines per package, as `wc -l` counts them, docstrings included."""
    return {pkg: sum(len(p.read_bytes().splitlines()) for p in budget_files(pkg))
            for pkg in ("jr2_core", "jr2_sources")}


def run(*cmd: str) -> int:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"demo", "test", "bench", "lines"}:
        print("usage: python3 tools/dev.py demo|test|bench|lines [pytest args...]",
              file=sys.stderr)
        return 2
    if argv[0] == "lines":
        for pkg, n in budget_lines().items():
            print(f"{pkg}: {n:,} lines")
        return 0
    ensure_env()
    what, rest = argv[0], argv[1:]
    if what == "demo":
        return run(str(PY), str(ROOT / "examples" / "demo.py"), *rest)
    if what == "bench":
        return run(str(PY), str(ROOT / "bench" / "run_all.py"), *rest)
    for step in (
        [str(PY), "-m", "ruff", "check", "."],
        [str(PY), "-m", "mypy"],
    ):
        print("$", " ".join(Path(step[0]).name if i == 0 else a for i, a in enumerate(step)),
              file=sys.stderr)
        if (rc := run(*step)) != 0:
            return rc
    if (why := _redmine_missing()) is not None:
        print(f"jr2-redmine: its real-server tests are skipped: {why}", file=sys.stderr)
    return run(str(PY), "-m", "pytest", *_processes(rest), *rest)


def _redmine_missing() -> str | None:
    """Why the jr2-redmine tests cannot start their real Redmine here (None: they run)."""
    found = subprocess.run([str(PY), "-c", "from jr2_redmine.server import missing; "
                            "print(missing() or '')"], capture_output=True, text=True)
    return (found.stdout.strip() or None) if found.returncode == 0 else None


def _processes(rest: list[str]) -> list[str]:
    """`-n 2 --dist worksteal` (pytest-xdist) unless the arguments choose: the suite mostly
    waits (leases, subprocesses, fake servers), so two processes halve its time on CI's two
    cores, and an idle one takes over the other's queue rather than waiting at the end;
    `-n 0` or `-p no:xdist` runs it in one."""
    chosen = any(a == "no:xdist" or a.startswith(("-n", "--numprocesses")) for a in rest)
    return [] if chosen else ["-n", "2", "--dist", "worksteal"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
