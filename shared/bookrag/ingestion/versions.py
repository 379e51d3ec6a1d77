"""Book versions: build the new book beside the live one, switch in one step, roll back in one command.

`publish` is `bookrag ingest --atomic` (the default for a remote store): a new collection, filled from
the docs (unchanged files copied from the live version, as stored, so only changed files are
embedded), recording its `BookVersion`, then the alias moved to it in one request. Until that request
every reader gets the old book; after it, the new one; a request that started before keeps reading the
collection it began with (`domain.book_version.one_version`), which is why the replaced version is
kept. The version before it is dropped. An ingest that fails part-way drops its own half-built
collection and leaves the live book untouched.

`rollback` moves the alias back to the kept version.

The engine stays behind `VersionedCollections`: `adapters.qdrant.aliases.QdrantVersions` implements it
with Qdrant's aliases (server, Cloud, or embedded local mode); another engine implements the same
seven methods.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from bookrag.errors import DocumentError, NoVersionError
from bookrag.ingestion.ingestor import Ingestor, IngestReport, Progress
from bookrag.observability import logger

if TYPE_CHECKING:
    from bookrag.adapters.embedders import CachedEmbedder
    from bookrag.adapters.qdrant.store import VectorStore
    from bookrag.config.settings import Settings
    from bookrag.domain.book_version import BookVersion



class VersionedCollections(Protocol):
    """What an engine provides for versions: named collections, and one pointer that readers follow."""

    alias: str

    def live(self) -> str | None: ...

    def is_plain_collection(self) -> bool: ...

    def versions(self) -> list[str]: ...

    def new_name(self, version: BookVersion) -> str: ...

    def store_for(self, collection: str) -> VectorStore: ...

    def switch(self, collection: str) -> None: ...

    def drop(self, collection: str) -> None: ...

    def book_version(self, collection: str) -> BookVersion | None: ...


@dataclass(frozen=True, slots=True)
class VersionInfo:
    collection: str
    live: bool
    book_version: BookVersion | None


def publish(settings: Settings, embedder: CachedEmbedder, collections: VersionedCollections, root: Path,
            progress: Progress | None = None) -> IngestReport:
    """Ingest `root` as a new version and switch readers to it. Raises `DocumentError` when the folder
    holds no readable document (a wrong path must not publish an empty book), and `StoreError`s."""
    report = IngestReport()
    if not root.is_dir():
        raise DocumentError(f"Not a folder: {root.name}")
    live = collections.live()
    plain = live is None and collections.is_plain_collection()
    seed_name = live or (collections.alias if plain else None)
    seed = collections.store_for(seed_name) if seed_name else None
    loader = Ingestor(settings, embedder, seed or collections.store_for(collections.alias), progress)
    files = loader.load(root, report)
    if not files:
        raise DocumentError("No readable document in the docs folder: nothing was published")
    version = loader.version_of(files, root)
    current = collections.book_version(live) if live else None
    if current is not None and current.content_hash == version.content_hash:
        # The same book: no new collection, no switch (a push that changed no doc costs nothing).
        report.files_seen = len(files) + len(report.skipped)
        report.files_unchanged = len(files)
        report.book_version, report.collection = current, live
        return report

    name = collections.new_name(version)
    target = collections.store_for(name)
    try:
        Ingestor(settings, embedder, target, progress, seed=seed).ingest(files, report, version)
    except BaseException:
        _drop_quietly(collections, name)  # the live book was never touched
        raise
    if plain:
        # From before versions: the alias's name is a collection. Dropping it and creating the alias are
        # two requests, the one moment of this migration (milliseconds) when readers find no book.
        logger.warning("replacing the plain collection by an alias", extra={"collection": collections.alias})
        collections.drop(collections.alias)
        collections.switch(name)
    else:
        try:
            collections.switch(name)
        except BaseException:
            _drop_quietly(collections, name)  # readers still have the live version
            raise
    report.switched_from = live
    report.collection = name
    for old in collections.versions():
        if old not in (name, live):
            _drop_quietly(collections, old)
            report.dropped.append(old)
    return report


def rollback(collections: VersionedCollections, to: str | None = None) -> tuple[str, str]:
    """Point readers at the kept version before the live one (or at `to`, one of the versions).
    Returns (from, to). Raises `NoVersionError` when there is none."""
    live = collections.live()
    kept = collections.versions()
    if live is None:
        raise NoVersionError("The book is not versioned yet: ingest it with --atomic first")
    if to is not None:
        if to not in kept or to == live:
            raise NoVersionError("Not a kept version of this book (see `bookrag versions`)")
        target = to
    else:
        earlier = [v for v in kept if v < live]
        if not earlier:
            raise NoVersionError()
        target = earlier[-1]
    collections.switch(target)
    return live, target


def list_versions(collections: VersionedCollections) -> list[VersionInfo]:
    live = collections.live()
    return [VersionInfo(name, name == live, collections.book_version(name)) for name in collections.versions()]


def _drop_quietly(collections: VersionedCollections, name: str) -> None:
    try:
        collections.drop(name)
    except Exception:  # cleanup of a failed ingest must not hide the failure itself
        logger.warning("could not drop a collection", extra={"collection": name})
