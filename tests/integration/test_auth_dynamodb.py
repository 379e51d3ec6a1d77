"""The DynamoDB adapters of bookrag.auth.guard against moto: atomic counters, TTL, cached records, failure modes."""

from __future__ import annotations

import contextlib
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from bookrag.adapters.dynamodb import DynamoDBCounter, DynamoDBKeyStore, build_client
from bookrag.auth.guard import Guard
from bookrag.auth.keys import key_id_of
from bookrag.errors import (
    AuthUnavailableError,
    BookRAGError,
    InvalidApiKeyError,
    OriginNotAllowedError,
    RateLimitedError,
    SecretKeyInBrowserError,
)
from tests.support.aws import API_KEYS_TABLE, RATE_LIMIT_TABLE, AuthTables, FakeClock

IP = "203.0.113.7"


def dynamo_guard(rate: int = 3, failures: int = 2) -> Guard:
    client = build_client()
    return Guard(DynamoDBKeyStore(client, API_KEYS_TABLE), DynamoDBCounter(client, RATE_LIMIT_TABLE),
                 rate_limit_per_minute=rate, failure_limit_per_minute=failures, clock=FakeClock())


def test_counter_adds_atomically_and_sets_the_ttl_once(auth_tables: AuthTables) -> None:
    counter = DynamoDBCounter(build_client(), RATE_LIMIT_TABLE)

    assert [counter.hit("key#a#60", 180) for _ in range(3)] == [1, 2, 3]
    assert counter.hit("key#a#120", 240) == 1
    assert counter.peek("key#a#60") == 3 and counter.peek("key#none#60") == 0

    items = {i["bucket"]["S"]: i for i in auth_tables.items(RATE_LIMIT_TABLE)}
    assert items["key#a#60"]["expires_at"] == {"N": "180"} and items["key#a#60"]["hits"] == {"N": "3"}
    ttl = auth_tables.client.describe_time_to_live(TableName=RATE_LIMIT_TABLE)["TimeToLiveDescription"]
    assert ttl["AttributeName"] == "expires_at"


def test_hits_are_counted_by_one_atomic_update_each(auth_tables: AuthTables) -> None:
    # GIVEN a counter whose client records every DynamoDB operation it sends
    client = build_client()
    sent: list[tuple[str, dict[str, Any]]] = []
    client.meta.events.register("provide-client-params.dynamodb.*",
                                lambda params, model, **_: sent.append((model.name, dict(params))))
    counter = DynamoDBCounter(client, RATE_LIMIT_TABLE)

    # WHEN requests from several threads hit one bucket
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: counter.hit("key#busy#60", 180), range(40)))

    # THEN each hit is a single server-side increment (DynamoDB's ADD is atomic), never a read-modify-write
    # that concurrent containers could interleave. (Moto itself does not serialise concurrent updates of one
    # item, so the totals it returns under threads are not DynamoDB's; the sequential count is checked above.)
    assert [name for name, _ in sent] == ["UpdateItem"] * 40
    assert all(params["UpdateExpression"].startswith("ADD hits :one") for _, params in sent)


def test_key_records_are_read_and_cached_for_a_minute(auth_tables: AuthTables) -> None:
    plaintext = auth_tables.mint("alice", rate_limit=7)
    key_id = key_id_of(plaintext)
    assert key_id
    clock = FakeClock()
    store = DynamoDBKeyStore(build_client(), API_KEYS_TABLE, clock=clock)

    record = store.get(key_id)
    assert record and record.owner == "alice" and record.rate_limit_per_minute == 7 and record.enabled
    assert store.get("0123456789ab") is None

    auth_tables.client.delete_item(TableName=API_KEYS_TABLE, Key={"key_id": {"S": key_id}})
    assert store.get(key_id) == record  # cached: a revoked key works until the cache expires
    clock.advance(61)
    assert store.get(key_id) is None


def test_a_valid_key_passes_and_the_limit_is_shared_through_the_table(auth_tables: AuthTables) -> None:
    plaintext = auth_tables.mint()
    # Two containers: separate guards and clients, one table.
    first, second = dynamo_guard(rate=3), dynamo_guard(rate=3)

    first.admit(plaintext, IP)
    second.admit(plaintext, IP)
    first.admit(plaintext, IP)
    with pytest.raises(RateLimitedError) as caught:
        second.admit(plaintext, IP)

    assert caught.value.retry_after == 50


def test_failures_are_counted_per_ip_in_the_table(auth_tables: AuthTables) -> None:
    plaintext = auth_tables.mint()
    guard = dynamo_guard(failures=2)
    for _ in range(2):
        with pytest.raises(InvalidApiKeyError):
            guard.admit(plaintext[:-2] + "xx", IP)

    with pytest.raises(RateLimitedError) as caught:
        dynamo_guard(failures=2).admit(plaintext, IP)

    assert caught.value.details["scope"] == "source_ip"
    assert any(i["bucket"]["S"].startswith(f"ip#{IP}#") for i in auth_tables.items(RATE_LIMIT_TABLE))


