"""Book versions on the embedded store (Qdrant Edge): shard folders, and a pointer file switched in one rename.

Under `QDRANT_PATH/edge/`, each version is a shard folder `<collection>__v<UTC time>_<hash>/` (the names
`QdrantVersions` gives collections) with its sidecar `<folder>.json`, and `<collection>.live` names the
live one. `switch` writes the new name to a temporary file, syncs it, renames it over the pointer and
syncs the folder: a reader's stat sees the old pointer or the new, never a part, and so does a restart
after a power cut. Readers follow it (`store.EdgeStore`).

A version starts as a copy of the live version's folder, holes kept (`prepare`); the ingest then
updates the copy in place (only changed files are embedded) and optimises it. The live version is
never opened by the publishing process, only copied: its content never changes once published (a
server opening it rewrites a few files with the bytes they held), so the copy is consistent even while
a server holds it, and the server keeps answering all along. A version counts
once its sidecar records its book version, the ingest's last step; a folder without one (an ingest
killed or failed part-way) is never pointed at and is deleted by the next atomic ingest, under the
lock that lets one process change versions at a time (`exclusive`).

The first atomic ingest of a folder ingested in place starts from a copy of the in-place shard, then
points readers at the version and deletes the in-place shard: killed before the switch, the in-place
shard still serves; after it, the version does.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from bookrag import errors
from bookrag.adapters.store.edge.files import (
    POINTER_SUFFIX,
    copy_shard,
    edge_dir,
    has_shard,
    meta_file,
    pointer_file,
    read_meta,
    read_pointer,
    write_durably,
)
from bookrag.adapters.store.edge.shards import flush_shard, retire
from bookrag.adapters.store.edge.store import EdgeStore
from bookrag.adapters.store.port import VERSION_SEPARATOR, version_name, version_pattern
from bookrag.domain.book_version import BookVersion
from bookrag.observability import logger

if TYPE_CHECKING:
    from bookrag.config.settings import Settings

_KEPT_META = ("embedder", "dimension", "engine")


class EdgeVersions:
    """The versions of one collection in a `QDRANT_PATH` (the `VersionedCollections` port)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.alias = settings.qdrant_collection
        self.root = edge_dir(settings)
        self._pattern = version_pattern(self.alias)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A filesystem failure (read-only folder, disk full) as our error, naming the folder."""
        try:
            yield
        except OSError as exc:
            raise errors.StoreFolderError(
                f"The book index at {self.root} cannot be written ({exc.strerror or type(exc).__name__})") from None

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """One process publishes or rolls back at a time (a lock file, released by the kernel if the
        process dies); the half-built versions of an earlier, killed one are deleted first."""
        with self._writing():
            self.root.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.root / f"{self.alias}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise errors.StoreLockedError(
                    f"Another `bookrag ingest --atomic` or `bookrag rollback` is changing the book versions at "
                    f"{self.root}; wait for it to finish and try again") from None
            with self._writing():
                self._delete_leftovers()
            yield
        finally:
            os.close(fd)  # and with it the lock

    # -- the port ----------------------------------------------------------------------------------

    def live(self) -> str | None:
        return read_pointer(pointer_file(self.root, self.alias), self.alias)

    def is_plain_collection(self) -> bool:
        return self.live() is None and has_shard(self.root / self.alias)

    def atomic_by_default(self) -> bool:
        """Once the folder holds versions: an in-place ingest there would write a shard nobody reads."""
        return self.live() is not None

    def versions(self) -> list[str]:
        """Complete versions (their sidecar records a book version), oldest first."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir()
                      if self._pattern.fullmatch(p.name) and self._complete(p))

    def new_name(self, version: BookVersion) -> str:
        return version_name(self.alias, version)

    def store_for(self, collection: str) -> EdgeStore:
        return EdgeStore(self.settings, version=collection)

    def prepare(self, collection: str, source: str, embedder_name: str, dimension: int) -> bool:
        """`collection` becomes a copy of `source`'s folder, its sidecar without a book version (so it is
        no version until the ingest finishes). Nothing is copied when another embedder built `source`:
        nothing in it is reusable, and the ingest embeds every file into a new shard."""
        source_dir, target = self.root / source, self.root / collection
        meta = read_meta(source_dir)
        if (meta.get("embedder"), meta.get("dimension")) != (embedder_name, dimension):
            return True
        in_place = source == self.alias
        if in_place:
            # The in-place shard, unlike a version, may be written by an ingest at any time: it must not
            # be open in another process (its lock), and is flushed before it is copied.
            try:
                if not flush_shard(source_dir):
                    return True
            except errors.StoreLockedError:
                raise errors.StoreLockedError(
                    f"The book index at {source_dir} is open in another process. The first atomic ingest turns "
                    "it into versions and needs it to itself once: stop that process (`bookrag serve`, "
                    "`bookrag mcp`), ingest, start it again; later atomic ingests run beside a server") from None
        with self._writing():
            shutil.rmtree(target, ignore_errors=True)
            write_durably(meta_file(target), json.dumps({k: meta[k] for k in _KEPT_META if k in meta}))
            copy_shard(source_dir, target, durable=True)
        if in_place:
            retire(source_dir)  # its lock released (unless this process serves it): a server may start meanwhile
        return True

    def switch(self, collection: str) -> None:
        """Point readers at `collection` in one rename. This process's handle on it (the ingest's) is
        closed first, so that a server in another process can open it."""
        folder = self.root / collection
        if not self._complete(folder):
            raise errors.StoreError(f"{collection} is not a complete book version")
        retire(folder)
        with self._writing():
            write_durably(pointer_file(self.root, self.alias), collection + "\n")

    def replace_plain(self, collection: str) -> None:
        """Point readers at `collection`, then delete the in-place shard: killed in between, the shard is
        left unread and the next atomic ingest deletes it."""
        self.switch(collection)
        self._delete(self.alias)

    def drop(self, collection: str) -> None:
        if collection == self.live():
            raise errors.StoreError("The live book version cannot be dropped")
        self._delete(collection)

    def book_version(self, collection: str) -> BookVersion | None:
        return BookVersion.from_dict(read_meta(self.root / collection).get("book_version"))

    def names(self) -> list[str]:
        """Every book's pointer (`<name>.live`) and every in-place shard folder in `QDRANT_PATH/edge/`."""
        if not self.root.is_dir():
            return []
        found = set()
        for path in self.root.iterdir():
            if path.name.endswith(POINTER_SUFFIX):
                found.add(path.name.removesuffix(POINTER_SUFFIX))
            elif VERSION_SEPARATOR not in path.name and path.is_dir() and has_shard(path):
                found.add(path.name)
        return sorted(found)

    # -- housekeeping ------------------------------------------------------------------------------

    def _complete(self, folder: Path) -> bool:
        return has_shard(folder) and self.book_version(folder.name) is not None

    def _delete(self, name: str) -> None:
        """Sidecar first, then the folder: a deletion cut short leaves no complete version behind. A
        handle this process still reads it through stays usable until closed (open files outlive their
        names)."""
        folder = self.root / name
        retire(folder)
        with self._writing():
            meta_file(folder).unlink(missing_ok=True)
        shutil.rmtree(folder, ignore_errors=True)

    def _delete_leftovers(self) -> None:
        """What a killed publish leaves: half-built versions, and the in-place shard a migration had
        already replaced."""
        live = self.live()
        ours = {pointer_file(self.root, self.alias).name, meta_file(self.root / self.alias).name}
        names = set()  # a version's folder and its sidecar, once
        for path in list(self.root.iterdir()):
            name = path.name.removesuffix(".tmp")
            if path.name.endswith(".tmp") and (name in ours or self._pattern.fullmatch(name.removesuffix(".json"))):
                path.unlink(missing_ok=True)  # a rename that never happened
            else:
                names.add(name.removesuffix(".json"))
        for name in sorted(names):
            if self._pattern.fullmatch(name) and name != live and not self._complete(self.root / name):
                logger.info("deleting an unfinished book version", extra={"collection": name})
                self._delete(name)
        if live is not None and (meta_file(self.root / self.alias).exists() or (self.root / self.alias).exists()):
            self._delete(self.alias)
