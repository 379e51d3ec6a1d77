"""The embedded store: Qdrant Edge, Qdrant's own Rust engine in-process, on a folder (`QDRANT_PATH`).

Layout under `QDRANT_PATH`: `edge/<collection>/` is the shard (WAL, mmap segments, HNSW, payload
indexes) and `edge/<collection>.json` records the embedder that built it (an Edge shard has no
collection metadata of its own). It is written before the shard is created, atomically, so a shard never
exists without it.

One process, one handle. An open shard holds a lock on its WAL, so a second handle fails, in this
process or another. Within a process every `EdgeStore` naming the same folder shares one handle
(`_open`); across processes the rule is one writer *or* one server: `bookrag ingest` against a folder a
running `bookrag serve` holds is refused with `StoreLockedError`, naming the folder and what to do, and a
server asked to search while an ingest holds the folder answers 503 until the ingest ends, then opens it
(a failed open is not cached). Chosen over copy-on-write generations: a book is re-ingested rarely and
in seconds, and one handle is what keeps the shard's WAL the single source of truth.

Crash safety comes from the shard's write-ahead log: every update is logged before it is applied, a
process killed mid-ingest reopens with everything logged so far, and the ingest's manifest (file hashes
in the payloads) sees the half-written files and redoes them. `finish_ingest` optimises (merges segments,
builds HNSW above the indexing threshold) and flushes.

A read-only folder (a Lambda layer under /opt, an image, a read-only EFS mount) cannot hold the WAL's
lock: it is copied once per process to the temporary directory and opened there (`_writable_copy`).

A folder written by an earlier bookrag (qdrant-client's local mode: `meta.json`, `collection/`) is
detected and refused with `StaleStoreError` ("re-ingest"); an ingest into the same folder builds the
Edge shard beside it.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from bookrag import errors
from bookrag.adapters.qdrant.port import (
    DENSE,
    MANIFEST_FIELDS,
    SPARSE,
    TIE_MARGIN,
    BookStore,
    Fusion,
    SearchMode,
    manifest_of,
    ranked,
    require_embedder,
)
from bookrag.domain.book_version import BookVersion, record_seen
from bookrag.domain.models import PAYLOAD_FIELDS, ChunkPayload, Filters, PointRecord, SparseVector, StoredHit
from bookrag.observability import logger

if TYPE_CHECKING:
    import qdrant_edge as qe

    from bookrag.config.settings import Settings

T = TypeVar("T")
_SCROLL_PAGE = 1024
_COPIES = "bookrag-edge"


def shard_dir(settings: Settings) -> Path:
    return settings.qdrant_path / "edge" / settings.qdrant_collection


def _meta_file(shard: Path) -> Path:
    return shard.with_name(shard.name + ".json")


def _legacy(root: Path) -> bool:
    """qdrant-client's local mode keeps `meta.json` and `collection/<name>/storage.sqlite` in its folder."""
    return (root / "meta.json").is_file() or (root / "collection").is_dir()


class _Shard:
    """The process's one handle on a shard folder, opened lazily; writes take `write_lock`."""

    def __init__(self, folder: Path, opened_at: Path, shard: qe.EdgeShard) -> None:
        self.folder = folder  # as configured: what error messages name
        self.opened_at = opened_at  # where it is open (a copy in /tmp when `folder` is read-only)
        self.shard = shard
        self.write_lock = threading.Lock()
        self.dirty = False
        self.closed = False

    def close(self) -> None:
        with self.write_lock:
            if not self.closed:
                self.closed = True
                self.shard.close()


_registry: dict[Path, _Shard] = {}
_registry_lock = threading.Lock()


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK) and os.access(folder / "wal", os.W_OK)


def _writable_copy(folder: Path) -> Path:
    """A copy of a read-only shard under the temporary directory (/tmp on Lambda), made once per path.

    Copied to a fresh name, then renamed into place: a copy cut short by a crash is never reused.
    """
    digest = hashlib.sha256(str(folder).encode()).hexdigest()[:16]
    target = Path(tempfile.gettempdir()) / _COPIES / digest / folder.name
    if (target / "edge_config.json").is_file() and _meta_file(target).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".copy-", dir=target.parent))
    shutil.copytree(folder, staging / folder.name, copy_function=shutil.copyfile)
    if _meta_file(folder).is_file():
        shutil.copyfile(_meta_file(folder), staging / _meta_file(folder).name)
    shutil.rmtree(target, ignore_errors=True)
    os.replace(staging / folder.name, target)
    if (staging / _meta_file(folder).name).is_file():
        os.replace(staging / _meta_file(folder).name, _meta_file(target))
    shutil.rmtree(staging, ignore_errors=True)
    logger.info("read-only book index copied to the temporary directory", extra={"bytes": _size(target)})
    return target


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _locked(folder: Path) -> errors.StoreLockedError:
    return errors.StoreLockedError(
        f"The book index at {folder} is open in another process (a running `bookrag serve`, `bookrag mcp` "
        "or another `bookrag ingest`); one process at a time may open it: stop that process and try again"
    )


