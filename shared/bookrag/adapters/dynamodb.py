"""DynamoDB: the one client factory (the guard's tables and the sessions table share its client), and
the adapters of `bookrag.auth.guard`'s ports: the key records and the rate counters.

Imported only when a table is set (`API_KEYS_TABLE`, `SESSIONS_TABLE`, `bookrag mint-key --table`). It uses
the low-level client (the resource layer costs more to build on a cold start) with short timeouts and one
retry: this runs in front of every request. botocore errors become `AuthUnavailableError`, never shown to a
caller.

Tables (template.yaml): `ApiKeysTable` (partition key `key_id`; `key_hash`, `owner`, `enabled`,
`rate_limit_per_minute`, `created_at`; a publishable key's `kind` and `origins`, a string set) and
`RateLimitTable` (partition key `bucket`; `hits`, and `expires_at` as its TTL attribute).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from bookrag.domain.keys import SECRET, KeyRecord
from bookrag.errors import AuthUnavailableError

RECORD_TTL_S = 60.0  # a revoked or disabled key stops working within this (plus the authorizer's cache TTL)


def build_client(*, request_path: bool = True) -> Any:
    """A DynamoDB client. On a request path, short timeouts and one retry: an authorizer that waits is an
    API that waits. Elsewhere (`bookrag mint-key`: an owner at a terminal), the SDK's own defaults."""
    import boto3  # only here: a function without DynamoDB auth never pays for it (~0.25 s)
    from botocore.config import Config

    if not request_path:
        return boto3.client("dynamodb")
    return boto3.client("dynamodb", config=Config(connect_timeout=1, read_timeout=1,
                                                  retries={"total_max_attempts": 2, "mode": "standard"}))


def record_item(record: KeyRecord) -> dict[str, Any]:
    """The DynamoDB item of a key record (for the admin who stores a minted key)."""
    item: dict[str, Any] = {"key_id": {"S": record.key_id}, "key_hash": {"S": record.key_hash},
                            "owner": {"S": record.owner}, "enabled": {"BOOL": record.enabled},
                            "created_at": {"N": str(record.created_at)}}
    if record.rate_limit_per_minute is not None:
        item["rate_limit_per_minute"] = {"N": str(record.rate_limit_per_minute)}
    if record.kind != SECRET:
        item["kind"] = {"S": record.kind}
        item["origins"] = {"SS": list(record.origins)}
    if record.books:
        item["books"] = {"SS": list(record.books)}
    return item


def put_key(client: Any, table: str, record: KeyRecord) -> None:
    """Store a minted key's record; refuses to overwrite an existing key id (botocore's error is raised
    as it is: this is the owner's command line, not a request path)."""
    client.put_item(TableName=table, Item=record_item(record), ConditionExpression="attribute_not_exists(key_id)")


def _record(item: dict[str, Any]) -> KeyRecord | None:
    try:
        limit = item.get("rate_limit_per_minute")
        return KeyRecord(key_id=item["key_id"]["S"], key_hash=item["key_hash"]["S"],
                         owner=item.get("owner", {}).get("S", ""), enabled=item.get("enabled", {}).get("BOOL", True),
                         rate_limit_per_minute=int(limit["N"]) if limit else None,
                         created_at=int(item.get("created_at", {}).get("N", 0)),
                         # An item written before key kinds existed is a secret key.
                         kind=item.get("kind", {}).get("S", SECRET),
                         origins=tuple(sorted(item.get("origins", {}).get("SS", []))),
                         # A string set has no order: a key's first book is the sorted first.
                         books=tuple(sorted(item.get("books", {}).get("SS", []))))
    except (KeyError, TypeError, ValueError):
        return None  # a malformed record verifies nothing


class DynamoDBKeyStore:
    """Key records, cached in the container for `RECORD_TTL_S` (found records only)."""

    def __init__(self, client: Any, table: str, clock: Callable[[], float] = time.monotonic) -> None:
        self._client = client
        self._table = table
        self._clock = clock
        self._cache: dict[str, tuple[float, KeyRecord]] = {}
        self._lock = threading.Lock()

    def get(self, key_id: str) -> KeyRecord | None:
        now = self._clock()
        with self._lock:
            cached = self._cache.get(key_id)
        if cached and cached[0] > now:
            return cached[1]
        try:
            response = self._client.get_item(TableName=self._table, Key={"key_id": {"S": key_id}})
        except (BotoCoreError, ClientError) as exc:  # fail closed: no key is accepted unverified
            raise AuthUnavailableError() from exc
        item = response.get("Item")
        record = _record(item) if item else None
        if record is not None:
            with self._lock:
                if len(self._cache) >= 1024:
                    self._cache.clear()
                self._cache[key_id] = (now + RECORD_TTL_S, record)
        return record


class DynamoDBCounter:
    """Atomic counters: one UpdateItem ADD per hit, items expire through the table's TTL."""

    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table

    def hit(self, bucket: str, expires_at: int) -> int:
        try:
            response = self._client.update_item(
                TableName=self._table, Key={"bucket": {"S": bucket}},
                UpdateExpression="ADD hits :one SET expires_at = if_not_exists(expires_at, :expires)",
                ExpressionAttributeValues={":one": {"N": "1"}, ":expires": {"N": str(expires_at)}},
                ReturnValues="UPDATED_NEW")
            return int(response["Attributes"]["hits"]["N"])
        except (BotoCoreError, ClientError, KeyError, ValueError) as exc:
            raise AuthUnavailableError() from exc

    def peek(self, bucket: str) -> int:
        try:
            response = self._client.get_item(TableName=self._table, Key={"bucket": {"S": bucket}},
                                             ProjectionExpression="hits")
            return int(response.get("Item", {}).get("hits", {}).get("N", 0))
        except (BotoCoreError, ClientError, KeyError, ValueError) as exc:
            raise AuthUnavailableError() from exc
