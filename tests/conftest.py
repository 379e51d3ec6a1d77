"""Shared fixtures: isolated settings, the local embedder, an indexed sample book, stubs, events."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bookrag.settings import Settings, get_settings, load_settings

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
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


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
    from bookrag.embedders import CachedEmbedder
    from bookrag.embedders.local import LocalEmbedder

    return CachedEmbedder(LocalEmbedder(), 256)


@pytest.fixture(scope="session")
def indexed_book(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The sample book ingested once per session; returns the env that points at it."""
    from bookrag.embedders import get_embedder
    from bookrag.ingest import Ingestor
    from bookrag.store import get_store

    env = {"QDRANT_PATH": str(tmp_path_factory.mktemp("book-index") / "qdrant"), "EMBEDDING_PROVIDER": "local"}
    settings = load_settings(qdrant_path=env["QDRANT_PATH"], embedding_provider="local")
    report = Ingestor(settings, get_embedder(settings), get_store(settings)).run(SAMPLE_DOCS)
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
