"""Every shell example in README.md and docs/ runs as written, so docs and behaviour cannot drift.

Design note: each ```console / ```sh block of a page is extracted in page order. A `$ ` line is
a command (a trailing `\\` continues it); the lines up to the next command are what it prints.
The commands of one page run in one bash session, as a reader following the page would type
them, in a scratch copy of the repository's `examples/` (where `examples/` also names itself, so
both `backlog.toml` and `examples/backlog.toml` work), with `jr2` and `python` on PATH and no
tokens in the environment; that `jr2` is a fork of a process that imported jr2 once (jr2_fork).
The output a page shows is compared with what ran, as a multiset of lines (concurrent workers
print in any order), after masking what changes from run to run (run ids, ports, hashes, times).

A comment on the line before a block says how to take it:
- `<!-- docs-test: skip (REASON) -->`: not run (it needs the network, a tracker or a live run);
- `<!-- docs-test: excerpt -->`: the lines shown must appear, others may be printed too;
- `<!-- docs-test: no-output -->`: run, output not compared (it varies, e.g. a help screen);
- `<!-- docs-test: file NAME -->` (before any block, e.g. ```toml): the page's next step writes
  the block's text to NAME, as a reader saving the file would;
- `<!-- docs-test: setup` ... `-->` (a comment of its own lines): shell lines run first, unseen
  by a reader, to make what an example only describes (a broken backlog, a script), so that its
  output is still checked.
A ```sh block's lines are commands without output (`# comments` are dropped).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_FENCE = re.compile(r"^(\s*)(`{3,})(\w*)\s*$")
_MARK = re.compile(r"<!--\s*docs-test:\s*(skip|excerpt|no-output|file)\b\s*([^>]*?)\s*-->")
_MASKS = [
    (re.compile(r"\br-[0-9a-f]{8}\b"), "r-RUN"),
    (re.compile(r"(127\.0\.0\.1|localhost):\d+"), r"\1:PORT"),
    (re.compile(r"-[0-9a-f]{8}\b"), "-HASH"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?"), "TIME"),
    (re.compile(r"\b\d+(\.\d+)?(ms|s)\b"), "DUR"),
    (re.compile(r"/tmp/[^\s'\"]*"), "/TMP"),
    (re.compile(r"[\w.-]+\.sqlite\b"), "STORE.sqlite"),
]


@dataclass
class Command:
    line: int
    text: str
    output: list[str] = field(default_factory=list)
    mode: str = "exact"  # exact | excerpt | no-output


def mask(text: str) -> str:
    for pattern, repl in _MASKS:
        text = pattern.sub(repl, text)
    return text.rstrip()


def extract(page: Path) -> tuple[list[Command], list[tuple[int, str]]]:
    """The page's commands in order, and the blocks skipped (line, reason)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    commands: list[Command] = []
    skipped: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "<!-- docs-test: setup":
            end = lines.index("-->", i)
            commands.append(Command(i + 1, "\n".join(lines[i + 1:end]), mode="no-output"))
            i = end + 1
            continue
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.groups()
        end = i + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        body = [ln[len(indent):] if ln.startswith(indent) else ln for ln in lines[i + 1:end]]
        prev = lines[i - 1] if i else ""
        marker = _MARK.search(prev)
        how = marker.group(1) if marker else "exact"
        start, i = i + 1, end + 1
        if how == "file" and marker is not None:
            text = "\n".join(body)
            commands.append(Command(start, f"cat > {marker.group(2)} <<'__DOCS_EOF__'\n{text}\n"
                                           "__DOCS_EOF__", mode="no-output"))
            continue
        if lang not in ("console", "sh", "shell", "bash"):
            continue
        if how == "skip":
            skipped.append((start, prev.strip()))
            continue
        if lang == "console":
            current: Command | None = None
            for n, ln in enumerate(body):
                if ln.startswith("$ "):
                    current = Command(start + n + 1, ln[2:], mode=how)
                    commands.append(current)
                elif current is not None and current.text.endswith("\\"):
                    current.text += "\n" + ln
                elif current is not None:
                    current.output.append(ln)
        else:
            for n, ln in enumerate(body):
                text = re.sub(r"\s+#.*$", "", ln).strip()
                if text and not text.startswith("#"):
                    commands.append(Command(start + n + 1, text, mode="no-output"))
    return commands, skipped


def _shims(bin_dir: Path, server: Path) -> None:
    bin_dir.mkdir()
    fork = Path(__file__).with_name("jr2_fork.py")
    for name, target in (("jr2", f'"{sys.executable}" -S -E "{fork}" client "{server}"'),
                         ("python", f'"{sys.executable}"'), ("python3", f'"{sys.executable}"')):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {target} "$@"\n')
        shim.chmod(shim.stat().st_mode | stat.S_IEXEC)