def test_key_lookups_fail_closed(auth_tables: AuthTables) -> None:
    plaintext = auth_tables.mint()
    auth_tables.client.delete_table(TableName=API_KEYS_TABLE)

    with pytest.raises(AuthUnavailableError) as caught:
        dynamo_guard().admit(plaintext, IP)

    assert caught.value.http_status == 503 and caught.value.recoverable
    assert API_KEYS_TABLE not in caught.value.message


def test_counters_fail_open_and_say_so(auth_tables: AuthTables, caplog: pytest.LogCaptureFixture) -> None:
    plaintext = auth_tables.mint()
    auth_tables.client.delete_table(TableName=RATE_LIMIT_TABLE)
    guard = dynamo_guard(rate=1)

    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            assert guard.admit(plaintext, IP).key_id == key_id_of(plaintext)

    assert "rate counter unavailable" in caplog.text


def test_no_table_ever_holds_the_key(auth_tables: AuthTables) -> None:
    plaintext = auth_tables.mint()
    secret = plaintext.split("_", 2)[2]
    guard = dynamo_guard(rate=2, failures=5)
    for presented in (plaintext, plaintext, plaintext, plaintext[:-1] + "?", None):
        with contextlib.suppress(BookRAGError):
            guard.admit(presented, IP)

    stored: list[Any] = auth_tables.items(API_KEYS_TABLE) + auth_tables.items(RATE_LIMIT_TABLE)
    assert stored and secret not in repr(stored)


def test_a_publishable_key_record_keeps_its_kind_and_sites(auth_tables: AuthTables) -> None:
    plaintext = auth_tables.mint("book site", origins=["https://book.example", "https://mirror.example"])
    key_id = key_id_of(plaintext)
    assert key_id

    record = DynamoDBKeyStore(build_client(), API_KEYS_TABLE).get(key_id)

    assert record and record.kind == "publishable"
    assert record.origins == ("https://book.example", "https://mirror.example")
    (item,) = auth_tables.items(API_KEYS_TABLE)
    assert item["kind"] == {"S": "publishable"} and plaintext not in str(item)


def test_a_record_without_a_kind_is_a_secret_key(auth_tables: AuthTables) -> None:
    plaintext = auth_tables.mint()  # as stored before publishable keys existed: no kind, no origins
    (item,) = auth_tables.items(API_KEYS_TABLE)
    assert "kind" not in item

    with pytest.raises(SecretKeyInBrowserError):
        dynamo_guard().admit(plaintext, IP, origin="https://book.example", path="/api/answer")
    assert dynamo_guard().admit(plaintext, IP, path="/api/answer")


def test_a_publishable_key_is_checked_and_its_readers_counted_through_the_tables(auth_tables: AuthTables) -> None:
    plaintext = auth_tables.mint("book site", origins=["https://book.example"])
    client = build_client()
    # Two containers share the table: a reader's share is counted once across them.
    first, second = (Guard(DynamoDBKeyStore(client, API_KEYS_TABLE), DynamoDBCounter(client, RATE_LIMIT_TABLE),
                           rate_limit_per_minute=100, failure_limit_per_minute=5, publishable_limit_per_minute=2,
                           clock=FakeClock()) for _ in range(2))

    first.admit(plaintext, IP, origin="https://book.example", path="/api/answer/stream")
    second.admit(plaintext, IP, origin="https://book.example", path="/api/answer")
    with pytest.raises(RateLimitedError):
        first.admit(plaintext, IP, origin="https://book.example", path="/api/answer")
    with pytest.raises(OriginNotAllowedError):
        second.admit(plaintext, "198.51.100.9", origin="https://other.example", path="/api/answer")
    buckets = {item["bucket"]["S"].split("#")[0] for item in auth_tables.items(RATE_LIMIT_TABLE)}
    assert buckets == {"pub", "key"}


def test_mint_key_with_a_table_stores_a_key_the_guard_admits_and_never_overwrites_one(
        auth_tables: AuthTables) -> None:
    from typer.testing import CliRunner

    from bookrag.devtools.cli import app

    # GIVEN the administrator's command, pointed at the keys table
    result = CliRunner().invoke(app, ["mint-key", "carol", "--table", API_KEYS_TABLE])

    # THEN the printed key is admitted by a guard reading that table, as carol's
    assert result.exit_code == 0, result.output
    plaintext = result.stdout.strip().splitlines()[-1]
    principal = dynamo_guard().admit(plaintext, IP)
    assert principal.owner == "carol"
    # AND the stored record holds the key's hash, never the key
    assert plaintext not in str(auth_tables.items(API_KEYS_TABLE))
