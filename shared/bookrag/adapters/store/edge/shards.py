"""The process's open shards: one handle per shard folder, shared by every `EdgeStore`, leased per call.

An open shard holds a lock on its WAL, so a second handle fails, in this process or another. For the
in-place shard the rule is one writer *or* one server: `bookrag ingest` against a folder a running
`bookrag serve` holds is refused with `StoreLockedError`, naming the folder and what to do, and a server
asked to search while an ingest holds it answers that error until the ingest ends (a failed open is not
cached). Versions lift the rule: a version is written only while it is built, by the one publishing
process, which reads the live version through a copy, so a server keeps answering while an atomic
ingest builds the next version beside it.

Readers follow the pointer (`follow`): one stat per call notices a switch, and the next call opens the
new version. A handle is leased by every call running on it and by every request pinned to it; a version
that is no longer live is closed when its last lease ends (`retire`), which releases its lock and memory.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from bookrag import errors
from bookrag.adapters.store.edge.files import (
    edge_dir,
    has_shard,
    pointer_file,
    read_pointer,
    writable,
    writable_copy,
)
from bookrag.adapters.store.port import version_pattern
from bookrag.adapters.store.vectors import DENSE, SPARSE
from bookrag.observability import logger

if TYPE_CHECKING:
    import qdrant_edge as qe

    from bookrag.config.settings import Settings


class Shard:
    """The process's one handle on a shard folder, opened lazily; writes take `write_lock`."""

    def __init__(self, folder: Path, opened_at: Path, shard: qe.EdgeShard) -> None:
        self.folder = folder  # as configured: what error messages name
        self.opened_at = opened_at  # where it is open (a copy in /tmp when `folder` is read-only)
        self.shard = shard
        self.write_lock = threading.Lock()
        self.dirty = False
        self.closed = False
        self.leases = 0  # calls running on it, and requests pinned to it (under `registry_lock`)
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


_registry: dict[Path, Shard] = {}
# Guards the registry, the leases and the pointers followed; held while a shard opens or closes, so a
# folder is never opened while this process still holds its lock.
registry_lock = threading.RLock()
# pointer file -> (its stat when last read, the version it named)
_followed: dict[Path, tuple[tuple[int, int, int] | None, str]] = {}


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


def open_shard(folder: Path, create: Callable[[], qe.EdgeConfig] | None = None) -> Shard | None:
    """The process's handle on `folder`: opened on first use, created when `create` is given and the
    folder holds no shard yet. None when there is no shard and nothing to create."""
    key = _key(folder)
    with registry_lock:
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
                if not writable(folder):
                    opened_at = writable_copy(folder)
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
        handle = Shard(folder, opened_at, shard)
        _registry[key] = handle
        return handle


def shard_config(dimension: int) -> qe.EdgeConfig:
    """A new shard's vectors: the named vectors both Qdrant engines store."""
    import qdrant_edge as qe

    return qe.EdgeConfig(
        vectors={DENSE: qe.EdgeVectorParams(size=dimension, distance=qe.Distance.Cosine)},
        sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
    )


def _discard(handle: Shard) -> None:
    """Close `handle`, and forget it unless its folder has a newer one (under `registry_lock`)."""
    key = _key(handle.folder)
    if _registry.get(key) is handle:
        del _registry[key]
    handle.close()


def release(handle: Shard) -> None:
    """End one lease; a retired handle closes with its last one."""
    with registry_lock:
        handle.leases -= 1
        if handle.leases == 0 and handle.retired:
            _discard(handle)


def retire(folder: Path) -> None:
    """This process no longer reads `folder` as live: close its handle now if nothing uses it, else when
    its last lease ends (a request still reading the version it started on)."""
    with registry_lock:
        handle = _registry.get(_key(folder))
        if handle is None:
            return
        handle.retired = True
        if handle.leases == 0:
            _discard(handle)


@contextmanager
def engine_errors(what: str) -> Iterator[None]:
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
    handle = open_shard(folder)
    if handle is None:
        return False
    with handle.write_lock, engine_errors("flush"):
        handle.shard.flush()
    return True



def follow(root: Path, collection: str) -> str:
    """The shard readers of `collection` use now: the version the pointer names, else the in-place
    shard. One stat per call; a changed pointer is read again and the version it left is retired."""
    pointer = pointer_file(root, collection)
    with registry_lock:
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
    with registry_lock:
        mine = [key for key in _registry
                if key.parent == root and (key.name == settings.qdrant_collection or pattern.fullmatch(key.name))]
        handles = [_registry.pop(key) for key in mine]
        _followed.pop(pointer_file(edge_dir(settings), settings.qdrant_collection), None)
    for handle in handles:
        handle.close()


@atexit.register
def _close_all() -> None:
    with registry_lock:
        handles = list(_registry.values())
        _registry.clear()
        _followed.clear()
    for handle in handles:
        with contextlib.suppress(Exception):  # interpreter teardown: nothing left to report to
            handle.close()

