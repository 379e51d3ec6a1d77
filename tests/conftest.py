"""Shared fixtures: isolated settings, the local embedder, an indexed sample book, HTTP stubs, auth tables."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bookrag.config.settings import Settings, get_auth_settings, get_settings, load_settings
from tests.support.aws import AuthTables, moto_dynamodb
from tests.support.env import clear_our_vars
from tests.support.paths import SAMPLE_DOCS
from tests.support.stubs import StubServer


@pytest.fixture(scope="session")
def question_log_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the question log (on by default) writes during the tests: one folder for the session, so the
    settings stay equal from test to test (one container), and never the working tree's `.bookrag`."""
    return tmp_path_factory.mktemp("question-log")


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, question_log_folder: Path) -> Iterator[None]:
    """No test sees the developer's own configuration; every test starts from the defaults."""
    clear_our_vars(monkeypatch)
    monkeypatch.setenv("QUESTION_LOG_PATH", str(question_log_folder))
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
    from bookrag.services.suggesting import suggest_pages

    env = {"QDRANT_PATH": str(tmp_path_factory.mktemp("book-index") / "qdrant"), "EMBEDDING_PROVIDER": "local"}
    settings = load_settings(qdrant_path=env["QDRANT_PATH"], embedding_provider="local")
    report = Ingestor(settings, container_for(settings).embedder, container_for(settings).store).run(SAMPLE_DOCS)
    assert report.chunks_total > 0 and not report.skipped
    # The questions its pages answer, as `bookrag ingest` finds them (the widget's suggestions, issue 36).
    suggest_pages(settings, container_for(settings).embedder, container_for(settings).store)
    return env


@pytest.fixture
def book_env(indexed_book: dict[str, str], use_env: Callable[..., None]) -> Settings:
    """This test's settings point at the session's indexed sample book."""
    use_env(**indexed_book)
    return get_settings()


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


# --- authentication -----------------------------------------------------------------------------------


@pytest.fixture
def auth_tables(monkeypatch: pytest.MonkeyPatch) -> Iterator[AuthTables]:
    """Moto's DynamoDB with fresh auth tables; boto3 clients are rebuilt inside the mock."""
    from bookrag.services.container import reset_auth

    reset_auth()
    with moto_dynamodb(monkeypatch) as client:
        yield AuthTables(client)
    reset_auth()

