"""The embedded engine: Qdrant Edge on a folder (`QDRANT_PATH`), in-process; no server, no network.

`files` (durable writes, sparse copies, sidecar and pointer files), `shards` (the process's open shard
handles, their leases and locks), `store` (`EdgeStore`, the `BookStore` port), `versions` (`EdgeVersions`,
book versions as shard folders). The two builders below import the engine only when called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bookrag.adapters.store.port import BookStore, VersionedCollections
    from bookrag.config.settings import Settings


def build_store(settings: Settings) -> BookStore:
    from bookrag.adapters.store.edge.store import EdgeStore

    return EdgeStore(settings)


def build_versions(settings: Settings, store: BookStore) -> VersionedCollections:
    """The folder's versions; they open their own shards, not `store`'s."""
    from bookrag.adapters.store.edge.versions import EdgeVersions

    return EdgeVersions(settings)
