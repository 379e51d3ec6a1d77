"""The vector store, one facade over its engines: the ports (`port`), and which engine a configuration gets.

`BACKENDS` is the one place that chooses: the first backend whose `chosen(settings)` holds builds the
process's `BookStore` and its `VersionedCollections` (the container's `store` and `versions` components,
which the service, the ingest and the CLI use). Today: `qdrant` when QDRANT_URL or QDRANT_HOST is set
(Qdrant Cloud or a server), else `edge` (Qdrant Edge on QDRANT_PATH, in-process).

Importing this package is cheap: each engine's builders import its SDK only when called (a health check
imports no store SDK; `tests/handler/test_cold_start.py`).

To add a store backend: implement both ports of `port` in `adapters/store/<engine>/` (every engine error
becomes one of our `StoreError`s there), give the engine's `__init__.py` a `build_store` and a
`build_versions` that import the engine lazily, and add its `Backend` to `BACKENDS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bookrag import errors
from bookrag.adapters.store import edge, qdrant

if TYPE_CHECKING:
    from bookrag.adapters.store.port import BookStore, VersionedCollections
    from bookrag.config.settings import Settings


@dataclass(frozen=True, slots=True)
class Backend:
    """One engine of the store: when a configuration gets it, and how its two ports are built."""

    name: str
    chosen: Callable[[Settings], bool]
    store: Callable[[Settings], BookStore]
    versions: Callable[[Settings, BookStore], VersionedCollections]  # given the process's store
    network: bool  # holds connections: dropped after a SnapStart restore, rebuilt on next use
    # Another book's store beside the process's store (`services.container.Container.book`), sharing what it
    # can (a remote engine's client and its connections); None: built as `store` builds it.
    book_store: Callable[[Settings, BookStore], BookStore] | None = None


BACKENDS: tuple[Backend, ...] = (
    Backend("qdrant", lambda s: s.qdrant_remote_url is not None, qdrant.build_store, qdrant.build_versions,
            network=True, book_store=qdrant.build_book_store),
    Backend("edge", lambda s: s.qdrant_remote_url is None, edge.build_store, edge.build_versions, network=False),
)


def backend(settings: Settings) -> Backend:
    """The backend `settings` choose: the first of `BACKENDS` whose `chosen` holds."""
    for candidate in BACKENDS:
        if candidate.chosen(settings):
            return candidate
    raise errors.ConfigError("No store backend matches this configuration")


def build_store(settings: Settings, beside: BookStore | None = None) -> BookStore:
    """The store `settings` name; `beside`: the process's store, when this one is another book's."""
    chosen = backend(settings)
    if beside is not None and chosen.book_store is not None:
        return chosen.book_store(settings, beside)
    return chosen.store(settings)


def build_versions(settings: Settings, store: BookStore) -> VersionedCollections:
    """The book's versions on the chosen engine; `store` is the process's (`build_store`'s) store."""
    return backend(settings).versions(settings, store)


def holds_network(settings: Settings) -> bool:
    """Whether the chosen engine's store holds connections (the container's `network` flag)."""
    return backend(settings).network
