"""The store's ports, engine-neutral: what retrieval, ingestion and the book service ask of a vector store
(`BookStore`), and what an atomic ingest asks of an engine's book versions (`VersionedCollections`).

Each engine implements both under `adapters/store/<engine>/`, and `adapters/store/__init__.py` picks one
per configuration: `edge` (Qdrant Edge, Qdrant's own engine in-process on a folder: the default whenever
no QDRANT_URL/QDRANT_HOST is set) and `qdrant` (qdrant-client against Qdrant Cloud or a Qdrant server).
Both store the same payload (`ChunkPayload`), record the embedder that built the index, and answer the
same hybrid query, so every caller is indifferent to which one it holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Literal, Protocol

from bookrag import errors
from bookrag.domain.book_version import BookVersion
from bookrag.domain.models import ChunkPayload, Filters, PointRecord, SparseVector, StoredHit

if TYPE_CHECKING:
    import numpy as np

VERSION_SEPARATOR = "__v"
SearchMode = Literal["hybrid", "dense", "sparse"]
Fusion = Literal["rrf", "dbsf"]


# Not a chunk's field: the questions its page answers, set on the page's chunks once they are all stored
# (`services.suggesting`); absent until then, [] for a page that answers none of its candidates.
SUGGESTIONS_FIELD = "page_suggestions"
# The payload fields both engines index: those a search filters on (`Filters`) as keywords, and the chunk's place.
KEYWORD_INDEXES = ("source_file", "module_name", "locale", "version")


class BookStore(Protocol):
    """One collection of chunks. Reads are thread-safe; one ingest writes at a time."""

    @property
    def collection(self) -> str: ...

    last_version: str | None  # the book version label last read, for health (which makes no call)

    def book_version(self) -> BookVersion | None:
        """The version of the book this store serves (None for an index ingested before versions)."""
        ...

    def set_book_version(self, version: BookVersion) -> None: ...

    def refresh(self) -> None:
        """Forget cached state another writer may have changed (the alias target, the recorded version)."""
        ...

    def copy_files_from(self, source: BookStore, files: Sequence[str], batch_size: int = 128) -> int:
        """Copy `files`' points, as stored, from `source` (a new book version's unchanged files)."""
        ...

    def exists(self) -> bool: ...

    def describe(self) -> dict[str, Any]:
        """Embedder name, dimension and point count, or raise `CollectionMissingError`."""
        ...

    def check_embedder(self, embedder_name: str, dimension: int) -> None:
        """Raise `EmbedderMismatchError` when the index was built by another embedder."""
        ...

    def ensure_collection(self, embedder_name: str, dimension: int) -> bool:
        """Create the collection if missing; True when it was created."""
        ...

    def upsert(self, records: Sequence[PointRecord], batch_size: int = 128) -> None: ...

    def delete_file(self, source_file: str, *, from_index: int = 0) -> None:
        """Delete a file's chunks whose `chunk_index >= from_index` (all of them by default)."""
        ...

    def set_page_number(self, source_file: str, page_number: int) -> None: ...

    def set_page_suggestions(self, source_file: str, questions: Sequence[str]) -> None:
        """Store the questions a page answers (`services.suggesting`) on every chunk of the page, so they
        belong to this book version and a re-embedded page drops them (payload key `page_suggestions`)."""
        ...

    def finish_ingest(self) -> None:
        """Called once at the end of an ingest: leave the index compact, searchable and on disk."""
        ...

    def scroll_payloads(self, fields: Sequence[str], source_file: str | None = None) -> Iterable[dict[str, Any]]:
        """The named payload fields of every chunk (of one file, if given), in no particular order."""
        ...

    def manifest(self) -> dict[str, dict[str, Any]]:
        """Per source file: its file hash, page number and chunk count, read from the stored payloads."""
        ...

    def fetch_chunks(self, source_file: str, indices: Sequence[int]) -> list[ChunkPayload]: ...

    def count(self) -> int: ...

    def search(self, dense: np.ndarray, sparse: SparseVector, *, mode: SearchMode, limit: int,
               filters: Filters | None = None, rrf_k: int = 60, fusion: Fusion = "rrf") -> list[StoredHit]:
        """Rank chunks by `mode`; every hit carries its cosine similarity to `dense` (clamped to [0, 1])."""
        ...


