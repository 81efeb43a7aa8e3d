"""A throwaway Redmine: the Debian package's code, run from a temporary directory.

    python -m jr2_redmine.server DIR [--port N] [--watch PID]

builds a Redmine in DIR (which must not exist yet or be empty), prints one JSON line (`url`,
the API keys of an admin, of a non-admin `jr2bot` and of a person `alice`, the id of the `jr2`
custom field, the role ids) and serves until interrupted, or until process PID has ended; then
it stops Redmine and deletes DIR. The tests run it once per test run (`tests/conftest.py`);
`docs/guides/redmine.md` uses it to try jr2 without a Redmine of one's own.

Nothing is written outside DIR: the code stays in `REDMINE_ROOT` (`/usr/share/redmine`), and DIR
holds links to it with its own configuration, database, logs and Bundler home. One Ruby process
migrates, seeds and serves (WEBrick, one request at a time); no mail is sent. `POST
/jr2/seed.json` (the admin's key only) creates many issues and relations in one request, for the
tests' seeding.

Design notes: docs/design/plugins.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

REDMINE_ROOT = Path(os.environ.get("JR2_REDMINE_ROOT", "/usr/share/redmine"))
INSTALL = "sudo apt-get install -y redmine redmine-sqlite"
"""How to install what the real-server tests need (Debian 12 packages)."""

SETUP_RB = r"""
require 'json'
module Jr2FastSqlite  # a throwaway database: no fsync; WAL lets readers run beside a writer
  def configure_connection
    super
    execute("PRAGMA synchronous = OFF", "SCHEMA")
    execute("PRAGMA journal_mode = WAL", "SCHEMA")
  end

end
ActiveRecord::ConnectionAdapters::SQLite3Adapter.prepend(Jr2FastSqlite)
ActiveRecord::Base.connection_pool.disconnect!
ActiveRecord::Base.connection.migration_context.migrate
ActiveRecord::Base.descendants.each(&:reset_column_information)
Redmine::DefaultData::Loader.load('en')
Setting.rest_api_enabled = '1'
Setting.notified_events = []  # nobody reads a throwaway's mail
Setting.default_language = 'en'
developer = Role.find_by!(name: 'Developer')
developer.add_permission!(:edit_own_issue_notes)  # claims edit their own journal notes
manager = Role.find_by!(name: 'Manager')
def make_user(login)
  u = User.new(firstname: login, lastname: 'Test')
  u.login = login
  u.mail = "#{login}@example.net"
  u.password = u.password_confirmation = SecureRandom.hex(16)
  u.status = User::STATUS_ACTIVE
  u.save!
  u
end
bot = make_user('jr2bot')
alice = make_user('alice')
field = IssueCustomField.create!(name: 'jr2', field_format: 'string', is_for_all: true,
                                 is_filter: true, visible: true, editable: true,
                                 trackers: Tracker.all)
File.write(ARGV[0] + '.tmp', JSON.dump(
  admin_key: User.find_by_login('admin').api_key, bot_key: bot.api_key, bot_id: bot.id,
  person_key: alice.api_key, person_id: alice.id, field_id: field.id,
  developer_role: developer.id, manager_role: manager.id))
File.rename(ARGV[0] + '.tmp', ARGV[0])
class Jr2Seed  # POST /jr2/seed.json (the admin's key): many issues and relations, one request
  def initialize(app, key)
    @app, @key = app, key
  end

  def call(env)
    return @app.call(env) unless env['PATH_INFO'] == '/jr2/seed.json'
    return answer(403, errors: ['the admin key only']) unless
      env['REQUEST_METHOD'] == 'POST' && env['HTTP_X_REDMINE_API_KEY'] == @key
    Rails.application.executor.wrap { seed(JSON.parse(env['rack.input'].read)) }
  rescue StandardError => e
    answer(422, errors: ["#{e.class}: #{e.message}"])
  end

  def seed(body)
    admin = User.find_by_login!('admin')
    User.current = admin  # the author of the issues and of the relations' journals
    project = Project.find(body.fetch('project_id'))
    ids = []
    Issue.transaction do
      body.fetch('issues').each do |fields|
        issue = Issue.new
        issue.project = project
        issue.author = admin
        issue.tracker ||= project.trackers.first
        issue.safe_attributes = fields
        issue.save!
        ids << issue.id
      end
      (body['relations'] || []).each do |from, to, kind|
        relation = IssueRelation.new(issue_from: Issue.find(ids.fetch(from)),
                                     issue_to: Issue.find(ids.fetch(to)), relation_type: kind)
        relation.init_journals(admin)  # as the relations controller: a journal on each issue
        relation.save!
      end
    end
    answer(201, ids: ids)
  ensure
    User.current = nil
  end

  def answer(status, data)
    [status, {'Content-Type' => 'application/json'}, [JSON.dump(data)]]
  end
end
require 'rack/handler/webrick'
Rack::Handler::WEBrick.run(Rack::Lock.new(Jr2Seed.new(Rails.application,
                                                      User.find_by_login('admin').api_key)),
                           Host: '127.0.0.1', Port: Integer(ARGV[1]), AccessLog: [],
                           Logger: WEBrick::Log.new($stderr, WEBrick::Log::WARN))