def _open(folder: Path, create: Callable[[], qe.EdgeConfig] | None = None) -> _Shard | None:
    """The process's handle on `folder`: opened on first use, created when `create` is given and the
    folder holds no shard yet. None when there is no shard and nothing to create."""
    key = folder.resolve()
    with _registry_lock:
        handle = _registry.get(key)
        if handle is not None and not handle.closed:
            return handle
        import qdrant_edge as qe

        present = (folder / "edge_config.json").is_file()
        if not present and create is None:
            return None
        opened_at = folder
        try:
            if present:
                if not _writable(folder):
                    opened_at = _writable_copy(folder)
                shard = qe.EdgeShard.load(str(opened_at))
            else:
                assert create is not None
                config = create()
                # An earlier create killed half-way leaves a folder without `edge_config.json`.
                shutil.rmtree(folder, ignore_errors=True)
                folder.parent.mkdir(parents=True, exist_ok=True)
                shard = qe.EdgeShard.create(str(folder), config)
        except OSError:
            raise errors.StoreConnectionError(f"The book index at {folder} cannot be read or copied") from None
        except Exception as exc:
            if "WouldBlock" in str(exc) or "lock" in str(exc).lower():
                raise _locked(folder) from None
            logger.warning("the embedded book index did not open", extra={"error_type": type(exc).__name__})
            raise errors.StoreError(f"The book index at {folder} could not be opened; re-ingest the book") from None
        handle = _Shard(folder, opened_at, shard)
        _registry[key] = handle
        return handle


def close_shard(settings: Settings) -> None:
    """Release this process's handle on the settings' folder (and its lock), flushing it first."""
    with _registry_lock:
        handle = _registry.pop(shard_dir(settings).resolve(), None)
    if handle is not None:
        handle.close()


@atexit.register
def _close_all() -> None:
    with _registry_lock:
        handles = list(_registry.values())
        _registry.clear()
    for handle in handles:
        with contextlib.suppress(Exception):  # interpreter teardown: nothing left to report to
            handle.close()


def _apply(operation: qe.UpdateOperation, shard: qe.EdgeShard) -> None:
    shard.update(operation)


def _scroll_page(request: qe.ScrollRequest, shard: qe.EdgeShard) -> tuple[list[qe.Record], Any]:
    return shard.scroll(request)


def _config(dimension: int) -> qe.EdgeConfig:
    import qdrant_edge as qe

    return qe.EdgeConfig(
        vectors={DENSE: qe.EdgeVectorParams(size=dimension, distance=qe.Distance.Cosine)},
        sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
    )


def _match(key: str, value: str) -> qe.FieldCondition:
    import qdrant_edge as qe

    return qe.FieldCondition(key=key, match=qe.MatchValue(value))


def _to_filter(filters: Filters | None) -> qe.Filter | None:
    import qdrant_edge as qe

    if not filters:
        return None
    must: list[Any] = []
    if filters.module_name:
        must.append(_match("module_name", filters.module_name))
    if filters.source_file:
        must.append(_match("source_file", filters.source_file))
    return qe.Filter(must=must)


