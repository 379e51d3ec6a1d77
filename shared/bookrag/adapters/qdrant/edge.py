"""The embedded store: Qdrant Edge, Qdrant's own Rust engine in-process, on a folder (`QDRANT_PATH`).

Layout under `QDRANT_PATH/edge/`: a shard is a folder (WAL, mmap segments, HNSW, payload indexes) with a
sidecar `<folder>.json` beside it recording the embedder that built it and the book version it holds (an
Edge shard has no collection metadata of its own). The sidecar is written before the shard is created,
atomically, so a shard never exists without it.

- `<collection>/`: the book as an incremental (in-place) ingest keeps it, the default.
- `<collection>__v<time>_<hash>/`: one book version each, built by `bookrag ingest --atomic`
  (`edge_versions.EdgeVersions`), and `<collection>.live`, the pointer naming the live one, replaced in one
  atomic rename. Once the pointer exists readers follow it and nothing reads `<collection>/` again.

One handle per shard and process. An open shard holds a lock on its WAL, so a second handle fails, in
this process or another; every `EdgeStore` of a process shares the process's handle (`_open`). For the
in-place shard the rule is one writer *or* one server: `bookrag ingest` against a folder a running
`bookrag serve` holds is refused with `StoreLockedError`, naming the folder and what to do, and a server
asked to search while an ingest holds it answers that error until the ingest ends (a failed open is not
cached). Versions lift the rule: a version is written only while it is built, by the one publishing
process, which reads the live version through a copy, so a server keeps answering while an atomic
ingest builds the next version beside it.

Readers follow the pointer (`_follow`): one stat per call notices a switch, and the next call opens the
new version. A request reads one version from start to end: inside `domain.book_version.one_version` the
first call pins the version and leases its handle until the request ends. A version that is no longer
live is closed when its last lease ends (`_retire`), which releases its lock and memory.

Crash safety comes from the shard's write-ahead log: every update is logged before it is applied, a
process killed mid-ingest reopens with everything logged so far, and the ingest's manifest (file hashes
in the payloads) sees the half-written files and redoes them. `finish_ingest` optimises (merges segments,
builds HNSW above the indexing threshold) and flushes. A version killed while it was built is never
pointed at, and the next atomic ingest deletes it.

A read-only folder (a Lambda layer under /opt, an image, a read-only EFS mount) cannot hold the WAL's
lock: the shard readers use (the live version of a versioned folder) is copied once per process to the
temporary directory and opened there (`_writable_copy`).

A folder written by an earlier bookrag (qdrant-client's local mode: `meta.json`, `collection/`) is
detected and refused with `StaleStoreError` ("re-ingest"); an ingest into the same folder builds the
Edge shard beside it.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache, partial
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
    require_embedder,
    stored_hits,
    version_pattern,
)
from bookrag.domain.book_version import BookVersion, hold_until_scope_ends, record_seen, request_pins
from bookrag.domain.models import PAYLOAD_FIELDS, ChunkPayload, Filters, PointRecord, SparseVector, StoredHit
from bookrag.observability import logger

if TYPE_CHECKING:
    import qdrant_edge as qe

    from bookrag.config.settings import Settings

T = TypeVar("T")
_SCROLL_PAGE = 1024
_COPIES = "bookrag-edge"
_COPY_CHUNK = 1 << 20
_ENGINE_TEMPORARY = ".atomicwrite"  # Qdrant's write-then-rename files


def edge_dir(settings: Settings) -> Path:
    return settings.qdrant_path / "edge"


def shard_dir(settings: Settings) -> Path:
    """The in-place shard (an incremental ingest's)."""
    return edge_dir(settings) / settings.qdrant_collection


def has_shard(folder: Path) -> bool:
    """Whether `folder` holds a shard: Qdrant Edge writes its config when it creates one."""
    return (folder / "edge_config.json").is_file()


def pointer_file(root: Path, collection: str) -> Path:
    """Names the live version of `collection` once it has versions."""
    return root / f"{collection}.live"


def meta_file(shard: Path) -> Path:
    return shard.with_name(shard.name + ".json")


def read_meta(shard: Path) -> dict[str, Any]:
    """The shard's sidecar record; empty when missing or unreadable."""
    try:
        return dict(json.loads(meta_file(shard).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return {}


def _legacy(root: Path) -> bool:
    """qdrant-client's local mode keeps `meta.json` and `collection/<name>/storage.sqlite` in its folder."""
    return (root / "meta.json").is_file() or (root / "collection").is_dir()


# -- files ------------------------------------------------------------------------------------------------


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # a filesystem that cannot sync a directory: the rename is as durable as it gets
        pass
    finally:
        os.close(fd)


def write_durably(path: Path, text: str) -> None:
    """Replace `path` by `text` in one rename, on disk before it returns: a reader (or a restart after a
    power cut) finds the old content or the new one, never a part."""
    staging = path.with_name(path.name + ".tmp")
    with open(staging, "w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    os.replace(staging, path)
    _fsync_dir(path.parent)


def _data_ranges(fd: int, size: int) -> Iterator[tuple[int, int]]:
    """The parts of a file that hold data; a hole (never written) reads as zeros and is skipped."""
    if not hasattr(os, "SEEK_DATA"):
        yield 0, size
        return
    offset = 0
    while offset < size:
        try:
            start = os.lseek(fd, offset, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # nothing but a hole up to the end
                return
            if offset == 0:  # the filesystem cannot tell: copy it all
                yield 0, size
                return
            raise
        end = os.lseek(fd, start, os.SEEK_HOLE)
        yield start, end
        offset = end


def _copy_file(source: Path, target: Path, durable: bool) -> int:
    """Bytes of data copied (holes excluded)."""
    copied = 0
    with open(source, "rb") as fin, open(target, "wb") as fout:
        size = os.fstat(fin.fileno()).st_size
        for start, end in _data_ranges(fin.fileno(), size):
            fin.seek(start)
            fout.seek(start)
            left = end - start
            while left > 0:
                chunk = fin.read(min(_COPY_CHUNK, left))
                if not chunk:
                    break
                fout.write(chunk)
                left -= len(chunk)
                copied += len(chunk)
        fout.truncate(size)
        if durable:
            fout.flush()
            os.fsync(fout.fileno())
    return copied


def copy_shard(source: Path, target: Path, *, durable: bool) -> int:
    """Copy a shard folder keeping its holes: Qdrant Edge preallocates its mmap files sparsely (a
    2,000-chunk shard holds ~14 MB in ~190 MB of file lengths), and a plain copy would write every zero.
    `durable`: each file and folder is on disk before it returns.

    The source may be open in another process: opening or closing a shard rewrites a few files with the
    bytes they held, some through a temporary file renamed over them. Those temporary files are skipped,
    and one that is gone by the time it is read is too. Returns the bytes of data copied."""
    folders = []
    copied = 0
    for here, _, names in os.walk(source):
        into = target / Path(here).relative_to(source)
        into.mkdir(parents=True, exist_ok=True)
        folders.append(into)
        for name in names:
            if name.startswith(_ENGINE_TEMPORARY):
                continue
            try:
                copied += _copy_file(Path(here) / name, into / name, durable)
            except FileNotFoundError:
                if not name.startswith("."):
                    raise
    if durable:
        for folder in reversed(folders):
            _fsync_dir(folder)
        _fsync_dir(target.parent)
    return copied


# -- handles ----------------------------------------------------------------------------------------------


class _Shard:
    """The process's one handle on a shard folder, opened lazily; writes take `write_lock`."""

    def __init__(self, folder: Path, opened_at: Path, shard: qe.EdgeShard) -> None:
        self.folder = folder  # as configured: what error messages name
        self.opened_at = opened_at  # where it is open (a copy in /tmp when `folder` is read-only)
        self.shard = shard
        self.write_lock = threading.Lock()
        self.dirty = False
        self.closed = False
        self.leases = 0  # calls running on it, and requests pinned to it (under `_registry_lock`)
        self.retired = False  # no longer the live version: closed when its last lease ends

    def close(self) -> None:
        with self.write_lock:
            if not self.closed:
                self.closed = True
                try:
                    self.shard.close()
                except Exception as exc:  # a retired version's folder may be gone: nothing is lost, nothing to do
                    logger.warning("closing the embedded book index failed",
                                   extra={"error_type": type(exc).__name__})


_registry: dict[Path, _Shard] = {}
# Guards the registry, the leases and the pointers followed; held while a shard opens or closes, so a
# folder is never opened while this process still holds its lock.
_registry_lock = threading.RLock()
# pointer file -> (its stat when last read, the version it named)
_followed: dict[Path, tuple[tuple[int, int, int] | None, str]] = {}


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK) and os.access(folder / "wal", os.W_OK)


def _writable_copy(folder: Path) -> Path:
    """A copy of a read-only shard under the temporary directory (/tmp on Lambda), made once per path.

    Copied to a fresh name, then renamed into place: a copy cut short by a crash is never reused.
    """
    digest = hashlib.sha256(str(folder).encode()).hexdigest()[:16]
    target = Path(tempfile.gettempdir()) / _COPIES / digest / folder.name
    if has_shard(target) and meta_file(target).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".copy-", dir=target.parent))
    copied = copy_shard(folder, staging / folder.name, durable=False)
    has_meta = meta_file(folder).is_file()
    if has_meta:
        shutil.copyfile(meta_file(folder), staging / meta_file(folder).name)
    shutil.rmtree(target, ignore_errors=True)
    os.replace(staging / folder.name, target)
    if has_meta:
        os.replace(staging / meta_file(folder).name, meta_file(target))
    shutil.rmtree(staging, ignore_errors=True)
    logger.info("read-only book index copied to the temporary directory", extra={"bytes": copied})
    return target


def _locked(folder: Path) -> errors.StoreLockedError:
    return errors.StoreLockedError(
        f"The book index at {folder} is open in another process (a running `bookrag serve`, `bookrag mcp` "
        "or another `bookrag ingest`); one process at a time may open it: stop that process and try again"
    )


@lru_cache(maxsize=256)
def _key(folder: Path) -> Path:
    """The registry's key for `folder`: its resolved path (two spellings of a folder share one handle).
    Cached: every store call looks its handle up, and resolving costs a system call per path part."""
    return folder.resolve()


def _open(folder: Path, create: Callable[[], qe.EdgeConfig] | None = None) -> _Shard | None:
    """The process's handle on `folder`: opened on first use, created when `create` is given and the
    folder holds no shard yet. None when there is no shard and nothing to create."""
    key = _key(folder)
    with _registry_lock:
        handle = _registry.get(key)
        if handle is not None and not handle.closed:
            return handle
        import qdrant_edge as qe

        present = has_shard(folder)
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
            raise errors.StoreFolderError(f"The book index at {folder} cannot be read or copied") from None
        except Exception as exc:
            if "WouldBlock" in str(exc) or "lock" in str(exc).lower():
                raise _locked(folder) from None
            logger.warning("the embedded book index did not open", extra={"error_type": type(exc).__name__})
            raise errors.StoreError(f"The book index at {folder} could not be opened; re-ingest the book") from None
        handle = _Shard(folder, opened_at, shard)
        _registry[key] = handle
        return handle


def _discard(handle: _Shard) -> None:
    """Close `handle`, and forget it unless its folder has a newer one (under `_registry_lock`)."""
    key = _key(handle.folder)
    if _registry.get(key) is handle:
        del _registry[key]
    handle.close()


def _release(handle: _Shard) -> None:
    """End one lease; a retired handle closes with its last one."""
    with _registry_lock:
        handle.leases -= 1
        if handle.leases == 0 and handle.retired:
            _discard(handle)


def retire(folder: Path) -> None:
    """This process no longer reads `folder` as live: close its handle now if nothing uses it, else when
    its last lease ends (a request still reading the version it started on)."""
    with _registry_lock:
        handle = _registry.get(_key(folder))
        if handle is None:
            return
        handle.retired = True
        if handle.leases == 0:
            _discard(handle)


@contextmanager
def _engine_errors(what: str) -> Iterator[None]:
    """The engine's own exceptions as our `StoreError` (logged by type only: its text may name paths);
    ours pass through."""
    try:
        yield
    except errors.BookRAGError:
        raise
    except Exception as exc:
        logger.warning(f"embedded book index {what} failed", extra={"error_type": type(exc).__name__})
        raise errors.StoreError() from None


def flush_shard(folder: Path) -> bool:
    """Open `folder`'s shard (this process's handle, or a new one: `StoreLockedError` when another process
    holds it) and write everything it holds to disk; False when there is no shard."""
    handle = _open(folder)
    if handle is None:
        return False
    with handle.write_lock, _engine_errors("flush"):
        handle.shard.flush()
    return True


def read_pointer(pointer: Path, collection: str) -> str | None:
    """The version the pointer names; None when there is no pointer."""
    try:
        name = pointer.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except OSError:
        raise errors.StoreFolderError(f"The book index at {pointer.parent} cannot be read") from None
    if not version_pattern(collection).fullmatch(name):
        raise errors.StoreFolderError(f"The live-version pointer {pointer} names no version of this book; "
                                "re-ingest the book with `bookrag ingest --atomic`")
    return name


def _follow(root: Path, collection: str) -> str:
    """The shard readers of `collection` use now: the version the pointer names, else the in-place
    shard. One stat per call; a changed pointer is read again and the version it left is retired."""
    pointer = pointer_file(root, collection)
    with _registry_lock:
        try:
            st = os.stat(pointer)
            stamp: tuple[int, int, int] | None = (st.st_ino, st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            stamp = None
        except OSError:
            raise errors.StoreFolderError(f"The book index at {root} cannot be read") from None
        known = _followed.get(pointer)
        if known is not None and known[0] == stamp:
            return known[1]
        live = (read_pointer(pointer, collection) if stamp is not None else None) or collection
        if known is not None and known[1] != live:
            retire(root / known[1])
            logger.info("book version switched", extra={"collection": collection, "live": live})
        again = _registry.get(_key(root / live))
        if again is not None:
            again.retired = False  # rolled back to a version a request was still reading
        _followed[pointer] = (stamp, live)
        return live


def close_shard(settings: Settings) -> None:
    """Release this process's handles on the settings' book (the in-place shard and every version, and
    their locks), flushing them first."""
    root = _key(edge_dir(settings))
    pattern = version_pattern(settings.qdrant_collection)
    with _registry_lock:
        mine = [key for key in _registry
                if key.parent == root and (key.name == settings.qdrant_collection or pattern.fullmatch(key.name))]
        handles = [_registry.pop(key) for key in mine]
        _followed.pop(pointer_file(edge_dir(settings), settings.qdrant_collection), None)
    for handle in handles:
        handle.close()


@atexit.register
def _close_all() -> None:
    with _registry_lock:
        handles = list(_registry.values())
        _registry.clear()
        _followed.clear()
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

    def _lease(self, name: str) -> _Shard:
        handle = _open(self.root / name)
        if handle is None:
            if _legacy(self.settings.qdrant_path):
                raise errors.StaleStoreError(
                    f"The book index at {self.settings.qdrant_path} was written by an earlier bookrag "
                    "(qdrant-client's local mode), which this version no longer reads; re-ingest the book "
                    "(`bookrag ingest <docs>`)"
                )
            raise errors.CollectionMissingError()
        handle.leases += 1
        return handle

    def _checkout(self) -> _Shard:
        """A lease on the shard this call reads; `_release` gives it back. Inside a request scope
        (`one_version`) the first call pins the live shard and leases it until the scope ends, and every
        later call of the request reads that one, even after a switch."""
        with _registry_lock:
            if self._fixed is not None:
                return self._lease(self._fixed)
            pins = request_pins()
            pinned = pins.get(self.name) if pins is not None else None
            if pinned is not None:
                return self._lease(pinned)
            live = _follow(self.root, self.name)
            handle = self._lease(live)
            if pins is not None and hold_until_scope_ends(partial(_release, handle)):
                handle.leases += 1
                pins[self.name] = live
            return handle

    @property
    def collection(self) -> str:
        """The shard this call reads (`_checkout`): a version's folder name, or `QDRANT_COLLECTION`."""
        return self.client.folder.name

    @property
    def client(self) -> _Shard:
        """The process's handle on the shard this call reads (shared by every store naming it)."""
        handle = self._checkout()
        _release(handle)
        return handle

    def _call(self, fn: Callable[[qe.EdgeShard], T]) -> T:
        handle = self._checkout()
        try:
            with _engine_errors("call"):
                return fn(handle.shard)
        finally:
            _release(handle)

    def _write(self, fn: Callable[[qe.EdgeShard], None]) -> None:
        handle = self._checkout()
        try:
            with handle.write_lock:
                handle.dirty = True
                with _engine_errors("write"):
                    fn(handle.shard)
        finally:
            _release(handle)

    # -- collection ---------------------------------------------------------------------------

    def _metadata(self, handle: _Shard) -> dict[str, Any]:
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
            _release(handle)
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
            _release(handle)

    def refresh(self) -> None:
        """Forget the cached sidecar records (another store object of this process rewrote one)."""
        self._meta.clear()

    def copy_files_from(self, source: BookStore, files: Sequence[str], batch_size: int = 128) -> int:
        # An Edge version starts as a copy of the live shard's folder (`EdgeVersions.prepare`), which is
        # cheaper than copying its points one by one and needs no handle on a shard a server holds.
        raise errors.ConfigError("An embedded book version is copied whole from the live one, not point by point")

    def exists(self) -> bool:
        try:
            _release(self._checkout())
        except errors.StoreLockedError:
            raise
        except errors.StoreError:
            return False
        return True

    def describe(self) -> dict[str, Any]:
        handle = self._checkout()
        try:
            with _engine_errors("call"):
                meta = self._metadata(handle)
                points = handle.shard.info().points_count
        finally:
            _release(handle)
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
        if _open(folder) is not None:
            self.check_embedder(embedder_name, dimension)
            return False
        if _legacy(self.settings.qdrant_path):
            logger.warning("an index from an earlier bookrag (qdrant-client local mode) is in this folder; "
                           "building the new one beside it (the old files can be deleted)")
        folder.parent.mkdir(parents=True, exist_ok=True)
        write_durably(meta_file(folder), json.dumps({"embedder": embedder_name, "dimension": dimension,
                                                     "engine": "qdrant-edge"}))
        self._meta.pop(folder.name, None)
        handle = _open(folder, create=lambda: _config(dimension))
        assert handle is not None
        import qdrant_edge as qe

        def indexes(shard: qe.EdgeShard) -> None:
            for name, schema in (("source_file", qe.PayloadSchemaType.Keyword),
                                 ("module_name", qe.PayloadSchemaType.Keyword),
                                 ("chunk_index", qe.PayloadSchemaType.Integer)):
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
        import qdrant_edge as qe

        flt = qe.Filter(must=[_match("source_file", source_file)])
        self._write(lambda s: s.update(qe.UpdateOperation.set_payload_by_filter(flt, {"page_number": page_number})))

    def finish_ingest(self) -> None:
        """Optimise (merge segments, build HNSW where a segment is large enough) and flush, when this
        process wrote anything: an unchanged re-ingest costs nothing here."""
        handle = self._checkout()
        try:
            with handle.write_lock:
                if not handle.dirty:
                    return
                with _engine_errors("optimise"):
                    handle.shard.optimize()
                    handle.shard.flush()
                handle.dirty = False
        finally:
            _release(handle)

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
                with _engine_errors("call"):
                    records, offset = _scroll_page(request, handle.shard)
                for record in records:
                    yield dict(record.payload or {})
                if offset is None:
                    return
        finally:
            _release(handle)

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
        return stored_hits(found, dense, wanted)
