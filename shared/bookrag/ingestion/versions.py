"""Book versions: build the new book beside the live one, switch in one step, roll back in one command.

`publish` is `bookrag ingest --atomic` (the default for a remote store): a new collection, filled from
the docs (unchanged files copied from the live version, as stored, so only changed files are
embedded), recording its `BookVersion`, then the pointer readers follow moved to it in one step. Until
that step every reader gets the old book; after it, the new one; a request that started before keeps
reading the collection it began with (`domain.book_version.one_version`), which is why the replaced
version is kept. The version before it is dropped. An ingest that fails part-way drops its own
half-built collection and leaves the live book untouched.

`rollback` moves the pointer back to the kept version.

The engine stays behind `VersionedCollections` (`adapters.store.port`): `adapters.store.qdrant.aliases.
QdrantVersions` implements it with Qdrant's aliases (server, Cloud, or qdrant-client's local mode),
`adapters.store.edge.versions.EdgeVersions` with shard folders and a pointer file (Qdrant Edge).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bookrag.errors import DocumentError, NoVersionError
from bookrag.ingestion.ingestor import Ingestor, IngestReport, Progress
from bookrag.observability import logger

if TYPE_CHECKING:
    from bookrag.adapters.embedders import CachedEmbedder
    from bookrag.adapters.store.port import BookStore, VersionedCollections
    from bookrag.config.settings import Settings
    from bookrag.domain.book_version import BookVersion


@dataclass(frozen=True, slots=True)
class VersionInfo:
    collection: str
    live: bool
    book_version: BookVersion | None


def publish(settings: Settings, embedder: CachedEmbedder, collections: VersionedCollections, root: Path,
            progress: Progress | None = None, title: str = "",
            before_switch: Callable[[BookStore], None] | None = None) -> IngestReport:
    """Ingest `root` as a new version and switch readers to it; `before_switch` completes the new version
    first (the questions its pages answer, `services.suggesting`). Raises `DocumentError` when the folder
    holds no readable document (a wrong path must not publish an empty book), and `StoreError`s."""
    if not root.is_dir():
        raise DocumentError(f"Not a folder: {root.name}")
    with collections.exclusive():
        return _publish(settings, embedder, collections, root, progress, title, before_switch)


def _publish(settings: Settings, embedder: CachedEmbedder, collections: VersionedCollections, root: Path,
             progress: Progress | None, title: str, before_switch: Callable[[BookStore], None] | None
             ) -> IngestReport:
    report = IngestReport()
    live = collections.live()
    plain = live is None and collections.is_plain_collection()
    seed_name = live or (collections.alias if plain else None)
    seed = collections.store_for(seed_name) if seed_name else None
    loader = Ingestor(settings, embedder, seed or collections.store_for(collections.alias), progress, title=title)
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
        prepared = seed_name is not None and collections.prepare(name, seed_name, embedder.name,
                                                                 embedder.dimension)
        Ingestor(settings, embedder, target, progress, seed=None if prepared else seed,
                 site=loader.site).ingest(files, report, version)
        if prepared:
            report.chunks_copied = report.chunks_total - report.chunks_embedded
        if before_switch is not None:
            before_switch(target)
    except BaseException:
        _drop_quietly(collections, name)  # the live book was never touched
        raise
    if plain:
        logger.warning("replacing the plain collection by a version", extra={"collection": collections.alias})
        collections.replace_plain(name)
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
    with collections.exclusive():
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
