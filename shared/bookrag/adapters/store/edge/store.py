"""The embedded store: Qdrant Edge, Qdrant's own Rust engine in-process, on a folder (`QDRANT_PATH`).

Under `QDRANT_PATH/edge/` (`files`): `<collection>/` is the book as an incremental (in-place) ingest keeps it, the
default (its sidecar written before the shard, so a shard never exists without it); `<collection>__v<time>_<hash>/`
are book versions (`bookrag ingest --atomic`, `versions`), and `<collection>.live` names the live one; once it
exists readers follow it and never read `<collection>/`.

Every `EdgeStore` of a process shares the process's handle on a shard (`shards`). A request reads one version from
start to end: inside `domain.book_version.one_version` the first call pins it and leases its handle. Crash safety
comes from the shard's write-ahead log: every update is logged before it is applied, a process killed mid-ingest
reopens with everything logged so far, and the ingest's manifest (file hashes in the payloads) sees the half-written
files and redoes them. `finish_ingest` optimises (merges segments, builds HNSW above the indexing threshold) and
flushes. A version killed while it was built is never pointed at, and the next atomic ingest deletes it. A folder of
an earlier bookrag (qdrant-client's local mode) is refused with `StaleStoreError` ("re-ingest"); an ingest builds the
shard beside it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from bookrag import errors
from bookrag.adapters.store.edge.files import (
    edge_dir,
    is_legacy,
    meta_file,
    pointer_file,
    read_meta,
    read_pointer,
    write_durably,
)
from bookrag.adapters.store.edge.shards import (
    Shard,
    engine_errors,
    follow,
    open_shard,
    registry_lock,
    release,
    shard_config,
)
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
from bookrag.adapters.store.vectors import DENSE, SPARSE, TIE_MARGIN, stored_hits
from bookrag.domain.book_version import BookVersion, hold_until_scope_ends, record_seen, request_pins
from bookrag.domain.models import PAYLOAD_FIELDS, ChunkPayload, Filters, PointRecord, SparseVector, StoredHit
from bookrag.observability import logger

if TYPE_CHECKING:
    import qdrant_edge as qe

    from bookrag.config.settings import Settings

T = TypeVar("T")
_SCROLL_PAGE = 1024


def _apply(operation: qe.UpdateOperation, shard: qe.EdgeShard) -> None:
    shard.update(operation)


def _scroll_page(request: qe.ScrollRequest, shard: qe.EdgeShard) -> tuple[list[qe.Record], Any]:
    return shard.scroll(request)


def _match(key: str, value: str) -> qe.FieldCondition:
    import qdrant_edge as qe

    return qe.FieldCondition(key=key, match=qe.MatchValue(value))


def _to_filter(filters: Filters | None) -> qe.Filter | None:
    import qdrant_edge as qe

    if not filters:
        return None
    must: list[Any] = [_match(name, value) for name, value in filters.matches()]
    return qe.Filter(must=must)


class EdgeStore:
    """The `BookStore` port on Qdrant Edge. Thread-safe: reads run concurrently (the engine releases the
    GIL), writes are serialised.

    Without `version` it serves the book as readers see it: the live version when the folder has
    versions, else the in-place shard. With `version` (a shard folder's name: a version, or the in-place
    shard's `QDRANT_COLLECTION`) it reads and writes exactly that shard: an atomic ingest building it.
    """

    def __init__(self, settings: Settings, *, version: str | None = None) -> None:
        self.settings = settings
        self.name = settings.qdrant_collection  # what readers ask for; pins and stamps are keyed by it
        self.root = edge_dir(settings)
        self._fixed = version
        self._checked: set[tuple[str, str, int]] = set()
        self._meta: dict[str, dict[str, Any]] = {}
        self.last_version: str | None = None

    # -- the handle ---------------------------------------------------------------------------

    @property
    def folder(self) -> Path:
        """The in-place shard, or the version this store is fixed to (what an ingest writes)."""
        return self.root / (self._fixed or self.name)

    def _lease(self, name: str) -> Shard:
        handle = open_shard(self.root / name)
        if handle is None:
            if is_legacy(self.settings.qdrant_path):
                raise errors.StaleStoreError(
                    f"The book index at {self.settings.qdrant_path} was written by an earlier bookrag "
                    "(qdrant-client's local mode), which this version no longer reads; re-ingest the book "
                    "(`bookrag ingest <docs>`)"
                )
            raise errors.CollectionMissingError()
        handle.leases += 1
        return handle

    def _checkout(self) -> Shard:
        """A lease on the shard this call reads; `release` gives it back. Inside a request scope
        (`one_version`) the first call pins the live shard and leases it until the scope ends, and every
        later call of the request reads that one, even after a switch."""
        with registry_lock:
            if self._fixed is not None:
                return self._lease(self._fixed)
            pins = request_pins()
            pinned = pins.get(self.name) if pins is not None else None
            if pinned is not None:
                return self._lease(pinned)
            live = follow(self.root, self.name)
            handle = self._lease(live)
            if pins is not None and hold_until_scope_ends(partial(release, handle)):
                handle.leases += 1
                pins[self.name] = live
            return handle

    @property
    def collection(self) -> str:
        """The shard this call reads (`_checkout`): a version's folder name, or `QDRANT_COLLECTION`."""
        return self.client.folder.name

    @property
    def client(self) -> Shard:
        """The process's handle on the shard this call reads (shared by every store naming it)."""
        handle = self._checkout()
        release(handle)
        return handle

    def _call(self, fn: Callable[[qe.EdgeShard], T]) -> T:
        handle = self._checkout()
        try:
            with engine_errors("call"):
                return fn(handle.shard)
        finally:
            release(handle)

    def _write(self, fn: Callable[[qe.EdgeShard], None]) -> None:
        handle = self._checkout()
        try:
            with handle.write_lock:
                handle.dirty = True
                with engine_errors("write"):
                    fn(handle.shard)
        finally:
            release(handle)

    # -- collection ---------------------------------------------------------------------------

    def _metadata(self, handle: Shard) -> dict[str, Any]:
        name = handle.folder.name
        meta = self._meta.get(name)
        if meta is None:
            meta = self._meta[name] = read_meta(handle.opened_at)
        return meta

    def book_version(self) -> BookVersion | None:
        """The book the shard this call reads holds, as the ingest that built it recorded it."""
        handle = self._checkout()
        try:
            version = BookVersion.from_dict(self._metadata(handle).get("book_version"))
        finally:
            release(handle)
        if version is not None:
            self.last_version = version.label
            record_seen(self.name, version.label)
        return version

    def set_book_version(self, version: BookVersion) -> None:
        handle = self._checkout()
        try:
            record = {**self._metadata(handle), "book_version": version.to_dict()}
            write_durably(meta_file(handle.folder), json.dumps(record))  # a reader sees the old or the new
            self._meta.pop(handle.folder.name, None)
        finally:
            release(handle)

    def refresh(self) -> None:
        """Forget the cached sidecar records (another store object of this process rewrote one)."""
        self._meta.clear()

    def copy_files_from(self, source: BookStore, files: Sequence[str], batch_size: int = 128) -> int:
        # An Edge version starts as a copy of the live shard's folder (`EdgeVersions.prepare`), which is
        # cheaper than copying its points one by one and needs no handle on a shard a server holds.
        raise errors.ConfigError("An embedded book version is copied whole from the live one, not point by point")

    def exists(self) -> bool:
        try:
            release(self._checkout())
        except errors.StoreLockedError:
            raise
        except errors.StoreError:
            return False
        return True

    def describe(self) -> dict[str, Any]:
        handle = self._checkout()
        try:
            with engine_errors("call"):
                meta = self._metadata(handle)
                points = handle.shard.info().points_count
        finally:
            release(handle)
        return {"embedder": meta.get("embedder"), "dimension": meta.get("dimension"), "points": int(points)}

    def check_embedder(self, embedder_name: str, dimension: int) -> None:
        key = (self.collection, embedder_name, dimension)  # per shard: the live one may be another version
        if key in self._checked:
            return
        require_embedder(self.describe(), embedder_name, dimension)
        self._checked.add(key)

    def ensure_collection(self, embedder_name: str, dimension: int) -> bool:
        if self._fixed is None and read_pointer(pointer_file(self.root, self.name), self.name) is not None:
            raise errors.ConfigError(
                f"The book index at {self.settings.qdrant_path} holds book versions (`bookrag ingest --atomic` "
                "made them): ingest with --atomic, the default for it; readers never see the in-place shard "
                "again"
            )
        folder = self.folder
        if open_shard(folder) is not None:
            self.check_embedder(embedder_name, dimension)
            return False
        if is_legacy(self.settings.qdrant_path):
            logger.warning("an index from an earlier bookrag (qdrant-client local mode) is in this folder; "
                           "building the new one beside it (the old files can be deleted)")
        folder.parent.mkdir(parents=True, exist_ok=True)
        write_durably(meta_file(folder), json.dumps({"embedder": embedder_name, "dimension": dimension,
                                                     "engine": "qdrant-edge"}))
        self._meta.pop(folder.name, None)
        handle = open_shard(folder, create=lambda: shard_config(dimension))
        assert handle is not None
        import qdrant_edge as qe

        def indexes(shard: qe.EdgeShard) -> None:
            for name, schema in [*((k, qe.PayloadSchemaType.Keyword) for k in KEYWORD_INDEXES),
                                 ("chunk_index", qe.PayloadSchemaType.Integer)]:
                shard.update(qe.UpdateOperation.create_field_index(name, schema))

        self._write(indexes)
        self._checked.add((folder.name, embedder_name, dimension))
        return True

    # -- writes -------------------------------------------------------------------------------

    def upsert(self, records: Sequence[PointRecord], batch_size: int = 256) -> None:
        import qdrant_edge as qe

        for start in range(0, len(records), batch_size):
            points = [
                qe.Point(id=r.chunk_id,
                         vector={DENSE: r.dense.tolist(), SPARSE: qe.SparseVector(r.sparse.indices, r.sparse.values)},
                         payload=r.payload.to_dict())
                for r in records[start: start + batch_size]
            ]
            self._write(partial(_apply, qe.UpdateOperation.upsert_points(points)))

    def delete_file(self, source_file: str, *, from_index: int = 0) -> None:
        import qdrant_edge as qe

        must: list[Any] = [_match("source_file", source_file)]
        if from_index:
            must.append(qe.FieldCondition(key="chunk_index", range=qe.RangeFloat(gte=float(from_index))))
        self._write(lambda s: s.update(qe.UpdateOperation.delete_points_by_filter(qe.Filter(must=must))))

    def set_page_number(self, source_file: str, page_number: int) -> None:
        self._set_on_file(source_file, {"page_number": page_number})

    def set_page_suggestions(self, source_file: str, questions: Sequence[str]) -> None:
        self._set_on_file(source_file, {SUGGESTIONS_FIELD: list(questions)})

    def _set_on_file(self, source_file: str, payload: dict[str, Any]) -> None:
        import qdrant_edge as qe
        flt = qe.Filter(must=[_match("source_file", source_file)])
        self._write(lambda s: s.update(qe.UpdateOperation.set_payload_by_filter(flt, payload)))

    def finish_ingest(self) -> None:
        """Optimise (merge segments, build HNSW where a segment is large enough) and flush, when this
        process wrote anything: an unchanged re-ingest costs nothing here."""
        handle = self._checkout()
        try:
            with handle.write_lock:
                if not handle.dirty:
                    return
                with engine_errors("optimise"):
                    handle.shard.optimize()
                    handle.shard.flush()
                handle.dirty = False
        finally:
            release(handle)

    # -- reads --------------------------------------------------------------------------------

    def scroll_payloads(self, fields: Sequence[str], source_file: str | None = None) -> Iterable[dict[str, Any]]:
        import qdrant_edge as qe

        flt = qe.Filter(must=[_match("source_file", source_file)]) if source_file else None
        yield from self._scroll(list(fields), flt)

    def _scroll(self, fields: list[str], flt: qe.Filter | None) -> Iterable[dict[str, Any]]:
        import qdrant_edge as qe

        # Every page from one shard, leased until the last: a switch between pages must not mix versions.
        handle = self._checkout()
        try:
            offset: Any = None
            while True:
                request = qe.ScrollRequest(offset=offset, limit=_SCROLL_PAGE, filter=flt, with_payload=fields,
                                           with_vector=False)
                with engine_errors("call"):
                    records, offset = _scroll_page(request, handle.shard)
                for record in records:
                    yield dict(record.payload or {})
                if offset is None:
                    return
        finally:
            release(handle)

    def manifest(self) -> dict[str, dict[str, Any]]:
        return manifest_of(self.scroll_payloads(MANIFEST_FIELDS))

    def fetch_chunks(self, source_file: str, indices: Sequence[int]) -> list[ChunkPayload]:
        import qdrant_edge as qe

        flt = qe.Filter(must=[_match("source_file", source_file),
                              qe.FieldCondition(key="chunk_index", match=qe.MatchAny([int(i) for i in indices]))])
        chunks = [ChunkPayload.from_dict(p) for p in self._scroll(list(PAYLOAD_FIELDS), flt)]
        return sorted(chunks, key=lambda c: c.chunk_index)

    def count(self) -> int:
        import qdrant_edge as qe

        return int(self._call(lambda s: s.count(qe.CountRequest(exact=True))))

    def search(self, dense: np.ndarray, sparse: SparseVector, *, mode: SearchMode, limit: int,
               filters: Filters | None = None, rrf_k: int = 60, fusion: Fusion = "rrf") -> list[StoredHit]:
        """As `qdrant.store.VectorStore.search`: one Query API call; dense and BM25 prefetches of `limit`
        candidates each, filtered inside each prefetch, fused by RRF (`rrf_k`) or DBSF."""
        import qdrant_edge as qe

        flt = _to_filter(filters)
        dense_q = dense.tolist()
        wanted, limit = limit, limit + TIE_MARGIN
        if mode == "dense" or (mode == "hybrid" and not sparse.indices):
            request = qe.QueryRequest(limit=limit, query=qe.Query.Nearest(dense_q, using=DENSE), filter=flt,
                                      with_payload=True, with_vector=[DENSE])
        elif mode == "sparse":
            if not sparse.indices:
                return []
            request = qe.QueryRequest(limit=limit,
                                      query=qe.Query.Nearest(qe.SparseVector(sparse.indices, sparse.values),
                                                             using=SPARSE),
                                      filter=flt, with_payload=True, with_vector=[DENSE])
        else:
            fused: Any = qe.Fusion.Rrf(k=rrf_k) if fusion == "rrf" else qe.Fusion.Dbsf()
            request = qe.QueryRequest(
                limit=limit, query=fused, with_payload=True, with_vector=[DENSE],
                prefetches=[qe.Prefetch(limit=wanted, query=qe.Query.Nearest(dense_q, using=DENSE), filter=flt),
                            qe.Prefetch(limit=wanted, filter=flt,
                                        query=qe.Query.Nearest(qe.SparseVector(sparse.indices, sparse.values),
                                                               using=SPARSE))])
        found = self._call(lambda s: s.query(request))
        return stored_hits(found, dense, wanted)

