"""Publishable keys, in memory: bound to their sites, limited to the reader's routes and to a share per
reader; secret keys refused from a web page."""

from __future__ import annotations

import pytest

from bookrag.auth.guard import Guard, authorize_http_api
from bookrag.auth.keys import key_id_of, mint_key
from bookrag.auth.memory import InMemoryCounter, InMemoryKeyStore
from bookrag.config.settings import load_settings
from bookrag.domain.keys import PUBLISHABLE, KeyRecord
from bookrag.errors import (
    ConfigError,
    KeyScopeError,
    OriginNotAllowedError,
    RateLimitedError,
    SecretKeyInBrowserError,
)
from tests.support.aws import FakeClock

SITE, OTHER_SITE = "https://book.example", "https://evil.example"
IP, OTHER_IP = "203.0.113.7", "198.51.100.9"


def make_guard(*records: KeyRecord, per_reader: int = 2, rate: int = 100) -> Guard:
    return Guard(InMemoryKeyStore(list(records)), InMemoryCounter(), rate_limit_per_minute=rate,
                 failure_limit_per_minute=5, publishable_limit_per_minute=per_reader, clock=FakeClock())


def test_a_publishable_key_is_marked_and_bound_to_its_normalised_sites() -> None:
    plaintext, record = mint_key("book site", origins=["https://Book.Example/", "http://127.0.0.1:3000"])

    assert plaintext.startswith("brk_pub_") and key_id_of(plaintext) == record.key_id
    assert record.kind == PUBLISHABLE and record.origins == (SITE, "http://127.0.0.1:3000")


@pytest.mark.parametrize("origin", ["https://book.example/docs", "*", "book.example", "ftp://book.example", ""])
def test_an_origin_that_is_not_scheme_host_port_is_refused_at_minting(origin: str) -> None:
    with pytest.raises(ValueError):
        mint_key("x", origins=[origin])


def test_the_setting_entry_keeps_kind_and_sites_and_is_accepted_by_the_settings() -> None:
    plaintext, record = mint_key("book site", origins=[SITE, "https://mirror.example"])
    _, secret = mint_key("server")
    entries = f"{record.setting_entry()},{secret.setting_entry()}"

    load_settings(auth_enabled=True, api_key_hashes=entries)  # accepted
    store = InMemoryKeyStore.from_setting(entries)
    assert store.get(record.key_id) == KeyRecord(record.key_id, record.key_hash, kind=PUBLISHABLE,
                                                 origins=(SITE, "https://mirror.example"))
    assert store.get(secret.key_id) == KeyRecord(secret.key_id, secret.key_hash)
    assert plaintext not in entries


def test_a_malformed_origin_in_the_setting_is_refused() -> None:
    _, record = mint_key("x")
    with pytest.raises(ConfigError):
        load_settings(auth_enabled=True, api_key_hashes=f"{record.setting_entry()}@https://a.example/path")


def test_a_publishable_key_answers_from_its_sites() -> None:
    plaintext, record = mint_key("site", origins=[SITE])
    guard = make_guard(record, per_reader=5)

    for path in ("/api/answer", "/api/answer/stream", "/api/retrieve", "/api/feedback"):
        assert guard.admit(plaintext, IP, origin=SITE, path=path).kind == PUBLISHABLE


@pytest.mark.parametrize("origin", [OTHER_SITE, None, "null", "https://book.example.evil.example"])
def test_a_publishable_key_is_403_from_anywhere_else(origin: str | None) -> None:
    plaintext, record = mint_key("site", origins=[SITE])

    with pytest.raises(OriginNotAllowedError) as caught:
        make_guard(record).admit(plaintext, IP, origin=origin, path="/api/answer")
    assert caught.value.http_status == 403 and caught.value.code == "ORIGIN_NOT_ALLOWED"


@pytest.mark.parametrize("path", ["/api/tools", "/mcp", "/api/tools/retrieve_book_content", "/openapi.json"])
def test_a_publishable_key_reaches_only_the_reader_routes(path: str) -> None:
    plaintext, record = mint_key("site", origins=[SITE])

    with pytest.raises(KeyScopeError) as caught:
        make_guard(record).admit(plaintext, IP, origin=SITE, path=path)
    assert caught.value.http_status == 403 and caught.value.code == "KEY_SCOPE"


