"""Domain shapes shared by ingest, retrieval and the interfaces."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

# The payload fields every stored chunk carries (see docs/ARCHITECTURE.md).
PAYLOAD_FIELDS = (
    "chunk_id", "content_text", "source_file", "source_url", "module_name", "section_heading",
    "heading_path", "chunk_index", "total_chunks", "token_count", "page_number", "created_at",
    "content_hash", "file_hash", "doc_title",
)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One ranked chunk. `score`: cosine similarity in [0, 1], a running minimum down the ranking (never
    above the chunk's own cosine); `rank_score`: what ranked it."""

    chunk_id: str
    score: float
    rank_score: float
    payload: dict[str, Any] = field(repr=False)

    @property
    def text(self) -> str:
        return str(self.payload.get("content_text", ""))

    @property
    def source_file(self) -> str:
        return str(self.payload.get("source_file", ""))

    @property
    def section_heading(self) -> str:
        return str(self.payload.get("section_heading", ""))

    @property
    def chunk_index(self) -> int:
        return int(self.payload.get("chunk_index", 0))

    @property
    def citation_label(self) -> str:
        """'Doc title - Section' as the agent contract's `[Source: Chapter X - Section Y]`."""
        title = str(self.payload.get("doc_title") or self.payload.get("module_name") or "")
        section = self.section_heading
        return f"{title} - {section}" if section and section != title else title


@dataclass(frozen=True, slots=True)
class SearchResult:
    hits: list[SearchHit]
    total_candidates: int
    query_vector: list[float]
    embed_ms: float
    search_ms: float


@dataclass(frozen=True, slots=True)
class PointRecord:
    chunk_id: str
    dense: np.ndarray
    sparse: SparseVector
    payload: dict[str, Any]



@dataclass(frozen=True, slots=True)
class StoredHit:
    chunk_id: str
    rank_score: float
    cosine: float
    payload: dict[str, Any]



@dataclass(frozen=True, slots=True)
class Filters:
    module_name: str | None = None
    source_file: str | None = None

    def __bool__(self) -> bool:
        return bool(self.module_name or self.source_file)


def embedding_text(doc_title: str, heading_path: tuple[str, ...], text: str) -> str:
    """What is embedded: the chunk with its place in the book, which the chunk text alone may lack."""
    trail = " > ".join(p for p in (doc_title, *heading_path) if p)
    return f"{trail}\n\n{text}" if trail else text


@dataclass(frozen=True, slots=True)
class SparseVector:
    indices: list[int]
    values: list[float]
