"""Qdrant Edge and the remote adapter agree, on the same book: top results, filters, counts and deletes.

No Qdrant server runs here, so the remote adapter (`store.VectorStore`, over qdrant-client) is given
qdrant-client's local mode, the one other engine that speaks the same API in-process. It is a test
double only: the service never builds it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from bookrag.adapters.store.edge.shards import close_shard
from bookrag.adapters.store.edge.store import EdgeStore
from bookrag.adapters.store.port import BookStore
from bookrag.adapters.store.qdrant.store import VectorStore
from bookrag.config.settings import Settings, load_settings
from bookrag.domain.models import ChunkPayload, Filters, SparseVector
from bookrag.ingestion.ingestor import Ingestor
from bookrag.services.container import container_for
from tests.support.edge import CHAPTER, write_book

QUESTIONS = [
    "What is the zero moment point in bipedal walking?",
    "What are Denavit-Hartenberg parameters?",
    "What is the difference between form closure and force closure?",
    "How do vision-language-action models turn actions into tokens?",
    "Where must a robot step to come to a stop?",
    "inverse kinematics Jacobian singularity",
]


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Settings, EdgeStore, VectorStore]]:
    from qdrant_client import QdrantClient

    root = tmp_path_factory.mktemp("congruence")
    docs = write_book(root)
    settings = load_settings(qdrant_path=root / "qdrant", embedding_provider="local")
    embedder = container_for(settings).embedder
    edge = EdgeStore(settings)
    client = QdrantClient(path=str(root / "local-mode"))
    remote = VectorStore(settings, client)
    for store in (edge, remote):
        report = Ingestor(settings, embedder, store).run(docs)
        assert report.chunks_total > 20 and not report.skipped
    yield settings, edge, remote
    close_shard(settings)
    client.close()


def same_time(payload: ChunkPayload) -> ChunkPayload:
    """The payload without its ingest time (each store was filled by its own ingest)."""
    return replace(payload, created_at=0.0)


def ids(store: BookStore, vector: Any, limit: int = 5, filters: Filters | None = None) -> list[str]:
    return [h.chunk_id for h in store.search(vector, SparseVector([], []), mode="dense", limit=limit,
                                             filters=filters)]


def test_dense_queries_return_the_same_top_results_with_the_same_cosines(
        stores: tuple[Settings, EdgeStore, VectorStore]) -> None:
    settings, edge, remote = stores
    embedder = container_for(settings).embedder
    for question in QUESTIONS:
        vector = embedder.embed_query(question)
        edge_hits = edge.search(vector, SparseVector([], []), mode="dense", limit=5)
        remote_hits = remote.search(vector, SparseVector([], []), mode="dense", limit=5)
        assert [h.chunk_id for h in edge_hits] == [h.chunk_id for h in remote_hits], question
        assert [round(h.cosine, 4) for h in edge_hits] == [round(h.cosine, 4) for h in remote_hits]
        assert [same_time(h.payload) for h in edge_hits] == [same_time(h.payload) for h in remote_hits]


def test_filters_counts_manifest_and_neighbours_agree(stores: tuple[Settings, EdgeStore, VectorStore]) -> None:
    settings, edge, remote = stores
    vector = container_for(settings).embedder.embed_query(QUESTIONS[0])
    assert edge.count() == remote.count()
    assert edge.manifest() == remote.manifest()
    assert edge.describe() == remote.describe()
    source_file = f"{CHAPTER}/kinematics.md"
    for filters in (Filters(source_file=source_file), Filters(module_name=edge_module(edge)),
                    Filters(module_name="no such module")):
        assert ids(edge, vector, 8, filters) == ids(remote, vector, 8, filters)
    assert list(map(same_time, edge.fetch_chunks(source_file, [0, 1, 2]))) \
        == list(map(same_time, remote.fetch_chunks(source_file, [0, 1, 2])))
    assert sorted(map(str, edge.scroll_payloads(("chunk_id",), source_file))) \
        == sorted(map(str, remote.scroll_payloads(("chunk_id",), source_file)))


def edge_module(store: BookStore) -> str:
    return str(next(iter(store.scroll_payloads(("module_name",))))["module_name"])


def test_deletes_agree(stores: tuple[Settings, EdgeStore, VectorStore], tmp_path: Path) -> None:
    settings, edge, remote = stores
    vector = container_for(settings).embedder.embed_query(QUESTIONS[1])
    for store in (edge, remote):
        store.delete_file(f"{CHAPTER}/vla.md")
        store.delete_file(f"{CHAPTER}/kinematics.md", from_index=2)
    assert edge.count() == remote.count()
    assert edge.manifest() == remote.manifest()
    assert f"{CHAPTER}/vla.md" not in edge.manifest()
    assert edge.manifest()[f"{CHAPTER}/kinematics.md"]["stored"] == 2
    assert ids(edge, vector, 10) == ids(remote, vector, 10)