def test_a_secret_key_is_refused_from_a_web_page_and_accepted_elsewhere(caplog: pytest.LogCaptureFixture) -> None:
    plaintext, record = mint_key("server")
    guard = make_guard(record)

    with pytest.raises(SecretKeyInBrowserError) as caught:
        guard.admit(plaintext, IP, origin=SITE, path="/api/answer")
    assert caught.value.http_status == 403 and caught.value.code == "SECRET_KEY_IN_BROWSER"
    assert plaintext not in caplog.text
    assert [getattr(r, "key_id", None) for r in caplog.records] == [record.key_id]  # the id only, to revoke it
    assert guard.admit(plaintext, IP, path="/api/answer").key_id == record.key_id


def test_each_reader_gets_a_small_share_of_a_publishable_key() -> None:
    plaintext, record = mint_key("site", origins=[SITE])
    guard = make_guard(record, per_reader=2)

    guard.admit(plaintext, IP, origin=SITE, path="/api/answer")
    guard.admit(plaintext, IP, origin=SITE, path="/api/answer")
    with pytest.raises(RateLimitedError) as caught:
        guard.admit(plaintext, IP, origin=SITE, path="/api/answer")
    assert caught.value.details["scope"] == "source_ip" and caught.value.details["limit"] == 2
    assert guard.admit(plaintext, OTHER_IP, origin=SITE, path="/api/answer")  # another reader


def test_the_key_wide_limit_still_caps_every_reader_together() -> None:
    plaintext, record = mint_key("site", origins=[SITE], rate_limit_per_minute=3)
    guard = make_guard(record, per_reader=10)

    for n in range(3):
        guard.admit(plaintext, f"203.0.113.{n}", origin=SITE, path="/api/answer")
    with pytest.raises(RateLimitedError) as caught:
        guard.admit(plaintext, "203.0.113.99", origin=SITE, path="/api/answer")
    assert caught.value.details["scope"] == "api_key"


def test_refusals_of_a_valid_key_are_not_counted_as_failed_attempts() -> None:
    plaintext, record = mint_key("site", origins=[SITE])
    guard = make_guard(record)

    for _ in range(10):  # over the failure limit (5), had they counted
        with pytest.raises(OriginNotAllowedError):
            guard.authenticate(plaintext, IP, origin=OTHER_SITE, path="/api/answer")
    assert guard.authenticate(plaintext, IP, origin=SITE, path="/api/answer")


def _event(key: str, origin: str | None, path: str = "/api/answer") -> dict[str, object]:
    headers = {"x-api-key": key, **({"origin": origin} if origin else {})}
    return {"headers": headers, "rawPath": path, "requestContext": {"http": {"sourceIp": IP, "path": path}}}


def test_the_authorizer_applies_the_same_rules() -> None:
    publishable, pub_record = mint_key("site", origins=[SITE])
    secret, secret_record = mint_key("server")
    guard = make_guard(pub_record, secret_record)

    assert authorize_http_api(_event(publishable, SITE), guard)["isAuthorized"] is True
    assert authorize_http_api(_event(publishable, OTHER_SITE), guard) == {"isAuthorized": False}
    assert authorize_http_api(_event(publishable, SITE, "/api/tools"), guard) == {"isAuthorized": False}
    assert authorize_http_api(_event(secret, SITE), guard) == {"isAuthorized": False}
    assert authorize_http_api(_event(secret, None, "/api/tools"), guard)["isAuthorized"] is True


def test_mint_key_publishable_prints_the_key_once_and_its_setting_entry() -> None:
    from typer.testing import CliRunner

    from bookrag.devtools.cli import app

    result = CliRunner().invoke(app, ["mint-key", "book site", "--publishable", "--origin", "https://Book.Example"])

    assert result.exit_code == 0, result.output
    plaintext = result.stdout.strip()
    assert plaintext.startswith("brk_pub_") and result.output.count(plaintext) == 1
    entry = result.stderr.split("API_KEY_HASHES entry: ")[1].split()[0]
    assert entry.endswith("@https://book.example")
    assert InMemoryKeyStore.from_setting(entry).get(str(key_id_of(plaintext))) is not None


@pytest.mark.parametrize("args", [["--publishable"], ["--origin", SITE], ["--publishable", "--origin", "https://a/b"]])
def test_mint_key_refuses_a_publishable_key_without_valid_sites(args: list[str]) -> None:
    from typer.testing import CliRunner

    from bookrag.devtools.cli import app

    result = CliRunner().invoke(app, ["mint-key", "site", *args])

    assert result.exit_code == 2 and "brk_" not in result.output
