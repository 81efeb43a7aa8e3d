"""GitHub App authentication (finding 10): installation tokens from GITHUB_APP_ID and the
private key, the installation found from the repository, tokens refreshed before they expire,
the key and the tokens never shown. The fake checks each JWT against the App's public key."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from jr2_core.errors import ConfigError
from jr2_sources.readyset import SnapshotItem
from jr2_sources.registry import SourceEnv
from jr2_sources.testing.fakes.github_server import FakeGitHub
from jr2_sources.trackers.github.app import app_credentials
from jr2_sources.trackers.github.config import GitHubConfig
from jr2_sources.trackers.github.tracker import GitHubTracker

APP_ID = 4242


def _keypair() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    return private, public.decode()


PRIVATE, PUBLIC = _keypair()


@pytest.fixture
def app_fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    fake = FakeGitHub().start()
    fake.next_number.setdefault("o/r", 1)
    fake.add_app(APP_ID, PUBLIC)
    for name in ("GITHUB_TOKEN", "GH_TOKEN", "GITHUB_APP_PRIVATE_KEY_PATH",
                 "GITHUB_APP_INSTALLATION_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_API_URL", fake.url)
    monkeypatch.setenv("GITHUB_APP_ID", str(APP_ID))
    monkeypatch.setenv("GITHUB_APP_PRIVATE_KEY", PRIVATE)
    try:
        yield fake
    finally:
        fake.stop()


def adapter(**options: object) -> GitHubTracker:
    config = GitHubConfig(target="o/r", write_spacing=0.001, **options)  # type: ignore[arg-type]
    return GitHubTracker(config, SourceEnv(state_dir=Path("/nonexistent"), read_only=False))


def test_an_app_claims_with_installation_tokens_found_from_the_repository(
        app_fake: FakeGitHub) -> None:
    n = app_fake.add_issue("o/r")
    a = adapter()
    assert [i.id for i in a.snapshot().items] == ["o/r#1"]
    assert a.claim(SnapshotItem(id=f"o/r#{n}"), "pool-1", 60)
    assert [e["status"] for e in app_fake.requests("GET", r"/installation$")] == [200]
    assert len(app_fake.requests("POST", r"/access_tokens$")) == 1
    assert app_fake.requests(path=r"/issues") and all(
        e["status"] < 400 for e in app_fake.requests(path=r"/issues"))


def test_tokens_are_refreshed_before_they_expire(app_fake: FakeGitHub) -> None:
    app_fake.token_ttl = 21.5  # PyGithub asks for a new token 20 s before expiry
    app_fake.add_issue("o/r")
    a = adapter()
    a.snapshot()
    time.sleep(1.7)
    a.snapshot()
    assert len(app_fake.requests("POST", r"/access_tokens$")) == 2
    assert all(e["status"] != 401 for e in app_fake.requests())


def test_a_wrong_key_fails_at_start_in_one_line_without_the_key(
        app_fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    other, _ = _keypair()
    monkeypatch.setenv("GITHUB_APP_PRIVATE_KEY", other)
    with pytest.raises(ConfigError) as err:
        adapter()
    text = str(err.value)
    assert "HTTP 401" in text and "\n" not in text and "PRIVATE KEY" not in text
    assert "MII" not in text and "MII" not in repr(app_credentials())


def test_the_installation_can_be_given_and_the_key_read_from_a_file(
        app_fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    keyfile = tmp_path / "app.pem"
    keyfile.write_text(PRIVATE)
    monkeypatch.delenv("GITHUB_APP_PRIVATE_KEY")
    monkeypatch.setenv("GITHUB_APP_PRIVATE_KEY_PATH", str(keyfile))
    monkeypatch.setenv("GITHUB_APP_INSTALLATION_ID", "77")
    app_fake.add_issue("o/r")
    assert adapter().snapshot().items
    assert app_fake.requests("GET", r"/installation$") == []


def test_assign_is_refused_at_start_with_app_auth(app_fake: FakeGitHub) -> None:
    with pytest.raises(ConfigError, match="--assign"):
        adapter(assign=True)
    assert app_fake.requests("GET", r"^/user$") == []


@pytest.mark.parametrize(("env", "needle"), [
    ({"GITHUB_APP_ID": "x"}, "GITHUB_APP_ID must be a number"),
    ({"GITHUB_APP_ID": "1"}, "no private key"),
    ({"GITHUB_APP_ID": "1", "GITHUB_APP_PRIVATE_KEY": "secret-not-a-pem"}, "not a PEM"),
    ({"GITHUB_APP_ID": "1", "GITHUB_APP_PRIVATE_KEY_PATH": "/nonexistent/k.pem"}, "cannot read"),
])
def test_bad_app_settings_are_one_line(env: dict[str, str], needle: str) -> None:
    with pytest.raises(ConfigError) as err:
        app_credentials(env)
    assert needle in str(err.value) and "secret-not-a-pem" not in str(err.value)


CLAIM = '<!-- jr2:claim {"holder": "evil@x", "lease": 86400, "nonce": "n1"} -->\njr2: held'


def test_an_installation_tokens_identity_is_the_apps_bot_from_the_installation(
        app_fake: FakeGitHub) -> None:
    """ISSUE-NOTES 6: the App's comments carry `<slug>[bot]`; with the installation found from
    the repository its `app_slug` names it, so neither `GET /app` nor `GET /user` (which an
    installation token may not call) is asked. The App's claims count for another pool of
    the same App; a stranger's do not."""
    mine = app_fake.add_issue("o/r", "claimed by a pool of this App")
    forged = app_fake.add_issue("o/r", "claimed by a stranger", labels=["jr2:claimed"])
    app_fake.add_comment("o/r", forged, CLAIM, user="mallory")
    a = adapter()
    assert a.identity() == ["jr2-app[bot]"]
    assert a.claim(SnapshotItem(id=f"o/r#{mine}"), "pool-1", 600)
    [posted] = [c for c in app_fake.comments_of("o/r", mine) if "jr2:claim" in c.body]
    assert posted.user == "jr2-app[bot]"
    other = {it.id: it for it in adapter().snapshot().items}
    assert other[f"o/r#{mine}"].claim is not None  # another pool of the App: it holds
    assert other[f"o/r#{forged}"].claim is None
    assert [(ig.marker, ig.author) for ig in other[f"o/r#{forged}"].ignored] == [
        ("claim", "mallory")]
    assert app_fake.requests("GET", r"^/app$") == []
    assert app_fake.requests("GET", r"^/user$") == []


def test_with_the_installation_given_the_bot_is_read_from_get_app_once(
        app_fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    """With `GITHUB_APP_INSTALLATION_ID` the slug comes from "Get the authenticated app"
    (`GET /app`, which takes the App's JWT, not the installation token), asked once however
    many threads are read."""
    monkeypatch.setenv("GITHUB_APP_INSTALLATION_ID", "77")
    numbers = [app_fake.add_issue("o/r", f"held {i}", labels=["jr2:claimed"]) for i in range(3)]
    for n in numbers:
        app_fake.add_comment("o/r", n, CLAIM, user="mallory")
    a = adapter()
    for _ in range(3):
        items = a.snapshot().items
        assert all(it.claim is None and it.ignored for it in items)
    assert a.claim(items[0], "pool-1", 600)
    assert a.identity() == ["jr2-app[bot]"]
    [asked] = app_fake.requests("GET", r"^/app$")
    assert asked["status"] == 200
    assert app_fake.requests("GET", r"^/user$") == []
