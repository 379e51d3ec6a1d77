"""The store port: what retrieval, ingestion and the book service ask of a vector store.

Two adapters implement it: `edge.EdgeStore` (Qdrant Edge, Qdrant's own engine in-process on a folder:
the default whenever no QDRANT_URL/QDRANT_HOST is set) and `store.VectorStore` (qdrant-client against
Qdrant Cloud or a Qdrant server). Both store the same named vectors (`dense`, cosine; sparse `bm25`
with the IDF modifier), the same payload (`ChunkPayload`), record the embedder that built the index,
and answer the same hybrid query, so every caller is indifferent to which one it holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal, Protocol

import numpy as np

from bookrag import errors
from bookrag.domain.book_version import BookVersion
from bookrag.domain.models import ChunkPayload, Filters, PointRecord, SparseVector, StoredHit

DENSE = "dense"
SPARSE = "bm25"
VERSION_SEPARATOR = "__v"
SearchMode = Literal["hybrid", "dense", "sparse"]
Fusion = Literal["rrf", "dbsf"]


class BookStore(Protocol):
    """One collection of chunks. Reads are thread-safe; one ingest writes at a time."""

    @property
    def collection(self) -> str: ...

    last_version: str | None  # the book version label last read, for health (which makes no call)

    def book_version(self) -> BookVersion | None:
        """The version of the book this store serves (None for an index ingested before versions)."""
        ...

    def set_book_version(self, version: BookVersion) -> None: ...

    def refresh(self) -> None:
        """Forget cached state another writer may have changed (the alias target, the recorded version)."""
        ...

    def copy_files_from(self, source: BookStore, files: Sequence[str], batch_size: int = 128) -> int:
        """Copy `files`' points, as stored, from `source` (a new book version's unchanged files)."""
        ...

    def exists(self) -> bool: ...

    def describe(self) -> dict[str, Any]:
        """Embedder name, dimension and point count, or raise `CollectionMissingError`."""
        ...

    def check_embedder(self, embedder_name: str, dimension: int) -> None:
        """Raise `EmbedderMismatchError` when the index was built by another embedder."""
        ...

    def ensure_collection(self, embedder_name: str, dimension: int) -> bool:
        """Create the collection if missing; True when it was created."""
        ...

    def upsert(self, records: Sequence[PointRecord], batch_size: int = 128) -> None: ...

    def delete_file(self, source_file: str, *, from_index: int = 0) -> None:
        """Delete a file's chunks whose `chunk_index >= from_index` (all of them by default)."""
        ...

    def set_page_number(self, source_file: str, page_number: int) -> None: ...

    def finish_ingest(self) -> None:
        """Called once at the end of an ingest: leave the index compact, searchable and on disk."""
        ...

    def scroll_payloads(self, fields: Sequence[str], source_file: str | None = None) -> Iterable[dict[str, Any]]:
        """The named payload fields of every chunk (of one file, if given), in no particular order."""
        ...

    def manifest(self) -> dict[str, dict[str, Any]]:
        """Per source file: its file hash, page number and chunk count, read from the stored payloads."""
        ...

    def fetch_chunks(self, source_file: str, indices: Sequence[int]) -> list[ChunkPayload]: ...

    def count(self) -> int: ...

    def search(self, dense: np.ndarray, sparse: SparseVector, *, mode: SearchMode, limit: int,
               filters: Filters | None = None, rrf_k: int = 60, fusion: Fusion = "rrf") -> list[StoredHit]:
        """Rank chunks by `mode`; every hit carries its cosine similarity to `dense` (clamped to [0, 1])."""
        ...


def require_embedder(described: dict[str, Any], embedder_name: str, dimension: int) -> None:
    """Raise `EmbedderMismatchError` when the index (`BookStore.describe()`) was built by another embedder."""
    if described["embedder"] != embedder_name or described["dimension"] != dimension:
        raise errors.EmbedderMismatchError(
            f"The book index was built with {described['embedder']} ({described['dimension']} "
            f"dimensions) but the service is configured for {embedder_name} ({dimension}); "
            "re-ingest the book or change EMBEDDING_PROVIDER"
        )


def manifest_of(payloads: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Group stored payloads (`source_file`, `file_hash`, `page_number`, `total_chunks`) per file."""
    files: dict[str, dict[str, Any]] = {}
    for p in payloads:
        entry = files.setdefault(str(p["source_file"]), {"file_hash": p.get("file_hash"),
                                                         "page_number": p.get("page_number"),
                                                         "total_chunks": p.get("total_chunks"),
                                                         "stored": 0})
        entry["stored"] += 1
        if entry["file_hash"] != p.get("file_hash"):
            entry["file_hash"] = None  # mixed versions: a previous ingest was cut short
    return files


MANIFEST_FIELDS = ("source_file", "file_hash", "page_number", "total_chunks")

# Candidates fetched past the limit, so that a tie at the cut is broken by `ranked`, not by the engine.
TIE_MARGIN = 4


def ranked(scores: Sequence[float], vectors: Sequence[Any], ids: Sequence[str], dense: np.ndarray,
           wanted: int) -> list[tuple[int, float]]:
    """(index, cosine) of the `wanted` best points, by the engine's score. Equal scores, common after RRF
    (a chunk ranked r-th by one list ties with another ranked r-th by the other), go to the chunk closer
    to the question's vector, then by id: the engine returns ties in no fixed order, and the closer chunk
    is the better guess (textbook-2: hit@5 0.951 with ties by id, 0.976 with ties by cosine).
    A missing or malformed vector counts as cosine 0."""
    if not scores:
        return []
    width = dense.shape[0]
    # One matrix product for every point's cosine, rather than a dot product per point.
    matrix = np.asarray([v if isinstance(v, list) and len(v) == width else [0.0] * width for v in vectors],
                        dtype=np.float32)
    cosines = matrix @ dense.astype(np.float32, copy=False)
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], -float(cosines[i]), ids[i]))[:wanted]
    return [(i, min(1.0, max(0.0, float(cosines[i])))) for i in order]


def stored_hits(points: Sequence[Any], dense: np.ndarray, wanted: int) -> list[StoredHit]:
    """The `wanted` best of either engine's scored points (`id`, `score`, `vector`, `payload`), ordered by
    `ranked`. Qdrant Edge builds `vector` from its buffers on each access: it is read once per point."""
    vectors = [v.get(DENSE) if isinstance(v := p.vector, dict) else None for p in points]
    best = ranked([p.score for p in points], vectors, [str(p.id) for p in points], dense, wanted)
    return [StoredHit(chunk_id=str(points[i].id), rank_score=float(points[i].score), cosine=cosine,
                      payload=ChunkPayload.from_dict(points[i].payload or {})) for i, cosine in best]


def version_name(alias: str, version: BookVersion) -> str:
    """`<alias>__v20261123T093000123Z_<hash12>`: a book version's collection (remote) or shard folder
    (embedded); sortable by age (to the millisecond), unique per content."""
    stamp = version.ingested_at.replace("-", "").replace(":", "").replace(".", "")
    return f"{alias}{VERSION_SEPARATOR}{stamp}_{version.content_hash[:12]}"


def version_pattern(alias: str) -> re.Pattern[str]:
    """Matches exactly the names `version_name` gives for `alias`."""
    return re.compile(re.escape(alias) + re.escape(VERSION_SEPARATOR) + r"[0-9TZ]+_[0-9a-f]+")
