"""API keys and the auth policy, in memory: key format, hashing, constant-time checks, both limits."""

from __future__ import annotations

import ast
import contextlib
import hashlib
import hmac
import inspect
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bookrag.auth import guard, keys
from bookrag.auth.guard import Guard
from bookrag.auth.keys import hash_key, key_id_of, mint_key
from bookrag.auth.memory import InMemoryCounter, InMemoryKeyStore
from bookrag.config.settings import load_settings
from bookrag.domain.keys import KeyRecord
from bookrag.errors import CallerAuthError, ConfigError, InvalidApiKeyError, RateLimitedError
from tests.support.aws import FakeClock

IP, OTHER_IP = "203.0.113.7", "198.51.100.9"


def make_guard(*records: KeyRecord, rate: int = 3, failures: int = 2) -> Guard:
    return Guard(InMemoryKeyStore(list(records)), InMemoryCounter(), rate_limit_per_minute=rate,
                 failure_limit_per_minute=failures, clock=FakeClock())


@pytest.fixture
def key() -> tuple[str, KeyRecord]:
    return mint_key("alice")


# --- key format -----------------------------------------------------------------------------------


def test_minted_key_has_prefix_id_and_256_bit_secret(key: tuple[str, KeyRecord]) -> None:
    plaintext, record = key

    prefix, key_id, secret = plaintext.split("_", 2)
    assert prefix == "brk" and key_id == record.key_id and len(key_id) == 12
    assert len(secret) == 43  # token_urlsafe(32): 256 random bits
    assert record.key_hash == hashlib.sha256(plaintext.encode()).hexdigest()
    assert key_id_of(plaintext) == record.key_id


def test_the_record_never_holds_the_key(key: tuple[str, KeyRecord]) -> None:
    plaintext, record = key
    secret = plaintext.split("_", 2)[2]

    assert secret not in repr(record) and secret not in record.setting_entry()


def test_keys_are_unique() -> None:
    keys = {mint_key()[0] for _ in range(50)}
    assert len(keys) == 50 and len({key_id_of(k) for k in keys}) == 50


@pytest.mark.parametrize("presented", [
    "", "brk", "brk__", "brk_0123456789ab_short", "xyz_0123456789ab_" + "a" * 43,
    "brk_0123456789AB_" + "a" * 43, "brk_0123456789ab_" + "a" * 43 + "!", "brk_0123456789ab_" + "a" * 200,
    " brk_0123456789ab_" + "a" * 43,
])
def test_malformed_keys_have_no_id(presented: str) -> None:
    assert key_id_of(presented) is None


@given(st.text(max_size=300))
def test_any_header_value_is_parsed_without_raising(presented: str) -> None:
    key_id = key_id_of(presented)
    assert key_id is None or (len(key_id) == 12 and presented.startswith(f"brk_{key_id}_"))


# --- authentication -------------------------------------------------------------------------------


def test_a_valid_key_is_admitted(key: tuple[str, KeyRecord]) -> None:
    plaintext, record = key

    principal = make_guard(record).admit(plaintext, IP)

    assert principal.key_id == record.key_id and principal.owner == "alice" and principal.rate_limit_per_minute == 3


def test_a_missing_key_is_401_auth_required(key: tuple[str, KeyRecord]) -> None:
    with pytest.raises(CallerAuthError) as caught:
        make_guard(key[1]).admit(None, IP)

    assert type(caught.value) is CallerAuthError
    assert caught.value.code == "AUTH_REQUIRED" and caught.value.http_status == 401


def _wrong_secret(plaintext: str) -> str:
    return plaintext[:-1] + ("A" if plaintext[-1] != "A" else "B")


@pytest.mark.parametrize("variant", ["wrong-secret", "unknown-id", "malformed", "disabled", "other-keys-secret"])
def test_keys_that_do_not_verify_are_401_invalid_api_key(key: tuple[str, KeyRecord], variant: str) -> None:
    plaintext, record = key
    other_plaintext, other_record = mint_key("bob")
    records = [record, other_record]
    presented = {
        "wrong-secret": _wrong_secret(plaintext),
        "unknown-id": mint_key()[0],
        "malformed": "not-a-key",
        "disabled": plaintext,
        "other-keys-secret": f"brk_{record.key_id}_{other_plaintext.split('_', 2)[2]}",
    }[variant]
    if variant == "disabled":
        records = [KeyRecord(record.key_id, record.key_hash, enabled=False)]

    with pytest.raises(InvalidApiKeyError) as caught:
        make_guard(*records).admit(presented, IP)

    assert caught.value.code == "INVALID_API_KEY" and caught.value.http_status == 401
    assert caught.value.message == "The API key is not valid"  # never says which part failed


