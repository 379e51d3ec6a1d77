"""The embedded store's files: where a book's shards live, their sidecar and pointer files, and copies.

Under `QDRANT_PATH/edge/`: a shard is a folder (WAL, mmap segments, HNSW, payload indexes; Qdrant Edge's
own) with a sidecar `<folder>.json` beside it recording the embedder that built it and the book version it
holds (an Edge shard has no collection metadata of its own), and, once the book has versions,
`<collection>.live`, the pointer naming the live one. Sidecars and pointers are replaced in one fsynced
rename (`write_durably`): a reader, or a restart after a power cut, finds the old content or the new.

A shard folder is copied keeping its holes (`copy_shard`): to start a new version from the live one, and
to open a read-only folder (a Lambda layer under /opt, an image, a read-only EFS mount), which cannot hold
the WAL's lock, from a copy in the temporary directory (`writable_copy`).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bookrag import errors
from bookrag.adapters.store.port import version_pattern
from bookrag.observability import logger

if TYPE_CHECKING:
    from bookrag.config.settings import Settings

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


POINTER_SUFFIX = ".live"


def pointer_file(root: Path, collection: str) -> Path:
    """Names the live version of `collection` once it has versions."""
    return root / f"{collection}{POINTER_SUFFIX}"


def meta_file(shard: Path) -> Path:
    return shard.with_name(shard.name + ".json")


def read_meta(shard: Path) -> dict[str, Any]:
    """The shard's sidecar record; empty when missing or unreadable."""
    try:
        return dict(json.loads(meta_file(shard).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return {}


def is_legacy(root: Path) -> bool:
    """qdrant-client's local mode keeps `meta.json` and `collection/<name>/storage.sqlite` in its folder."""
    return (root / "meta.json").is_file() or (root / "collection").is_dir()


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


def writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK) and os.access(folder / "wal", os.W_OK)


def writable_copy(folder: Path) -> Path:
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

