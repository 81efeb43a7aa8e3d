"""Named sources from jr2.toml and [tool.jr2]."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clihelp import env, jr2, jr2_here


def setup(tmp_path: Path, config: str, name: str = "jr2.toml") -> None:
    (tmp_path / "b.toml").write_text(
        '[[items]]\nid = "A"\ntitle = "a"\nlabels = ["agent"]\n'
        '[[items]]\nid = "B"\ntitle = "b"\n')
    (tmp_path / name).write_text(config)


def test_a_named_source_from_jr2_toml(tmp_path: Path) -> None:
    setup(tmp_path, '[sources.work]\nkind = "local"\ntarget = "b.toml"\nlabel = ["agent"]\n')
    res = jr2_here("ready", "work", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert [e["id"] for e in json.loads(res.stdout)["ready"]] == ["A"]


def test_command_line_options_override_the_file(tmp_path: Path) -> None:
    setup(tmp_path, '[sources.work]\nkind = "local"\ntarget = "b.toml"\nlabel = ["agent"]\n')
    res = jr2_here("ready", "work", "--label", "nothing-has-this", "--json", cwd=tmp_path)
    assert json.loads(res.stdout)["ready"] == []


def test_tool_jr2_in_pyproject(tmp_path: Path) -> None:
    setup(tmp_path, '[tool.jr2.sources.all]\nkind = "local"\ntarget = "b.toml"\n',
          name="pyproject.toml")
    res = jr2_here("ready", "all", "--json", cwd=tmp_path)
    assert [e["id"] for e in json.loads(res.stdout)["ready"]] == ["A", "B"]


def test_errors_name_the_file_the_source_and_the_field(tmp_path: Path) -> None:
    setup(tmp_path, '[sources.work]\nkind = "local"\ntarget = "b.toml"\nlabel = "agent"\n')
    res = jr2_here("ready", "work", cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.startswith("error: jr2.toml: source 'work': label: ")


def test_inline_secrets_are_refused(tmp_path: Path) -> None:
    setup(tmp_path, '[sources.gh]\nkind = "local"\ntarget = "b.toml"\ntoken = "ghp_abcdef123"\n')
    res = jr2_here("ready", "gh", cwd=tmp_path)
    assert res.returncode == 2 and "looks like a secret" in res.stderr
    assert "ghp_abcdef123" not in res.stderr


def test_an_unknown_name_lists_the_named_sources(tmp_path: Path) -> None:
    setup(tmp_path, '[sources.work]\nkind = "local"\ntarget = "b.toml"\n')
    res = jr2_here("ready", "wrok", cwd=tmp_path)
    assert res.returncode == 2 and "named source (work)" in res.stderr


@pytest.mark.parametrize("bad", ['[sources.broken]\ntarget = "b.toml"\n',
                                 '[sources.broken]\nkind = "local"\napi_key = "s3cr3t-v4lue"\n',
                                 '[sources]\nbroken = "local:b.toml"\n'])
def test_a_broken_entry_breaks_only_itself(tmp_path: Path, bad: str) -> None:
    """An entry is checked when it is used: the others work, and its error names only it."""
    setup(tmp_path, bad + '[sources.work]\nkind = "local"\ntarget = "b.toml"\n')
    res = jr2_here("ready", "work", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert [e["id"] for e in json.loads(res.stdout)["ready"]] == ["A", "B"]
    assert jr2("work", "work", "--", "true", cwd=tmp_path).returncode == 0
    res = jr2_here("ready", "broken", cwd=tmp_path)
    assert res.returncode == 2
    [line] = res.stderr.splitlines()
    assert line.startswith("error: jr2.toml: source 'broken': ") and "'work'" not in line
    assert "s3cr3t" not in line


# -- found upward, like ruff and uv --------------------------------------------------------------


def test_config_is_found_upward_with_targets_and_state_beside_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JR2_STATE_DIR")
    setup(tmp_path, '[tool.jr2.sources.work]\nkind = "local"\ntarget = "b.toml"\n',
          name="pyproject.toml")
    deep = tmp_path / "src" / "pkg"
    deep.mkdir(parents=True)
    res = jr2_here("ready", "work", "--json", cwd=deep)  # target relative to the config file
    assert res.returncode == 0, res.stderr
    assert [e["id"] for e in json.loads(res.stdout)["ready"]] == ["A", "B"]
    assert not (tmp_path / ".jr2").exists()  # a dry run creates no state
    assert jr2("work", "work", "--", "true", cwd=deep).returncode == 0
    assert (tmp_path / ".jr2" / "logs").is_dir() and not (deep / ".jr2").exists()
    assert (tmp_path / ".jr2" / ".gitignore").read_text().splitlines()[-1] == "*"


def test_the_search_stops_at_the_repository_root(tmp_path: Path) -> None:
    setup(tmp_path, '[sources.work]\nkind = "local"\ntarget = "b.toml"\n')
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    res = jr2_here("ready", "work", cwd=repo)
    assert res.returncode == 2 and "none defined in jr2.toml" in res.stderr
    (repo / "pyproject.toml").write_text("[project]\nname = 'x'\n")  # no [tool.jr2]: passed over
    (tmp_path / "repo" / "sub").mkdir()
    assert jr2_here("ready", "work", cwd=repo / "sub").returncode == 2


def test_the_state_directory_gets_a_gitignore_only_when_jr2_creates_it(tmp_path: Path) -> None:
    backlog = '[[items]]\nid = "A"\ntitle = "a"\n'
    (tmp_path / "b.toml").write_text(backlog)
    mine = tmp_path / "mine"
    mine.mkdir()
    assert jr2("work", "local:b.toml", "--state", "mine", "--", "true",
               cwd=tmp_path).returncode == 0
    assert not (mine / ".gitignore").exists()  # a directory the user made is left alone
    assert jr2("work", "local:b.toml", "--state", "new", "--", "true",
               cwd=tmp_path).returncode == 0
    assert (tmp_path / "new" / ".gitignore").is_file()


def test_the_secret_hint_names_a_key_that_works(tmp_path: Path) -> None:
    setup(tmp_path, '[sources.gh]\nkind = "github"\ntarget = "o/r"\ntoken = "ghp_abcdef123"\n')
    res = jr2_here("ready", "gh", cwd=tmp_path)
    assert res.returncode == 2 and 'token_env = "VARIABLE"' in res.stderr
    setup(tmp_path, '[sources.gh]\nkind = "github"\ntarget = "o/r"\ntoken_env = "NOT_SET_X"\n')
    res = jr2_here("ready", "gh", cwd=tmp_path)
    assert res.returncode == 2 and "NOT_SET_X is not set" in res.stderr
    setup(tmp_path, '[sources.b]\nkind = "local"\ntarget = "b.toml"\ntoken_env = "X"\n')
    assert "reads no token" in jr2_here("ready", "b", cwd=tmp_path).stderr


def test_token_env_gives_the_source_its_token(tmp_path: Path) -> None:
    from jr2_sources.testing.fakes.github_server import FakeGitHub

    with FakeGitHub(tokens={"acme-token-123"}) as fake:
        fake.add_issue("o/r", "one")
        setup(tmp_path, '[sources.gh]\nkind = "github"\ntarget = "o/r"\n'
                        'token_env = "ACME_GITHUB_TOKEN"\n')
        e = env(GITHUB_API_URL=fake.url, ACME_GITHUB_TOKEN="acme-token-123",
                GITHUB_TOKEN="wrong-token-1")
        res = jr2("ready", "gh", "--json", cwd=tmp_path, env=e)
        assert res.returncode == 0, res.stderr
        assert [x["id"] for x in json.loads(res.stdout)["ready"]] == ["o/r#1"]
        wrong = jr2("ready", "github:o/r", cwd=tmp_path, env=e)  # without it: GITHUB_TOKEN
        assert wrong.returncode != 0 and "refused" in wrong.stderr


def test_the_variable_token_env_names_is_kept_from_the_command(tmp_path: Path) -> None:
    from jr2_sources.testing.fakes.github_server import FakeGitHub

    with FakeGitHub(tokens={"acme-token-123"}) as fake:
        fake.add_issue("o/r", "one")
        setup(tmp_path, '[sources.gh]\nkind = "github"\ntarget = "o/r"\ntoken_env = "ACME_GH"\n')
        seen = tmp_path / "seen.env"
        res = jr2("work", "gh", "--write-spacing", "0.1s", "--", "sh", "-c", f"env > {seen}",
                  cwd=tmp_path, env=env(GITHUB_API_URL=fake.url, ACME_GH="acme-token-123"))
        assert res.returncode == 0, res.stderr
        names = {line.split("=", 1)[0] for line in seen.read_text().splitlines()}
        assert not {"ACME_GH", "GH_TOKEN", "GITHUB_TOKEN"} & names
        assert "acme-token-123" not in seen.read_text()
        said = [ln for ln in res.stderr.splitlines() if "left out of the command's" in ln]
        assert len(said) == 1 and "ACME_GH" in said[0], res.stderr