class VersionedCollections(Protocol):
    """What an engine provides for versions: named collections, and one pointer that readers follow."""

    alias: str

    def exclusive(self) -> AbstractContextManager[None]:
        """Held for a whole publish or rollback: one process changes the versions at a time."""
        ...

    def live(self) -> str | None:
        """The collection readers are pointed at; None before the first version."""
        ...

    def is_plain_collection(self) -> bool:
        """Whether the book is an unversioned collection under the alias's name (an incremental ingest's)."""
        ...

    def atomic_by_default(self) -> bool:
        """Whether an ingest that does not say is atomic (`bookrag ingest` without --atomic/--incremental)."""
        ...

    def versions(self) -> list[str]:
        """The complete versions, oldest first."""
        ...

    def new_name(self, version: BookVersion) -> str: ...

    def store_for(self, collection: str) -> BookStore: ...

    def prepare(self, collection: str, source: str, embedder_name: str, dimension: int) -> bool:
        """Start `collection` from `source` by the engine's own means (a copy of the whole collection)
        when it has one; True when done, and the ingest then updates it in place. False: the ingest
        fills an empty `collection`, copying unchanged files' points from `source`."""
        ...

    def switch(self, collection: str) -> None:
        """Point readers at `collection` in one step."""
        ...

    def replace_plain(self, collection: str) -> None:
        """Point readers at `collection` instead of the plain collection, which is then gone."""
        ...

    def drop(self, collection: str) -> None: ...

    def book_version(self, collection: str) -> BookVersion | None: ...

    def names(self) -> list[str]:
        """Every alias or pointer, and every plain collection, in this store: one per book
        (`domain.books.books_among` reads the books from them)."""
        ...


def require_embedder(described: dict[str, Any], embedder_name: str, dimension: int) -> None:
    """Raise `EmbedderMismatchError` when the index (`BookStore.describe()`) was built by another embedder."""
    if described["embedder"] != embedder_name or described["dimension"] != dimension:
        raise errors.EmbedderMismatchError(
            f"The book index was built with {described['embedder']} ({described['dimension']} "
            f"dimensions) but the service is configured for {embedder_name} ({dimension}); "
            "re-ingest the book or change EMBEDDING_PROVIDER"
        )


def manifest_of(payloads: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Group stored payloads (`source_file`, `file_hash`, `page_number`, `total_chunks`) per file."""
    files: dict[str, dict[str, Any]] = {}
    for p in payloads:
        entry = files.setdefault(str(p["source_file"]), {"file_hash": p.get("file_hash"),
                                                         "page_number": p.get("page_number"),
                                                         "total_chunks": p.get("total_chunks"),
                                                         "stored": 0})
        entry["stored"] += 1
        if entry["file_hash"] != p.get("file_hash"):
            entry["file_hash"] = None  # mixed versions: a previous ingest was cut short
    return files


MANIFEST_FIELDS = ("source_file", "file_hash", "page_number", "total_chunks")

def version_name(alias: str, version: BookVersion) -> str:
    """`<alias>__v20261123T093000123Z_<hash12>`: a book version's collection (remote) or shard folder
    (embedded); sortable by age (to the millisecond), unique per content."""
    stamp = version.ingested_at.replace("-", "").replace(":", "").replace(".", "")
    return f"{alias}{VERSION_SEPARATOR}{stamp}_{version.content_hash[:12]}"


def version_pattern(alias: str) -> re.Pattern[str]:
    """Matches exactly the names `version_name` gives for `alias`."""
    return re.compile(re.escape(alias) + re.escape(VERSION_SEPARATOR) + r"[0-9TZ]+_[0-9a-f]+")