def test_every_check_uses_a_constant_time_comparison(key: tuple[str, KeyRecord],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    plaintext, record = key
    calls: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    guard = make_guard(record, failures=10)
    presented = [plaintext, _wrong_secret(plaintext), mint_key()[0], "garbage"]
    for value in presented:
        with contextlib.suppress(InvalidApiKeyError):
            guard.admit(value, IP)

    # One comparison per attempt, of the presented key's digest; unknown and malformed keys are compared
    # with a dummy digest, so they cost the same work as a wrong secret.
    assert [a for a, _ in calls] == [hash_key(v) for v in presented]
    assert [b for _, b in calls][:2] == [record.key_hash, record.key_hash]
    assert len({b for _, b in calls[2:]}) == 1 and calls[2][1] != record.key_hash


def test_auth_module_never_compares_digests_with_equality() -> None:
    tree = ast.Module(body=[*ast.parse(inspect.getsource(guard)).body, *ast.parse(inspect.getsource(keys)).body],
                      type_ignores=[])
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops):
            text = ast.unparse(node)
            assert "hash" not in text and "digest" not in text, text


# --- rate limits ----------------------------------------------------------------------------------


def test_the_request_after_the_limit_is_429_with_retry_after(key: tuple[str, KeyRecord]) -> None:
    plaintext, record = key
    guard = make_guard(record, rate=3)
    for _ in range(3):
        guard.admit(plaintext, IP)

    with pytest.raises(RateLimitedError) as caught:
        guard.admit(plaintext, IP)

    exc = caught.value
    assert exc.http_status == 429 and exc.code == "RATE_LIMITED" and exc.recoverable
    assert exc.retry_after == 50  # the clock stands 10 s into its minute
    assert exc.details == {"scope": "api_key", "limit": 3, "window_s": 60, "retry_after_s": 50}


def test_the_limit_resets_with_the_next_window(key: tuple[str, KeyRecord]) -> None:
    plaintext, record = key
    guard = make_guard(record, rate=1)
    guard.admit(plaintext, IP)
    with pytest.raises(RateLimitedError):
        guard.admit(plaintext, IP)

    assert isinstance(guard.clock, FakeClock)
    guard.clock.advance(50)

    assert guard.admit(plaintext, IP).key_id == record.key_id


def test_limits_are_per_key_and_a_record_may_set_its_own() -> None:
    first, first_record = mint_key()
    second, second_record = mint_key(rate_limit_per_minute=5)
    guard = make_guard(first_record, second_record, rate=1)

    guard.admit(first, IP)
    with pytest.raises(RateLimitedError):
        guard.admit(first, IP)
    for _ in range(5):
        guard.admit(second, IP)

    with pytest.raises(RateLimitedError) as caught:
        guard.admit(second, IP)
    assert caught.value.details["limit"] == 5


def test_failed_authentication_is_limited_more_strictly_per_source_ip(key: tuple[str, KeyRecord]) -> None:
    plaintext, record = key
    guard = make_guard(record, rate=3, failures=2)
    for _ in range(2):
        with pytest.raises(InvalidApiKeyError):
            guard.admit(_wrong_secret(plaintext), IP)

    # Even the right key is refused from that IP for the rest of the minute: a late lucky guess is worthless.
    with pytest.raises(RateLimitedError) as caught:
        guard.admit(plaintext, IP)
    assert caught.value.details == {"scope": "source_ip", "limit": 2, "window_s": 60, "retry_after_s": 50}
    assert guard.admit(plaintext, OTHER_IP).key_id == record.key_id

    assert isinstance(guard.clock, FakeClock)
    guard.clock.advance(50)
    assert guard.admit(plaintext, IP).key_id == record.key_id


def test_missing_keys_do_not_count_as_failures(key: tuple[str, KeyRecord]) -> None:
    plaintext, record = key
    guard = make_guard(record, failures=1)
    for _ in range(5):
        with pytest.raises(CallerAuthError):
            guard.admit(None, IP)

    assert guard.admit(plaintext, IP).key_id == record.key_id


# --- settings -------------------------------------------------------------------------------------


def test_auth_is_off_by_default_and_on_needs_a_key_store() -> None:
    assert load_settings().auth_enabled is False
    with pytest.raises(ConfigError, match="AUTH_ENABLED requires"):
        load_settings(auth_enabled=True)


def test_minted_records_are_valid_setting_entries() -> None:
    entries = ",".join(mint_key()[1].setting_entry() for _ in range(2))

    settings = load_settings(auth_enabled=True, api_key_hashes=entries)

    assert settings.api_key_hashes == entries


@pytest.mark.parametrize(("overrides", "message"), [
    ({"api_keys_table": "keys", "rate_limit_table": "rates", "api_key_hashes": "0123456789ab:" + "0" * 64},
     "not both"),
    ({"api_keys_table": "keys"}, "RATE_LIMIT_TABLE is required"),
    ({"rate_limit_per_minute": 5, "auth_failure_limit_per_minute": 6}, "limited more strictly"),
    ({"rate_limit_per_minute": 0}, "RATE_LIMIT_PER_MINUTE"),
])
def test_unsafe_auth_settings_are_refused(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(**overrides)


def test_a_plaintext_key_pasted_into_the_hash_setting_is_refused_without_echoing_it() -> None:
    plaintext, _ = mint_key()

    with pytest.raises(ConfigError, match="API_KEY_HASHES") as caught:
        load_settings(auth_enabled=True, api_key_hashes=plaintext)

    assert plaintext not in str(caught.value) and plaintext.split("_", 2)[2] not in str(caught.value)
