"""Shared fixtures: isolated settings, the local embedder, an indexed sample book, stubs, events."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bookrag.config.settings import Settings, get_auth_settings, get_settings, load_settings

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DOCS = ROOT / "book" / "docs"
EVENTS = ROOT / "events"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CORPUS = ROOT.parent / "shared" / "corpus"

_OUR_VARS = {name.upper() for name in Settings.model_fields} | {"CO_API_KEY", "CO_API_URL"}


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No test sees the developer's own configuration; every test starts from the defaults."""
    for name in list(os.environ):
        if name.upper() in _OUR_VARS:
            monkeypatch.delenv(name)
    _clear_setting_caches()
    yield
    _clear_setting_caches()


def _clear_setting_caches() -> None:
    from bookrag.services.container import reset_auth  # a guard holds counters: none may outlive its test

    get_settings.cache_clear()
    get_auth_settings.cache_clear()
    reset_auth()


@pytest.fixture
def make_settings(tmp_path: Path) -> Callable[..., Settings]:
    """Settings on a fresh embedded store under tmp_path, local embedder unless overridden."""

    def build(**overrides: Any) -> Settings:
        values: dict[str, Any] = {"qdrant_path": tmp_path / "qdrant", "embedding_provider": "local"}
        values.update(overrides)
        return load_settings(**values)

    return build


@pytest.fixture
def use_env(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Set environment variables for this test only and re-read settings."""

    def apply(**values: str) -> None:
        for key, value in values.items():
            monkeypatch.setenv(key.upper(), value)
        get_settings.cache_clear()

    return apply


@pytest.fixture(scope="session")
def local_embedder() -> Any:
    from bookrag.adapters.embedders import CachedEmbedder
    from bookrag.adapters.embedders.local import LocalEmbedder

    return CachedEmbedder(LocalEmbedder(), 256)


@pytest.fixture(scope="session")
def indexed_book(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The sample book ingested once per session; returns the env that points at it."""
    from bookrag.ingestion.ingestor import Ingestor
    from bookrag.services.container import container_for

    env = {"QDRANT_PATH": str(tmp_path_factory.mktemp("book-index") / "qdrant"), "EMBEDDING_PROVIDER": "local"}
    settings = load_settings(qdrant_path=env["QDRANT_PATH"], embedding_provider="local")
    report = Ingestor(settings, container_for(settings).embedder, container_for(settings).store).run(SAMPLE_DOCS)
    assert report.chunks_total > 0 and not report.skipped
    return env


@pytest.fixture
def book_env(indexed_book: dict[str, str], use_env: Callable[..., None]) -> Settings:
    """This test's settings point at the session's indexed sample book."""
    use_env(**indexed_book)
    return get_settings()


def load_event(name: str) -> dict[str, Any]:
    return json.loads((EVENTS / name).read_text())


@pytest.fixture
def stub() -> Iterator[Any]:
    from tests.stubs import StubServer

    with StubServer() as server:
        yield server


# --- authentication: DynamoDB tables in moto, minted keys, a clock that only moves when told -------------

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

    def mint(self, owner: str = "tests", *, enabled: bool = True, rate_limit: int | None = None) -> str:
        """Store a new key's record the way an administrator would; return the plaintext key."""
        from dataclasses import replace

        from bookrag.auth.dynamodb import record_item
        from bookrag.auth.keys import mint_key

        plaintext, record = mint_key(owner, rate_limit_per_minute=rate_limit)
        self.client.put_item(TableName=API_KEYS_TABLE, Item=record_item(replace(record, enabled=enabled)))
        return plaintext

    def items(self, table: str) -> list[dict[str, Any]]:
        return list(self.client.scan(TableName=table)["Items"])


@pytest.fixture
def auth_tables(monkeypatch: pytest.MonkeyPatch) -> Iterator[AuthTables]:
    """Moto's DynamoDB with fresh auth tables; boto3 clients are rebuilt inside the mock."""
    import boto3
    from moto import mock_aws

    from bookrag.services.container import reset_auth

    for name, value in {"AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "testing",
                        "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing"}.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"):
        monkeypatch.delenv(name, raising=False)
    reset_auth()
    with mock_aws():
        yield AuthTables(boto3.client("dynamodb", region_name="us-east-1"))
    reset_auth()

