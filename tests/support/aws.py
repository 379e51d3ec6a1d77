"""DynamoDB in moto with the two auth tables, minted keys, and a clock that only moves when told."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

API_KEYS_TABLE = "bookrag-api-keys"
RATE_LIMIT_TABLE = "bookrag-rate-limits"


class FakeClock:
    """Epoch seconds that move only when a test says so: rate windows without sleeping."""

    def __init__(self, now: float = 1_699_999_990.0) -> None:  # 10 s into a minute
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class AuthTables:
    """The two auth tables as template.yaml declares them, in moto, with helpers to mint and inspect."""

    def __init__(self, client: Any) -> None:
        self.client = client
        client.create_table(TableName=API_KEYS_TABLE, BillingMode="PAY_PER_REQUEST",
                            AttributeDefinitions=[{"AttributeName": "key_id", "AttributeType": "S"}],
                            KeySchema=[{"AttributeName": "key_id", "KeyType": "HASH"}])
        client.create_table(TableName=RATE_LIMIT_TABLE, BillingMode="PAY_PER_REQUEST",
                            AttributeDefinitions=[{"AttributeName": "bucket", "AttributeType": "S"}],
                            KeySchema=[{"AttributeName": "bucket", "KeyType": "HASH"}])
        client.update_time_to_live(TableName=RATE_LIMIT_TABLE,
                                   TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires_at"})

    def env(self, rate_limit: int = 60, failure_limit: int = 10) -> dict[str, str]:
        return {"AUTH_ENABLED": "true", "API_KEYS_TABLE": API_KEYS_TABLE, "RATE_LIMIT_TABLE": RATE_LIMIT_TABLE,
                "RATE_LIMIT_PER_MINUTE": str(rate_limit), "AUTH_FAILURE_LIMIT_PER_MINUTE": str(failure_limit)}

    def mint(self, owner: str = "tests", *, enabled: bool = True, rate_limit: int | None = None,
             origins: list[str] | None = None) -> str:
        """Store a new key's record the way an administrator would (`origins`: a publishable key); return
        the plaintext key."""
        from dataclasses import replace

        from bookrag.adapters.dynamodb import put_key
        from bookrag.auth.keys import mint_key

        plaintext, record = mint_key(owner, rate_limit_per_minute=rate_limit, origins=origins)
        put_key(self.client, API_KEYS_TABLE, replace(record, enabled=enabled))
        return plaintext

    def items(self, table: str) -> list[dict[str, Any]]:
        return list(self.client.scan(TableName=table)["Items"])


@contextmanager
def moto_dynamodb(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A DynamoDB client on moto, under fake credentials: no profile or endpoint of the developer's applies."""
    import boto3
    from moto import mock_aws

    for name, value in {"AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "testing",
                        "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing"}.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"):
        monkeypatch.delenv(name, raising=False)
    with mock_aws():
        yield boto3.client("dynamodb", region_name="us-east-1")


SESSIONS_TABLE = "bookrag-sessions"


def _ttl_table(client: Any, name: str, key: str) -> str:
    """A pay-per-request table keyed by `key` with `expires_at` as its TTL, as template.yaml declares both."""
    client.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                        AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"}],
                        KeySchema=[{"AttributeName": key, "KeyType": "HASH"}])
    client.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires_at"})
    return name


def create_sessions_table(client: Any) -> str:
    """The conversation sessions table (`SessionsTable`); returns its name."""
    return _ttl_table(client, SESSIONS_TABLE, "session_id")


QUESTION_LOG_TABLE = "bookrag-question-log"


def create_question_log_table(client: Any) -> str:
    """The question log table (`QuestionLogTable`); returns its name."""
    return _ttl_table(client, QUESTION_LOG_TABLE, "query_id")
