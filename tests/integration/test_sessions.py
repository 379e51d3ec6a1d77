"""Session stores: in memory, and DynamoDB in moto (the table as template.yaml declares it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bookrag.adapters.sessions import DynamoDBSessionStore, InMemorySessionStore
from bookrag.domain.conversation import Session, Turn
from bookrag.errors import SessionNotFoundError, SessionStoreError
from tests.support.aws import SESSIONS_TABLE, create_sessions_table, moto_dynamodb

NOW = 1_700_000_000
SID = "ses_" + "a" * 32


@pytest.fixture
def dynamodb(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    with moto_dynamodb(monkeypatch) as client:
        create_sessions_table(client)
        yield client


@pytest.fixture(params=["memory", "dynamodb"])
def store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    if request.param == "memory":
        yield InMemorySessionStore()
        return
    with moto_dynamodb(monkeypatch) as client:
        create_sessions_table(client)
        yield DynamoDBSessionStore(client, SESSIONS_TABLE)


def test_a_session_round_trips(store: Any) -> None:
    session = Session(SID, "key1", (Turn("How do I install ROS 2?", "With apt [1].", "How do I install ROS 2?"),),
                      NOW + 60)
    store.put(session)

    assert store.get(SID, NOW) == session
    assert store.get("ses_" + "b" * 32, NOW) is None


def test_an_expired_session_is_gone(store: Any) -> None:
    store.put(Session(SID, "key1", (Turn("q"),), NOW + 60))

    assert store.get(SID, NOW + 60) is None


def test_a_deleted_session_is_gone(store: Any) -> None:
    store.put(Session(SID, "key1", (), NOW + 60))
    store.delete(SID)

    assert store.get(SID, NOW) is None


def test_dynamodb_never_lets_another_owner_overwrite_a_session(dynamodb: Any) -> None:
    store = DynamoDBSessionStore(dynamodb, SESSIONS_TABLE)
    store.put(Session(SID, "alice", (Turn("mine"),), NOW + 60))

    with pytest.raises(SessionNotFoundError):
        store.put(Session(SID, "mallory", (Turn("theirs"),), NOW + 60))

    got = store.get(SID, NOW)
    assert got is not None and got.owner == "alice" and got.turns == (Turn("mine"),)


def test_dynamodb_reads_a_malformed_item_as_no_session(dynamodb: Any) -> None:
    dynamodb.put_item(TableName=SESSIONS_TABLE, Item={"session_id": {"S": SID}, "turns": {"S": "{not json"}})
    store = DynamoDBSessionStore(dynamodb, SESSIONS_TABLE)

    assert store.get(SID, NOW) is None
    dynamodb.put_item(TableName=SESSIONS_TABLE, Item={"session_id": {"S": SID}, "owner": {"S": "a"},
                                                      "turns": {"S": "{not json"}, "expires_at": {"N": str(NOW + 9)}})
    assert store.get(SID, NOW) == Session(SID, "a", (), NOW + 9)


def test_dynamodb_failures_are_our_error(dynamodb: Any) -> None:
    store = DynamoDBSessionStore(dynamodb, "no-such-table")

    with pytest.raises(SessionStoreError) as caught:
        store.get(SID, NOW)
    with pytest.raises(SessionStoreError):
        store.put(Session(SID, "a", (), NOW + 9))
    assert caught.value.http_status == 503 and "no-such-table" not in caught.value.message


def test_the_memory_store_drops_the_least_recently_used() -> None:
    store = InMemorySessionStore(max_sessions=2)
    for name in ("a", "b"):
        store.put(Session(f"ses_{name * 32}", "k", (), NOW + 60))
    assert store.get(f"ses_{'a' * 32}", NOW) is not None  # "a" is now the most recent
    store.put(Session(f"ses_{'c' * 32}", "k", (), NOW + 60))

    assert store.get(f"ses_{'b' * 32}", NOW) is None and store.get(f"ses_{'a' * 32}", NOW) is not None
