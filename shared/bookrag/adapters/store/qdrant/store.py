"""The remote engine of the store port (`port.BookStore`), over qdrant-client.

Qdrant Cloud or a Qdrant server (`QDRANT_URL` or `QDRANT_HOST`); the embedded store is `edge.store.EdgeStore`.
The client comes from `client.build_client` (lazily: a health check must not import qdrant-client), and
every client error becomes one of our `StoreError`s through `client.translate_qdrant_error`. A test may
hand it a qdrant-client local-mode client (the congruence test's second backend); the service never builds one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np

from bookrag import errors
from bookrag.adapters.retrying import call_with_retries
from bookrag.adapters.store.port import (
    KEYWORD_INDEXES,
    MANIFEST_FIELDS,
    SUGGESTIONS_FIELD,
    BookStore,
    Fusion,
    SearchMode,
    manifest_of,
    require_embedder,
)
from bookrag.adapters.store.qdrant.client import build_client, translate_qdrant_error
from bookrag.adapters.store.vectors import DENSE, SPARSE, TIE_MARGIN, stored_hits
from bookrag.domain.book_version import BookVersion, record_seen, request_pins
from bookrag.domain.models import PAYLOAD_FIELDS, ChunkPayload, Filters, PointRecord, SparseVector, StoredHit

if TYPE_CHECKING:
    from qdrant_client import QdrantClient
    from qdrant_client import models as qm

    from bookrag.config.settings import Settings

T = TypeVar("T")


class VectorStore:
    """Reads and writes chunks of one collection. Thread-safe for concurrent reads."""

    def __init__(self, settings: Settings, client: QdrantClient | None = None, *,
                 collection: str | None = None) -> None:
        self.settings = settings
        # The name readers use: `QDRANT_COLLECTION`, an alias of the live version (or, from before
        # versions, a plain collection). `collection` given: exactly that collection, no alias lookup.
        self.name = collection or settings.qdrant_collection
        self._fixed = collection is not None
        self._client = client
        self._checked: set[tuple[str, str, int]] = set()
        self._lock = threading.Lock()
        self._resolved: tuple[str, float] | None = None
        self._versions: dict[str, tuple[BookVersion | None, float]] = {}
        self.last_version: str | None = None  # the label last read, for health (which makes no call)

    # -- which collection ---------------------------------------------------------------------

    @property
    def collection(self) -> str:
        """The collection this call reads: inside a request scope (`one_version`), the one the alias
        named when the request first touched the store; outside, the alias's current target."""
        if self._fixed:
            return self.name
        pins = request_pins()
        if pins is None:
            return self._resolve()
        pinned = pins.get(self.name)
        if pinned is None:
            pinned = pins[self.name] = self._resolve()
        return pinned

    def _resolve(self) -> str:
        """The alias's target (its own name when it is no alias), cached for QDRANT_ALIAS_TTL_S: a warm
        process sees a switch within that time, and pays one lookup per period, not per request."""
        now = time.monotonic()
        cached = self._resolved
        if cached is not None and now - cached[1] < self.settings.qdrant_alias_ttl_s:
            return cached[0]
        aliases = self._read(lambda: self.client.get_aliases()).aliases
        target = next((a.collection_name for a in aliases if a.alias_name == self.name), self.name)
        self._resolved = (target, now)
        return target

    def refresh(self) -> None:
        """Forget the cached alias target and versions (after this process switched the alias)."""
        self._resolved = None
        self._versions.clear()

    def _version_of(self, collection: str) -> BookVersion | None:
        now = time.monotonic()
        cached = self._versions.get(collection)
        if cached is not None and now - cached[1] < self.settings.qdrant_alias_ttl_s:
            return cached[0]
        try:
            info = self._read(lambda: self.client.get_collection(collection))
        except errors.CollectionMissingError:
            return None
        version = BookVersion.from_dict((info.config.metadata or {}).get("book_version"))
        self._versions[collection] = (version, now)
        if version is not None:
            self.last_version = version.label
        return version

    def book_version(self) -> BookVersion | None:
        """The version of the book this request reads (None for an index ingested before versions); inside
        a request scope it is also what the request's X-Book-Version header says."""
        version = self._version_of(self.collection)
        if version is not None:
            record_seen(self.name, version.label)
        return version

    def set_book_version(self, version: BookVersion) -> None:
        """Record which book this collection holds (its collection metadata)."""
        target = self.collection
        self._write(lambda: self.client.update_collection(target, metadata={"book_version": version.to_dict()}))
        self._versions.pop(target, None)

    @property
    def client(self) -> QdrantClient:
        if self._client is None:
            try:
                self._client = build_client(self.settings)
            except errors.BookRAGError:
                raise
            except Exception as exc:
                raise translate_qdrant_error(exc) from None
        return self._client

    # -- calls ------------------------------------------------------------------------------

    def _read(self, fn: Callable[[], T]) -> T:
        """Reads get one retry on a dropped connection (an idle keep-alive reset by a proxy)."""

        def attempt() -> T:
            try:
                return fn()
            except Exception as exc:
                raise translate_qdrant_error(exc) from None

        return call_with_retries(attempt, attempts=2, max_wait=0.2, retry_timeouts=False)

    def _write(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except Exception as exc:
            raise translate_qdrant_error(exc) from None

    # -- collection -----------------------------------------------------------------------

    def exists(self) -> bool:
        return self._read(lambda: self.client.collection_exists(self.collection))

    def describe(self) -> dict[str, Any]:
        """Embedder name, dimension and point count, or raise `CollectionMissingError`."""
        if not self.exists():
            raise errors.CollectionMissingError()
        info = self._read(lambda: self.client.get_collection(self.collection))
        meta = info.config.metadata or {}
        vectors = info.config.params.vectors
        dense = vectors.get(DENSE) if isinstance(vectors, dict) else None
        return {
            "embedder": meta.get("embedder"),
            "dimension": dense.size if dense else None,
            "points": info.points_count or 0,
        }

    def check_embedder(self, embedder_name: str, dimension: int) -> None:
        """Refuse to search a collection built by another embedder: its scores would be garbage."""
        key = (self.collection, embedder_name, dimension)  # per collection: an alias may move to another
        if key in self._checked:
            return
        with self._lock:
            require_embedder(self.describe(), embedder_name, dimension)
            self._checked.add(key)

    def ensure_collection(self, embedder_name: str, dimension: int) -> bool:
        """Create the collection if missing; return True when it was created."""
        from qdrant_client import models as qm

        if self.exists():
            self.check_embedder(embedder_name, dimension)
            return False
        target = self.collection
        self._write(lambda: self.client.create_collection(
            target,
            vectors_config={DENSE: qm.VectorParams(size=dimension, distance=qm.Distance.COSINE)},
            sparse_vectors_config={SPARSE: qm.SparseVectorParams(modifier=qm.Modifier.IDF)},
            metadata={"embedder": embedder_name, "dimension": dimension},
        ))
        if self.settings.qdrant_remote_url is None:
            return True  # a local-mode test double scans payloads and has no use for (and warns about) indexes
        for name, schema in [*((k, qm.PayloadSchemaType.KEYWORD) for k in KEYWORD_INDEXES),
                             ("chunk_index", qm.PayloadSchemaType.INTEGER)]:
            self._write(partial(self.client.create_payload_index, target, name, schema))
        self._checked.add((target, embedder_name, dimension))
        return True

    # -- writes -----------------------------------------------------------------------------

    def upsert(self, records: Sequence[PointRecord], batch_size: int = 128) -> None:
        from qdrant_client import models as qm

        for start in range(0, len(records), batch_size):
            points = [
                qm.PointStruct(
                    id=r.chunk_id,
                    vector={DENSE: r.dense.tolist(),
                            SPARSE: qm.SparseVector(indices=r.sparse.indices, values=r.sparse.values)},
                    payload=r.payload.to_dict(),
                )
                for r in records[start : start + batch_size]
            ]
            self._write(partial(self.client.upsert, self.collection, points=points, wait=True))

    def copy_files_from(self, source: BookStore, files: Sequence[str], batch_size: int = 128) -> int:
        """Copy these files' points (vectors and payloads, as stored) from `source`: an unchanged file
        costs no embedding in a new version. Returns the number of points copied."""
        from qdrant_client import models as qm

        if not isinstance(source, VectorStore):  # versions are collections of one Qdrant server
            raise errors.ConfigError("A book version can only be copied from the same Qdrant server")

        copied = 0
        for start in range(0, len(files), 64):
            flt = qm.Filter(must=[qm.FieldCondition(key="source_file",
                                                    match=qm.MatchAny(any=list(files[start:start + 64])))])
            offset = None
            while True:
                points, offset = source._read(partial(
                    source.client.scroll, source.collection, scroll_filter=flt, limit=batch_size, offset=offset,
                    with_payload=True, with_vectors=True))
                if points:
                    batch = [qm.PointStruct(id=p.id, vector=cast(Any, p.vector or {}), payload=p.payload)
                             for p in points]
                    self._write(partial(self.client.upsert, self.collection, points=batch, wait=True))
                    copied += len(batch)
                if offset is None:
                    break
        return copied

    def delete_file(self, source_file: str, *, from_index: int = 0) -> None:
        """Delete a file's chunks whose `chunk_index >= from_index` (all of them by default)."""
        from qdrant_client import models as qm

        must: list[qm.Condition] = [qm.FieldCondition(key="source_file", match=qm.MatchValue(value=source_file))]
        if from_index:
            must.append(qm.FieldCondition(key="chunk_index", range=qm.Range(gte=from_index)))
        self._write(lambda: self.client.delete(
            self.collection, points_selector=qm.FilterSelector(filter=qm.Filter(must=must)), wait=True))

    def set_page_number(self, source_file: str, page_number: int) -> None:
        self._set_on_file(source_file, {"page_number": page_number})

    def set_page_suggestions(self, source_file: str, questions: Sequence[str]) -> None:
        self._set_on_file(source_file, {SUGGESTIONS_FIELD: list(questions)})

    def _set_on_file(self, source_file: str, payload: dict[str, Any]) -> None:
        from qdrant_client import models as qm

        flt = qm.Filter(must=[qm.FieldCondition(key="source_file", match=qm.MatchValue(value=source_file))])
        self._write(lambda: self.client.set_payload(self.collection, payload=payload, points=flt, wait=True))

    # -- reads ------------------------------------------------------------------------------

    def finish_ingest(self) -> None:
        """Nothing to do: a server optimises and persists by itself."""

    def scroll_payloads(self, fields: Sequence[str], source_file: str | None = None) -> Iterable[dict[str, Any]]:
        from qdrant_client import models as qm

        flt = qm.Filter(must=[qm.FieldCondition(key="source_file", match=qm.MatchValue(value=source_file))]) \
            if source_file else None
        return self._scroll(fields, flt)

    def _scroll(self, fields: Sequence[str], flt: qm.Filter | None = None) -> Iterable[dict[str, Any]]:
        offset = None
        while True:
            points, offset = self._read(partial(
                self.client.scroll, self.collection, scroll_filter=flt, limit=512, offset=offset,
                with_payload=list(fields),
                with_vectors=False))
            for point in points:
                yield dict(point.payload or {})
            if offset is None:
                return

    def manifest(self) -> dict[str, dict[str, Any]]:
        """Per source file: its file hash, page number and chunk count, read from the stored payloads."""
        return manifest_of(self.scroll_payloads(MANIFEST_FIELDS))

    def fetch_chunks(self, source_file: str, indices: Sequence[int]) -> list[ChunkPayload]:
        from qdrant_client import models as qm

        flt = qm.Filter(must=[
            qm.FieldCondition(key="source_file", match=qm.MatchValue(value=source_file)),
            qm.FieldCondition(key="chunk_index", match=qm.MatchAny(any=list(indices))),
        ])
        chunks = [ChunkPayload.from_dict(p) for p in self._scroll(PAYLOAD_FIELDS, flt)]
        return sorted(chunks, key=lambda c: c.chunk_index)

    def count(self) -> int:
        return int(self._read(lambda: self.client.count(self.collection, exact=True)).count)

    def search(self, dense: np.ndarray, sparse: SparseVector, *, mode: SearchMode, limit: int,
               filters: Filters | None = None, rrf_k: int = 60, fusion: Fusion = "rrf") -> list[StoredHit]:
        """Rank chunks by `mode`; every hit also carries its cosine similarity to `dense`.

        Hybrid mode runs in Qdrant's Query API, one round trip: a dense and a BM25 prefetch of `limit`
        candidates each, fused by reciprocal rank (`rrf`, constant `rrf_k`) or by distribution-based
        score fusion (`dbsf`). Only Query API features are used, so the
        embedded store and a Qdrant server answer alike. A query with no indexable term falls back to
        dense. Filters apply inside each prefetch, before ranking, so a filtered search still returns up
        to `limit` hits.
        """
        from qdrant_client import models as qm

        flt = _to_filter(filters)
        sparse_q = qm.SparseVector(indices=sparse.indices, values=sparse.values)
        dense_q = dense.tolist()
        wanted, limit = limit, limit + TIE_MARGIN
        if mode == "dense" or (mode == "hybrid" and not sparse.indices):
            call = lambda: self.client.query_points(  # noqa: E731
                self.collection, query=dense_q, using=DENSE, limit=limit, query_filter=flt,
                with_payload=True, with_vectors=[DENSE])
        elif mode == "sparse":
            if not sparse.indices:
                return []
            call = lambda: self.client.query_points(  # noqa: E731
                self.collection, query=sparse_q, using=SPARSE, limit=limit, query_filter=flt,
                with_payload=True, with_vectors=[DENSE])
        else:
            fused: qm.Query = qm.RrfQuery(rrf=qm.Rrf(k=rrf_k)) if fusion == "rrf" \
                else qm.FusionQuery(fusion=qm.Fusion.DBSF)
            call = lambda: self.client.query_points(  # noqa: E731
                self.collection,
                prefetch=[qm.Prefetch(query=dense_q, using=DENSE, limit=wanted, filter=flt),
                          qm.Prefetch(query=sparse_q, using=SPARSE, limit=wanted, filter=flt)],
                query=fused, limit=limit, with_payload=True, with_vectors=[DENSE])
        points = self._read(call).points
        return stored_hits(points, dense, wanted)


def _to_filter(filters: Filters | None) -> qm.Filter | None:
    from qdrant_client import models as qm

    if not filters:
        return None
    must: list[qm.Condition] = [qm.FieldCondition(key=name, match=qm.MatchValue(value=value))
                                for name, value in filters.matches()]
    return qm.Filter(must=must)