def run_page(commands: list[Command], work: Path) -> list[str]:
    """Run the commands in one bash session; the output of each."""
    sep = "@@jr2-docs-test@@"
    script = ["cd " + str(work)]
    for c in commands:
        script += [f"{c.text}", "__rc=$?", f"echo '{sep}'", "(exit $__rc)"]
    bin_dir = work.parent / "bin"
    short = Path(tempfile.mkdtemp(prefix="jr2-docs-", dir="/tmp" if Path("/tmp").is_dir()
                                  else None))  # a socket's path has ~100 bytes at most
    sock = short / "jr2.sock"
    _shims(bin_dir, sock)
    env = {k: v for k, v in os.environ.items()
           if not re.search(r"TOKEN|SECRET|_PAT$|API_KEY|JR2_STATE_DIR|GITHUB_", k)}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["COLUMNS"] = "120"
    env["JR2_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # jr2 as installed alone, as the pages show it
    server = subprocess.Popen([sys.executable, str(Path(__file__).with_name("jr2_fork.py")),
                               "serve", str(sock)], env=env, stdout=subprocess.PIPE, text=True,
                              stdin=subprocess.DEVNULL, cwd=work, start_new_session=True)
    try:
        assert server.stdout is not None and server.stdout.readline() == "ready\n"
        res = subprocess.run(["bash", "-c", "\n".join(script)], capture_output=False, text=True,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             timeout=300, stdin=subprocess.DEVNULL)
    finally:  # the server, and any command of it a page left running
        os.killpg(server.pid, signal.SIGKILL)
        server.communicate()
        shutil.rmtree(short, ignore_errors=True)
    outputs = res.stdout.split(sep + "\n")
    return outputs[:len(commands)] + [""] * (len(commands) - len(outputs))


def _check(page: Path, commands: list[Command], outputs: list[str]) -> list[str]:
    problems = []
    for c, out in zip(commands, outputs, strict=True):
        if c.mode == "no-output":
            continue
        got = Counter(mask(ln) for ln in out.splitlines() if ln.strip())
        want = Counter(mask(ln) for ln in c.output if ln.strip())
        missing = want - got
        extra = got - want if c.mode == "exact" else Counter()
        if missing or extra:
            name = page.relative_to(ROOT) if page.is_relative_to(ROOT) else page
            where = f"{name}:{c.line}: $ {c.text}"
            problems.append(f"{where}\n  shown, not printed: {sorted(missing)}"
                            f"\n  printed, not shown: {sorted(extra)}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_shell_examples_of_a_page_run_as_written(page: Path, tmp_path: Path) -> None:
    commands, _ = extract(page)
    if not commands:
        pytest.skip("no runnable shell examples")
    work = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", work, ignore=shutil.ignore_patterns(".jr2", "__pycache__"))
    (work / "examples").symlink_to(".")  # `examples/backlog.toml` works from here too
    problems = _check(page, commands, run_page(commands, work))
    assert not problems, "\n".join(problems)


def test_every_skipped_block_says_why() -> None:
    for page in PAGES:
        for line, marker in extract(page)[1]:
            assert re.search(r"skip \(\w.*\)", marker), f"{page}:{line}: {marker}"


def test_the_extractor_reads_commands_outputs_and_markers(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("```console\n$ echo a \\\n  b\na b\n$ true\n```\n"
                    "<!-- docs-test: skip (needs GitHub) -->\n```sh\njr2 ready github:o/r\n```\n"
                    "```sh\nls   # list\n```\n")
    commands, skipped = extract(page)
    assert [(c.text, c.output) for c in commands] == [
        ("echo a \\\n  b", ["a b"]), ("true", []), ("ls", [])]
    assert skipped == [(8, "<!-- docs-test: skip (needs GitHub) -->")]
    (tmp_path / "w").mkdir()
    outputs = run_page(commands, tmp_path / "w")
    assert _check(page, commands, outputs) == []
    commands[0].output = ["a c"]
    assert len(_check(page, commands, outputs)) == 1


def test_the_forked_jr2_ends_as_a_fresh_jr2_process_would(tmp_path: Path) -> None:
    """The pages' `jr2` (a fork of an imported jr2) gives what `python -m jr2_core` gives: the
    output, the exit code, from the caller's directory and environment; and a signal it gets
    reaches the command, which ends killed by it as a process would."""
    for side in ("forked", "fresh"):
        (tmp_path / side / "examples").mkdir(parents=True)
        (tmp_path / side / "b.toml").write_text('[[items]]\nid = "T-1"\ntitle = "x"\n')
    script = ["jr2 ready local:nope.toml; echo rc=$?",
              "JR2_STATE_DIR=$PWD/st jr2 ready local:../b.toml --json; echo rc=$?",
              "JR2_STATE_DIR=$PWD/st jr2 work local:../b.toml --wait -- true 2>w.err &"
              " until grep -qs finished w.err; do sleep 0.05; done; kill -TERM $!; wait $!;"
              " echo rc=$?; grep -c interrupted w.err; rm w.err",
              "JR2_STATE_DIR=$PWD/st2 jr2 work local:../b.toml --wait -- true 2>w.err &"
              " until grep -qs finished w.err; do sleep 0.05; done; kill -KILL $!; wait $!;"
              " echo rc=$?"]
    commands = [Command(n, text, mode="no-output") for n, text in enumerate(script)]
    forked = run_page(commands, tmp_path / "forked" / "examples")
    fresh = [subprocess.run(["bash", "-c", text.replace("jr2 ", f'"{sys.executable}" -m '
                                                                "jr2_core ")],
                            cwd=tmp_path / "fresh" / "examples", capture_output=True, text=True,
                            timeout=60, env={**os.environ, "JR2_DISABLE_PLUGIN_AUTOLOAD": "1",
                                             "PYTHONPATH": str(ROOT)})
             for text in script]
    assert [mask(o).splitlines()[-1] for o in forked][:2] == ["rc=2", "rc=0"]
    assert "rc=130" in forked[2] and forked[3].strip().endswith("rc=137")
    # bash's own `Killed` line names the pid and the script's line: the rest must be the same
    assert [sorted(mask(o).splitlines()) for o in forked[:3]] == [
        sorted(mask(r.stdout + r.stderr).splitlines()) for r in fresh[:3]]
    assert fresh[3].stdout.strip() == "rc=137"
    assert (tmp_path / "forked" / "examples" / "st").is_dir()
