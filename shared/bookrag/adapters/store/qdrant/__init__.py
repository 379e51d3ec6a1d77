"""The remote engine: qdrant-client against Qdrant Cloud or a Qdrant server (`QDRANT_URL`/`QDRANT_HOST`).

`client` (the client factory and the translation of its errors), `store` (`VectorStore`, the `BookStore`
port), `aliases` (`QdrantVersions`, book versions as collections behind an alias), `lazy_imports` (a
cheaper qdrant-client import). The two builders below import qdrant-client only when called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bookrag import errors

if TYPE_CHECKING:
    from bookrag.adapters.store.port import BookStore, VersionedCollections
    from bookrag.config.settings import Settings


def build_store(settings: Settings) -> BookStore:
    from bookrag.adapters.store.qdrant.store import VectorStore

    return VectorStore(settings)


def build_book_store(settings: Settings, beside: BookStore) -> BookStore:
    """Another book's store (its own alias) on `beside`'s client: one connection pool for every book."""
    from bookrag.adapters.store.qdrant.store import VectorStore

    return VectorStore(settings, beside.client if isinstance(beside, VectorStore) else None)


def build_versions(settings: Settings, store: BookStore) -> VersionedCollections:
    """The alias's versions, through `store`'s client (one connection pool per process)."""
    from bookrag.adapters.store.qdrant.aliases import QdrantVersions
    from bookrag.adapters.store.qdrant.store import VectorStore

    if not isinstance(store, VectorStore):
        raise errors.ConfigError("Versions behind a Qdrant alias need the Qdrant store's client")
    return QdrantVersions(settings, store.client)
