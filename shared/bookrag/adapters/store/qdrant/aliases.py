"""Book versions as collections behind one alias, over qdrant-client (a server, Qdrant Cloud, or the
embedded local mode, which keeps aliases the same way).

The service reads `QDRANT_COLLECTION` (say `book_chunks`), an alias. Each atomic ingest builds a new
collection `book_chunks__v<UTC time>_<content hash>` (the names sort by age) and then moves the alias in
one `POST /collections/aliases` request (delete + create, applied atomically by Qdrant), so a reader's
request resolves either the old or the new collection, never something in between. The collection the
alias left is kept for `bookrag rollback`; older ones are dropped.

`QdrantVersions` implements the `VersionedCollections` port (`adapters.store.port`): the seam another
engine implements to get the same ingest (`bookrag.ingestion.versions`), switch and rollback.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, TypeVar

from bookrag.adapters.store.port import VERSION_SEPARATOR, version_name, version_pattern
from bookrag.adapters.store.qdrant.client import translate_qdrant_error
from bookrag.adapters.store.qdrant.store import VectorStore
from bookrag.domain.book_version import BookVersion

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

    from bookrag.config.settings import Settings

T = TypeVar("T")


class QdrantVersions:
    """The versions of one alias. Every client error becomes one of our `StoreError`s."""

    def __init__(self, settings: Settings, client: QdrantClient) -> None:
        self.settings = settings
        self.client = client
        self.alias = settings.qdrant_collection
        self._pattern = version_pattern(self.alias)

    def _call(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except Exception as exc:
            raise translate_qdrant_error(exc) from None

    # -- the port ----------------------------------------------------------------------------------

    def exclusive(self) -> AbstractContextManager[None]:
        """Nothing to hold: each change is one request that Qdrant applies whole."""
        return nullcontext()

    def live(self) -> str | None:
        """The collection the alias points at; None when there is no alias."""
        aliases = self._call(self.client.get_aliases).aliases
        return next((a.collection_name for a in aliases if a.alias_name == self.alias), None)

    def is_plain_collection(self) -> bool:
        """Whether the alias's name is taken by a collection (an index from before versions)."""
        names = {c.name for c in self._call(self.client.get_collections).collections}
        return self.alias in names

    def atomic_by_default(self) -> bool:
        """Always: a remote store's readers may be serving while an ingest runs."""
        return True

    def versions(self) -> list[str]:
        """This alias's version collections, oldest first."""
        names = [c.name for c in self._call(self.client.get_collections).collections]
        return sorted(n for n in names if self._pattern.fullmatch(n))

    def names(self) -> list[str]:
        """Every alias, and every collection that is no version (an index from before versions)."""
        aliases = [a.alias_name for a in self._call(self.client.get_aliases).aliases]
        plain = [c.name for c in self._call(self.client.get_collections).collections if VERSION_SEPARATOR not in c.name]
        return sorted({*aliases, *plain})

    def new_name(self, version: BookVersion) -> str:
        return version_name(self.alias, version)

    def store_for(self, collection: str) -> VectorStore:
        """A store that reads and writes exactly this collection (the same client)."""
        return VectorStore(self.settings, self.client, collection=collection)

    def prepare(self, collection: str, source: str, embedder_name: str, dimension: int) -> bool:
        """Not here: a new collection is filled by copying the unchanged files' points from `source`."""
        return False

    def switch(self, collection: str) -> None:
        """Point the alias at `collection` in one request: readers see the old or the new, nothing between."""
        from qdrant_client import models as qm

        current = self.live()
        operations: list[qm.DeleteAliasOperation | qm.CreateAliasOperation] = []
        if current is not None:
            operations.append(qm.DeleteAliasOperation(delete_alias=qm.DeleteAlias(alias_name=self.alias)))
        operations.append(qm.CreateAliasOperation(
            create_alias=qm.CreateAlias(collection_name=collection, alias_name=self.alias)))
        self._call(lambda: self.client.update_collection_aliases(change_aliases_operations=operations))

    def replace_plain(self, collection: str) -> None:
        """The alias needs the plain collection's name: drop it, then point the alias at `collection`. Two
        requests, the one moment of this migration (milliseconds) when readers find no book."""
        self.drop(self.alias)
        self.switch(collection)

    def drop(self, collection: str) -> None:
        self._call(lambda: self.client.delete_collection(collection))

    def book_version(self, collection: str) -> BookVersion | None:
        meta = self._call(lambda: self.client.get_collection(collection)).config.metadata or {}
        return BookVersion.from_dict(meta.get("book_version"))