class EdgeStore:
    """The `BookStore` port on a Qdrant Edge shard. Thread-safe: reads run concurrently (the engine
    releases the GIL), writes are serialised."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.collection = settings.qdrant_collection
        self.folder = shard_dir(settings)
        self._checked: tuple[str, int] | None = None
        self._meta: dict[str, Any] | None = None
        self.last_version: str | None = None

    # -- the handle ---------------------------------------------------------------------------

    def _handle(self) -> _Shard:
        handle = _open(self.folder)
        if handle is None:
            if _legacy(self.settings.qdrant_path):
                raise errors.StaleStoreError(
                    f"The book index at {self.settings.qdrant_path} was written by an earlier bookrag "
                    "(qdrant-client's local mode), which this version no longer reads; re-ingest the book "
                    "(`bookrag ingest <docs>`)"
                )
            raise errors.CollectionMissingError()
        return handle

    @property
    def client(self) -> _Shard:
        """The process's handle on the folder (shared by every store naming it)."""
        return self._handle()

    def _call(self, fn: Callable[[qe.EdgeShard], T]) -> T:
        handle = self._handle()
        try:
            return fn(handle.shard)
        except errors.BookRAGError:
            raise
        except Exception as exc:
            logger.warning("embedded book index call failed", extra={"error_type": type(exc).__name__})
            raise errors.StoreError() from None

    def _write(self, fn: Callable[[qe.EdgeShard], None]) -> None:
        handle = self._handle()
        with handle.write_lock:
            handle.dirty = True
            try:
                fn(handle.shard)
            except Exception as exc:
                logger.warning("embedded book index write failed", extra={"error_type": type(exc).__name__})
                raise errors.StoreError() from None

    # -- collection ---------------------------------------------------------------------------

    def _metadata(self) -> dict[str, Any]:
        if self._meta is None:
            handle = self._handle()
            meta = _meta_file(handle.opened_at)
            try:
                self._meta = dict(json.loads(meta.read_text()))
            except (OSError, ValueError):
                self._meta = {}
        return self._meta

    def book_version(self) -> BookVersion | None:
        """The book this shard holds, as the ingest that built it recorded it in the sidecar file."""
        version = BookVersion.from_dict(self._metadata().get("book_version"))
        if version is not None:
            self.last_version = version.label
            record_seen(self.collection, version.label)
        return version

    def set_book_version(self, version: BookVersion) -> None:
        meta = _meta_file(self.folder)
        staging = meta.with_name(meta.name + ".tmp")
        staging.write_text(json.dumps({**self._metadata(), "book_version": version.to_dict()}))
        os.replace(staging, meta)  # atomic: a reader sees the old record or the new one
        self._meta = None

    def refresh(self) -> None:
        """Forget the cached sidecar record (another store object of this process rewrote it)."""
        self._meta = None

    def copy_files_from(self, source: BookStore, files: Sequence[str], batch_size: int = 128) -> int:
        # Book versions are collections behind a Qdrant alias: a remote store's (`ingestion.versions`).
        raise errors.ConfigError("Book versions need a remote store (QDRANT_URL or QDRANT_HOST)")

    def exists(self) -> bool:
        try:
            return _open(self.folder) is not None
        except errors.StoreLockedError:
            raise
        except errors.StoreError:
            return False

    def describe(self) -> dict[str, Any]:
        meta = self._metadata()
        points = self._call(lambda s: s.info().points_count)
        return {"embedder": meta.get("embedder"), "dimension": meta.get("dimension"), "points": int(points)}

    def check_embedder(self, embedder_name: str, dimension: int) -> None:
        if self._checked == (embedder_name, dimension):
            return
        require_embedder(self.describe(), embedder_name, dimension)
        self._checked = (embedder_name, dimension)

    def ensure_collection(self, embedder_name: str, dimension: int) -> bool:
        if _open(self.folder) is not None:
            self.check_embedder(embedder_name, dimension)
            return False
        if _legacy(self.settings.qdrant_path):
            logger.warning("an index from an earlier bookrag (qdrant-client local mode) is in this folder; "
                           "building the new one beside it (the old files can be deleted)")
        meta = _meta_file(self.folder)
        meta.parent.mkdir(parents=True, exist_ok=True)
        staging = meta.with_name(meta.name + ".tmp")
        staging.write_text(json.dumps({"embedder": embedder_name, "dimension": dimension,
                                       "engine": "qdrant-edge"}))
        os.replace(staging, meta)
        self._meta = None
        handle = _open(self.folder, create=lambda: _config(dimension))
        assert handle is not None
        import qdrant_edge as qe

        def indexes(shard: qe.EdgeShard) -> None:
            for name, schema in (("source_file", qe.PayloadSchemaType.Keyword),
                                 ("module_name", qe.PayloadSchemaType.Keyword),
                                 ("chunk_index", qe.PayloadSchemaType.Integer)):
                shard.update(qe.UpdateOperation.create_field_index(name, schema))

        self._write(indexes)
        self._checked = (embedder_name, dimension)
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
        import qdrant_edge as qe

        flt = qe.Filter(must=[_match("source_file", source_file)])
        self._write(lambda s: s.update(qe.UpdateOperation.set_payload_by_filter(flt, {"page_number": page_number})))

    def finish_ingest(self) -> None:
        """Optimise (merge segments, build HNSW where a segment is large enough) and flush, when this
        process wrote anything: an unchanged re-ingest costs nothing here."""
        handle = self._handle()
        with handle.write_lock:
            if not handle.dirty:
                return
            try:
                handle.shard.optimize()
                handle.shard.flush()
            except Exception as exc:
                logger.warning("embedded book index optimise failed", extra={"error_type": type(exc).__name__})
                raise errors.StoreError() from None
            handle.dirty = False

    # -- reads --------------------------------------------------------------------------------

    def scroll_payloads(self, fields: Sequence[str], source_file: str | None = None) -> Iterable[dict[str, Any]]:
        import qdrant_edge as qe

        flt = qe.Filter(must=[_match("source_file", source_file)]) if source_file else None
        yield from self._scroll(list(fields), flt)

    def _scroll(self, fields: list[str], flt: qe.Filter | None) -> Iterable[dict[str, Any]]:
        import qdrant_edge as qe

        offset: Any = None
        while True:
            request = qe.ScrollRequest(offset=offset, limit=_SCROLL_PAGE, filter=flt, with_payload=fields,
                                       with_vector=False)
            records, offset = self._call(partial(_scroll_page, request))
            for record in records:
                yield dict(record.payload or {})
            if offset is None:
                return

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
        """As `store.VectorStore.search`: one Query API call; dense and BM25 prefetches of `limit`
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
        # `vector` is built from the engine's buffers on each access: read it once per point.
        vectors = [v.get(DENSE) if isinstance(v := p.vector, dict) else None for p in found]
        best = ranked([p.score for p in found], vectors, [str(p.id) for p in found], dense, wanted)
        return [StoredHit(chunk_id=str(found[i].id), rank_score=float(found[i].score), cosine=cosine,
                          payload=ChunkPayload.from_dict(found[i].payload or {})) for i, cosine in best]
