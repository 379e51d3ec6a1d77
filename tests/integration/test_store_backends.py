"""Adding a store backend is one entry in `bookrag.adapters.store.BACKENDS`: the backend a configuration
chooses there is the container's `store` and `versions`, so the service reads it and the CLI ingests into
it, lists its versions and rolls them back, with no other file naming it.

The backend here is Qdrant Edge under another name (the real engine, not a mock), which journals what it
is asked and, unlike Edge, ingests atomically from the first ingest: the CLI must ask the backend for that.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from bookrag.adapters import store
from bookrag.adapters.store.edge.shards import close_shard
from bookrag.adapters.store.edge.store import EdgeStore
from bookrag.adapters.store.edge.versions import EdgeVersions
from bookrag.adapters.store.port import BookStore, Fusion, SearchMode, VersionedCollections
from bookrag.config.settings import Settings, get_settings
from bookrag.devtools.cli import app
from bookrag.domain.models import Filters, SparseVector, StoredHit
from bookrag.services.container import container_for
from tests.support.edge import editions_in, write_edition

COLLECTION = "journaled_chunks"


class JournaledStore(EdgeStore):
    """The `BookStore` port of the new backend: counts its searches."""

    def __init__(self, settings: Settings, *, version: str | None = None) -> None:
        super().__init__(settings, version=version)
        self.searches = 0

    def search(self, dense: np.ndarray, sparse: SparseVector, *, mode: SearchMode, limit: int,
               filters: Filters | None = None, rrf_k: int = 60, fusion: Fusion = "rrf") -> list[StoredHit]:
        self.searches += 1
        return super().search(dense, sparse, mode=mode, limit=limit, filters=filters, rrf_k=rrf_k, fusion=fusion)


class JournaledVersions(EdgeVersions):
    """The `VersionedCollections` port of the new backend: journals every switch of the live version."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.switched: list[str] = []

    def atomic_by_default(self) -> bool:
        return True

    def store_for(self, collection: str) -> JournaledStore:
        return JournaledStore(self.settings, version=collection)

    def switch(self, collection: str) -> None:
        super().switch(collection)
        self.switched.append(collection)


def _versions(settings: Settings, process_store: BookStore) -> VersionedCollections:
    return JournaledVersions(settings)


JOURNALED = store.Backend("journaled", lambda s: s.qdrant_collection == COLLECTION, JournaledStore, _versions,
                          network=False)


@pytest.fixture
def journaled(monkeypatch: pytest.MonkeyPatch, use_env: Callable[..., None], tmp_path: Path) -> Iterator[Settings]:
    """The one line that registers the backend, and settings that choose it."""
    monkeypatch.setattr(store, "BACKENDS", (JOURNALED, *store.BACKENDS))
    use_env(QDRANT_PATH=str(tmp_path / "qdrant"), EMBEDDING_PROVIDER="local", QDRANT_COLLECTION=COLLECTION)
    settings = get_settings()
    yield settings
    close_shard(settings)


def test_a_backend_registered_once_is_what_the_container_and_the_cli_use(journaled: Settings,
                                                                          tmp_path: Path) -> None:
    container = container_for(journaled)
    assert type(container.store) is JournaledStore and type(container.versions) is JournaledVersions
    versions = container.versions
    assert isinstance(versions, JournaledVersions)
    cli = CliRunner()

    first = cli.invoke(app, ["ingest", str(write_edition(tmp_path / "v1", "alpha")), "--json"])
    assert first.exit_code == 0, first.output
    alpha = json.loads(first.stdout)["collection"]
    second = cli.invoke(app, ["ingest", str(write_edition(tmp_path / "v2", "beta")), "--json"])
    assert second.exit_code == 0, second.output
    beta = json.loads(second.stdout)["collection"]
    assert json.loads(second.stdout)["switched_from"] == alpha
    rows = json.loads(cli.invoke(app, ["versions", "--json"]).stdout)
    assert [(r["collection"], r["live"]) for r in rows] == [(alpha, False), (beta, True)]
    back = cli.invoke(app, ["rollback", "--json"])
    assert back.exit_code == 0 and json.loads(back.stdout)["to"] == alpha

    assert versions.switched == [alpha, beta, alpha]  # every switch went through the registered backend
    hits = container.retriever.search("How is the robot arm calibrated?").hits
    assert editions_in([h.text for h in hits]) == {"alpha"}
    assert isinstance(container.store, JournaledStore) and container.store.searches > 0
    assert container.reset_network() == [] and container.built("store")  # it said it holds no connection


def test_a_configuration_the_new_backend_does_not_choose_gets_the_one_before(
        journaled: Settings, tmp_path: Path) -> None:
    other = journaled.model_copy(update={"qdrant_collection": "book_chunks"})
    container = container_for(other)

    assert type(container.store) is EdgeStore and type(container.versions) is EdgeVersions
    assert store.backend(other).name == "edge" and store.backend(journaled).name == "journaled"

