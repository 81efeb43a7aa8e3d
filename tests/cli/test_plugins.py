"""The plugin host: entry points, allow-list, broken plugins, kind conflicts, every hook."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest

from clihelp import ROOT, env, jr2
from jr2_core.hookspecs import Jr2Spec
from jr2_sources.hooks import SourcesSpec

HOOKS = sorted(n for spec in (Jr2Spec, SourcesSpec)
               for n, _ in inspect.getmembers(spec, inspect.isfunction) if n.startswith("jr2_"))


def make_dist(root: Path, name: str, modules: dict[str, str], eps: dict[str, str]) -> None:
    """A minimal installed distribution (dist-info + modules) on a path we put on PYTHONPATH."""
    info = root / f"{name}-0.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.3\n")
    (info / "entry_points.txt").write_text(
        "[jr2]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()))
    for mod, text in modules.items():
        (root / f"{mod}.py").write_text(text)


OBSERVER = '''
import json, os
from jr2_core import hookimpl

@hookimpl
def jr2_observe(event):
    with open(os.environ["OBS_FILE"], "a") as fh:
        fh.write(json.dumps({"kind": event.kind, "item": event.item_id}) + "\\n")
'''

RAISING_OBSERVER = '''
from jr2_core import hookimpl

@hookimpl
def jr2_observe(event):
    raise RuntimeError("observer is broken")
'''

COMMANDS = '''
import click
from jr2_core import hookimpl

@hookimpl
def jr2_register_commands(cli):
    @cli.command("hello")
    def hello():
        """Say hello."""
        click.echo("hello from a plugin")
'''

DUP_KIND = '''
from jr2_core import hookimpl
from jr2_sources import SourceKind
from jr2_sources.trackers.local.source import LocalConfig

@hookimpl
def jr2_register_sources(register):
    register(SourceKind("local", LocalConfig, lambda c, e: None))
'''

EXTRA_KIND = '''
from jr2_core import hookimpl
from jr2_sources import SourceKind
from jr2_sources.trackers.local.source import LocalConfig
from jr2_sources.trackers.local.source import LocalTracker

@hookimpl
def jr2_register_sources(register):
    register(SourceKind("mybacklog", LocalConfig, LocalTracker, help="local, renamed"))
'''

ADDS_A_HOOK = '''
import click, pluggy
from jr2_core import hookimpl

class GreetSpec:
    @pluggy.HookspecMarker("jr2")
    def greet_name(self):
        """Return a name to greet."""

@hookimpl
def jr2_add_hookspecs(pluginmanager):
    pluginmanager.add_hookspecs(GreetSpec)

@hookimpl
def jr2_register_commands(cli):
    @cli.command("greet")
    def greet():
        from jr2_core.plugins import load
        click.echo("hello " + ",".join(sorted(load().pm.hook.greet_name())))
'''

IMPLEMENTS_IT = '''
from jr2_core import hookimpl

@hookimpl
def greet_name():
    return "greetee"
'''

LOADED = '''
import json, os
from jr2_core import hookimpl

@hookimpl
def jr2_plugins_loaded(host):
    with open(os.environ["OBS_FILE"], "a") as fh:
        fh.write(json.dumps({p.name: p.kinds for p in host.plugins}) + "\\n")
'''


@pytest.fixture
def backlog(tmp_path: Path) -> Path:
    (tmp_path / "b.toml").write_text('[[items]]\nid = "A"\ntitle = "a"\n')
    return tmp_path


def test_every_hook_is_documented_and_tested() -> None:
    doc = (ROOT / "docs" / "reference" / "hooks.md").read_text()
    tests = Path(__file__).read_text()
    for hook in HOOKS:
        assert re.search(rf"^## `?{hook}`?", doc, re.M), f"{hook} is not in docs/reference/hooks.md"
        assert f"def test_hook_{hook}" in tests, f"{hook} has no test_hook_{hook}"


def test_hook_jr2_register_sources(backlog: Path, tmp_path: Path) -> None:
    make_dist(tmp_path / "site", "kindplug", {"kindplug": EXTRA_KIND}, {"kp": "kindplug"})
    e = env(PYTHONPATH=str(tmp_path / "site"))
    res = jr2("ready", "mybacklog:b.toml", "--json", cwd=backlog, env=e)
    assert res.returncode == 0, res.stderr
    assert [i["id"] for i in json.loads(res.stdout)["ready"]] == ["A"]


def test_hook_jr2_add_hookspecs(backlog: Path, tmp_path: Path) -> None:
    make_dist(tmp_path / "site", "greetplug",
              {"greetspec": ADDS_A_HOOK, "greetimpl": IMPLEMENTS_IT},
              {"greetspec": "greetspec", "greetimpl": "greetimpl"})
    res = jr2("greet", cwd=backlog, env=env(PYTHONPATH=str(tmp_path / "site")))
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "hello greetee"


def test_hook_jr2_plugins_loaded(backlog: Path, tmp_path: Path) -> None:
    make_dist(tmp_path / "site", "loadplug", {"loadplug": LOADED, "kindplug": EXTRA_KIND},
              {"loaded": "loadplug", "kp": "kindplug"})
    out = tmp_path / "loaded.jsonl"
    res = jr2("plugins", cwd=backlog, env=env(PYTHONPATH=str(tmp_path / "site"),
                                              OBS_FILE=str(out)))
    assert res.returncode == 0, res.stderr
    [seen] = [json.loads(line) for line in out.read_text().splitlines()]  # once per process
    assert {"loaded", "kp", "jr2_sources.trackers.local.plugin"} <= set(seen)

    broken = env(PYTHONPATH=str(tmp_path / "site"), OBS_FILE=str(tmp_path))  # a directory
    infos = json.loads(jr2("plugins", "--json", cwd=backlog, env=broken).stdout)
    [loaded] = [i for i in infos if i["name"] == "loaded"]
    assert "jr2_plugins_loaded failed: IsADirectoryError" in loaded["error"]
    assert jr2("ready", "mybacklog:b.toml", cwd=backlog, env=broken).returncode == 0


HOOKED_KIND = '''
from jr2_core import hookimpl
from jr2_sources import SourceKind
from jr2_sources.capabilities.webhooks import TakesWebhooks
from jr2_sources.trackers.local.source import LocalTracker, LocalConfig

class Hooked(LocalTracker, TakesWebhooks):
    pass

@hookimpl
def jr2_register_sources(register):
    register(SourceKind("hooked", LocalConfig, LocalTracker, tracker="hookedplug:Hooked"))
    register(SourceKind("undeclared", LocalConfig, LocalTracker))
'''


def test_hook_jr2_kind_capabilities(backlog: Path, tmp_path: Path) -> None:
    make_dist(tmp_path / "site", "hookedplug", {"hookedplug": HOOKED_KIND}, {"hk": "hookedplug"})
    e = env(PYTHONPATH=str(tmp_path / "site"))
    res = jr2("plugins", cwd=backlog, env=e)
    assert res.returncode == 0, res.stderr
    local = "deltas, attempts, limits, bodies, approvals, dashboard"  # LocalTracker's mixins
    assert ("jr2_sources.trackers.local.plugin (built-in)  [jr2 0.1.0]\n"
            "  source kinds: local\n"
            f"  capabilities of local: {local}\n") in res.stdout
    assert ("  source kinds: hooked, undeclared\n"
            f"  capabilities of hooked: {local}, webhooks\n"
            "  capabilities of undeclared: not known\n") in res.stdout
    assert "  capabilities of github: deltas, attempts, comment_locks, bodies, approvals, " \
           "dashboard, webhooks, trust, feedback\n" in res.stdout
    infos = {i["name"]: i for i in json.loads(jr2("plugins", "--json", cwd=backlog,
                                                   env=e).stdout)}
    assert infos["hk"]["capabilities"] == {"hooked": [*local.split(", "), "webhooks"],
                                           "undeclared": None}
    assert infos["jr2_sources.cli.commands"]["capabilities"] == {}


def test_hook_jr2_register_commands(backlog: Path, tmp_path: Path) -> None:
    make_dist(tmp_path / "site", "cmdplug", {"cmdplug": COMMANDS}, {"cmd": "cmdplug"})
    res = jr2("hello", cwd=backlog, env=env(PYTHONPATH=str(tmp_path / "site")))
    assert res.returncode == 0 and res.stdout.strip() == "hello from a plugin"


def test_hook_jr2_observe(backlog: Path, tmp_path: Path) -> None:
    make_dist(tmp_path / "site", "obsplug", {"obsplug": OBSERVER, "badobs": RAISING_OBSERVER},
              {"obs": "obsplug", "bad": "badobs"})
    out = tmp_path / "events.jsonl"
    e = env(PYTHONPATH=str(tmp_path / "site"), OBS_FILE=str(out))
    res = jr2("work", "local:b.toml", "--", "true", cwd=backlog, env=e)
    assert res.returncode == 0, res.stderr  # the raising observer is not fatal
    kinds = [json.loads(line)["kind"] for line in out.read_text().splitlines()]
    assert "worker_started" in kinds and "worker_finished" in kinds and kinds[-1] == "run_ended"


def test_a_broken_plugin_is_listed_and_the_rest_keeps_working(backlog: Path,
                                                              tmp_path: Path) -> None:
    make_dist(tmp_path / "site", "brokenplug",
              {"brokenplug": "raise ImportError('needs the missing package foo')"},
              {"broken": "brokenplug"})
    e = env(PYTHONPATH=str(tmp_path / "site"))
    infos = json.loads(jr2("plugins", "--json", cwd=backlog, env=e).stdout)
    broken = next(i for i in infos if i["name"] == "broken")
    assert broken["distribution"] == "brokenplug" and broken["version"] == "0.3"
    assert "needs the missing package foo" in broken["error"]
    assert "BROKEN: failed to import" in jr2("plugins", cwd=backlog, env=e).stdout
    assert jr2("ready", "local:b.toml", cwd=backlog, env=e).returncode == 0


def test_two_plugins_claiming_one_kind_is_an_error_naming_both(backlog: Path,
                                                               tmp_path: Path) -> None:
    make_dist(tmp_path / "site", "dupplug", {"dupplug": DUP_KIND}, {"dup": "dupplug"})
    e = env(PYTHONPATH=str(tmp_path / "site"))
    res = jr2("ready", "local:b.toml", cwd=backlog, env=e)
    assert res.returncode == 2
    assert "registered twice: by jr2 and by dupplug" in res.stderr


def test_autoload_can_be_disabled_and_allow_listed_but_builtins_stay(backlog: Path,
                                                                     tmp_path: Path) -> None:
    make_dist(tmp_path / "site", "kindplug", {"kindplug": EXTRA_KIND}, {"kp": "kindplug"})
    site = str(tmp_path / "site")
    off = env(PYTHONPATH=site, JR2_DISABLE_PLUGIN_AUTOLOAD="1")
    assert jr2("ready", "mybacklog:b.toml", cwd=backlog, env=off).returncode == 2
    assert jr2("ready", "local:b.toml", cwd=backlog, env=off).returncode == 0
    other = env(PYTHONPATH=site, JR2_LOAD_PLUGINS="something-else")
    assert jr2("ready", "mybacklog:b.toml", cwd=backlog, env=other).returncode == 2
    allowed = env(PYTHONPATH=site, JR2_LOAD_PLUGINS="kindplug")
    assert jr2("ready", "mybacklog:b.toml", cwd=backlog, env=allowed).returncode == 0
    assert jr2("ready", "local:b.toml", cwd=backlog, env=allowed).returncode == 0


def test_builtin_sources_register_through_the_same_hooks() -> None:
    from jr2_core.plugins import load

    host = load(refresh=True)
    local = next(p for p in host.plugins if p.name == "jr2_sources.trackers.local.plugin")
    assert local.builtin and local.kinds == ["local"]
    assert local.hooks == ["jr2_register_sources"]


SPECNAME_KIND = '''
from jr2_core import hookimpl
from jr2_sources import SourceKind
from jr2_sources.trackers.local.source import LocalConfig
from jr2_sources.trackers.local.source import LocalTracker

@hookimpl(specname="jr2_register_sources")
def add_my_kinds(register):
    register(SourceKind("renamedhook", LocalConfig, LocalTracker))
'''

NO_RENEW_KIND = '''
from pydantic import BaseModel
from jr2_core import hookimpl
from jr2_sources import SourceKind
from jr2_sources import Tracker

class Cfg(Tracker.Options):
    pass

class NoRenew(Tracker):
    def snapshot(self): ...
    def claim(self, item, holder, lease): ...
    def settle(self, item_id, holder, outcome): ...

@hookimpl
def jr2_register_sources(register):
    register(SourceKind("norenew", Cfg, lambda c, e: NoRenew(), tracker=NoRenew))
'''

DUCK_NO_RENEW_KIND = '''
from jr2_core import hookimpl
from jr2_sources import SourceKind
from jr2_sources import Tracker

class Cfg(Tracker.Options):
    pass

class Duck:
    name = "duck:x"
    def snapshot(self): ...
    def claim(self, item, holder, lease): ...

@hookimpl
def jr2_register_sources(register):
    register(SourceKind("duck", Cfg, lambda c, e: Duck()))
'''

CLASH_KIND = '''
from pydantic import Field
from jr2_core import hookimpl
from jr2_sources import SourceKind
from jr2_sources.trackers.local.source import LocalConfig
from jr2_sources.trackers.local.source import LocalTracker

class Cfg(LocalConfig):
    timeout: float = Field(default=10.0)

@hookimpl
def jr2_register_sources(register):
    register(SourceKind("clash", Cfg, LocalTracker))
'''


def test_a_specname_plugin_registers_its_kinds(backlog: Path, tmp_path: Path) -> None:
    make_dist(tmp_path / "site", "specplug", {"specplug": SPECNAME_KIND}, {"sp": "specplug"})
    res = jr2("ready", "renamedhook:b.toml", "--json", cwd=backlog,
              env=env(PYTHONPATH=str(tmp_path / "site")))
    assert res.returncode == 0, res.stderr
    assert [i["id"] for i in json.loads(res.stdout)["ready"]] == ["A"]


def test_kinds_missing_a_method_or_with_a_colliding_option_are_refused_on_first_use(
        backlog: Path, tmp_path: Path) -> None:
    make_dist(tmp_path / "site", "badkinds",
              {"norenew": NO_RENEW_KIND, "duckkind": DUCK_NO_RENEW_KIND, "clash": CLASH_KIND},
              {"nr": "norenew", "dk": "duckkind", "cl": "clash"})
    e = env(PYTHONPATH=str(tmp_path / "site"))
    res = jr2("ready", "norenew:x", cwd=backlog, env=e)
    assert res.returncode == 2
    assert res.stderr.strip() == ("error: source kind 'norenew' of plugin badkinds: its tracker "
                                  "NoRenew does not implement renew")
    res = jr2("ready", "duck:x", cwd=backlog, env=e)
    assert res.returncode == 2 and "source kind 'duck' of plugin badkinds" in res.stderr
    assert "lacks renew, settle" in res.stderr and "Traceback" not in res.stderr
    res = jr2("work", "clash:b.toml", "--", "true", cwd=backlog, env=e)
    assert res.returncode == 2
    assert res.stderr.strip() == ("error: source kind 'clash' of plugin badkinds: option "
                                  "--timeout collides with jr2's own options (rename it)")
    # checked when used, not when loaded: the other kinds, and --help, are unaffected
    assert jr2("ready", "local:b.toml", cwd=backlog, env=e).returncode == 0
    assert jr2("--help", cwd=backlog, env=e).returncode == 0