"""


@dataclass
class Instance:
    """A running throwaway Redmine: where it answers and the keys of its three users."""

    url: str
    admin_key: str
    bot_key: str
    bot_id: int
    person_key: str
    person_id: int
    field_id: int
    developer_role: int
    manager_role: int
    pid: int = 0
    started: float = 0.0


def missing() -> str | None:
    """Why a throwaway Redmine cannot run here (one line naming the install command), or None."""
    if not (REDMINE_ROOT / "app").is_dir() or not (REDMINE_ROOT / "Gemfile").is_file():
        return f"Redmine is not installed ({REDMINE_ROOT}); install it with: {INSTALL}"
    if shutil.which("ruby") is None:
        return f"ruby is not installed; install Redmine with: {INSTALL}"
    return None


def _link_tree(root: Path) -> None:
    """DIR's Redmine: links to the package's code, copies where Ruby resolves links."""
    for sub in ("config", "bin", "db", "public", "instances/default/config", "tmp", "home"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for name in ("app", "lib", "extra", "Rakefile", "config.ru"):
        (root / name).symlink_to(REDMINE_ROOT / name)
    for entry in (REDMINE_ROOT / "public").iterdir():
        if entry.name != "plugin_assets":
            (root / "public" / entry.name).symlink_to(entry)
    (root / "db" / "migrate").symlink_to(REDMINE_ROOT / "db" / "migrate")
    for name in ("rails", "rake"):
        shutil.copy(REDMINE_ROOT / "bin" / name, root / "bin" / name)
    for entry in (REDMINE_ROOT / "config").iterdir():
        if entry.name == "database.yml":
            continue
        if entry.suffix == ".rb":
            shutil.copy(entry, root / "config" / entry.name)
        else:
            (root / "config" / entry.name).symlink_to(entry)
    local = REDMINE_ROOT / "Gemfile.local"
    has_webrick = local.is_file() and "webrick" in local.read_text(encoding="utf-8")
    (root / "Gemfile").write_text(
        f'eval_gemfile "{REDMINE_ROOT / "Gemfile"}"\n'
        + ("" if has_webrick else 'gem "webrick"\n'), encoding="utf-8")
    (root / "instances/default/config/database.yml").write_text(
        "production:\n  adapter: sqlite3\n"
        f"  database: {root / 'instances/default/redmine.sqlite3'}\n"
        "  timeout: 15000\n  pool: 30\n", encoding="utf-8")


def _env(root: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items()
            if k in ("PATH", "LANG", "LC_ALL", "TZ", "SYSTEMROOT")}
    return {**keep, "BUNDLE_GEMFILE": str(root / "Gemfile"), "RAILS_ENV": "production",
            "REDMINE_LANG": "en", "SECRET_KEY_BASE": secrets.token_hex(32),
            "HOME": str(root / "home"), "BUNDLE_USER_HOME": str(root / "home" / ".bundle"),
            "BUNDLE_APP_CONFIG": str(root / "home" / ".bundle-app"), "TMPDIR": str(root / "tmp"),
            "RUBYOPT": "-W0"}


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(url: str, key: str) -> bool:
    req = urllib.request.Request(url + "/users/current.json",
                                 headers={"X-Redmine-API-Key": key})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def launch(root: Path, port: int | None = None,
           *, timeout: float = 180.0) -> tuple[Instance, subprocess.Popen[bytes]]:
    """Build a Redmine in `root` and start it; the instance and its server process."""
    began = time.time()
    root.mkdir(parents=True, exist_ok=True)
    _link_tree(root)
    env, log = _env(root), root / "redmine.log"
    (root / "setup.rb").write_text(SETUP_RB, encoding="utf-8")
    port = port or free_port()
    keys_file = root / "keys.json"
    with log.open("ab") as out:
        proc = subprocess.Popen(
            ["bin/rails", "runner", str(root / "setup.rb"), str(keys_file), str(port)],
            cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    keys: dict[str, Any] = {}
    while not keys or not _answers(url, keys["admin_key"]):
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc)
            tail = [ln for ln in log.read_text(errors="replace").splitlines()
                    if not ln.lstrip().startswith("from ")][-4:]
            raise RuntimeError("Redmine did not start: " + " | ".join(tail))
        if not keys and keys_file.exists():
            keys = json.loads(keys_file.read_text(encoding="utf-8"))
        time.sleep(0.25)
    return Instance(url=url, pid=proc.pid, started=began, **keys), proc


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop the server and every process it started."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m jr2_redmine.server",
                                 description="Run a throwaway Redmine in DIR (deleted after).")
    ap.add_argument("dir", type=Path, help="a new or empty directory for everything it writes")
    ap.add_argument("--port", type=int, default=None, help="default: a free one")
    ap.add_argument("--watch", type=int, default=None, metavar="PID",
                    help="stop (and delete DIR) once process PID has ended")
    ap.add_argument("--state", type=Path, default=None,
                    help="also write the JSON line to this file (atomically)")
    args = ap.parse_args(argv)
    why = missing()
    if why is not None:
        print(why, file=sys.stderr)
        return 2
    root: Path = args.dir.resolve()
    if root.exists() and any(p.name not in ("lock", "supervisor.log") for p in root.iterdir()):
        print(f"{root} is not empty", file=sys.stderr)
        return 2
    ending = False

    def end(*_: Any) -> None:
        nonlocal ending
        ending = True

    signal.signal(signal.SIGTERM, end)
    signal.signal(signal.SIGINT, end)
    proc, code = None, 0
    try:
        try:
            inst, proc = launch(root / "redmine", args.port)
        except RuntimeError as exc:  # said in the state file; kept until the watched end
            result: dict[str, Any] = {"error": str(exc)}
            print(exc, file=sys.stderr)
            code = 1
        else:
            result = asdict(inst)
            print(json.dumps(result), flush=True)
        if args.state is not None:
            _write(args.state, result)
        while not ending and (proc is None or proc.poll() is None) and (
                args.watch is not None or proc is not None) and (
                args.watch is None or _alive(args.watch)):
            time.sleep(0.5)
        return code
    finally:
        if proc is not None:
            stop(proc)
        shutil.rmtree(root, ignore_errors=True)


def _write(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    tmp.replace(path)


if __name__ == "__main__":
    sys.exit(main())
