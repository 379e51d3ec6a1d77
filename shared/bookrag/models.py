"""Domain shapes shared by ingest, retrieval and the interfaces."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

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


class RetrievedChunk(BaseModel):
    """The Python retrieval contract's result, with the payload's richer metadata alongside."""

    text: str
    source_url: str
    position: int
    score: float = Field(ge=0.0, le=1.0)
    chunk_id: str
    created_at: float
    source_file: str = ""
    module_name: str = ""
    section_heading: str = ""
    page_number: int = 0
    total_chunks: int = 0
    token_count: int = 0

    @classmethod
    def from_hit(cls, hit: SearchHit) -> RetrievedChunk:
        p = hit.payload
        return cls(
            text=hit.text, source_url=str(p.get("source_url", "")), position=hit.chunk_index,
            score=hit.score, chunk_id=hit.chunk_id, created_at=float(p.get("created_at", 0.0)),
            source_file=hit.source_file, module_name=str(p.get("module_name", "")),
            section_heading=hit.section_heading, page_number=int(p.get("page_number", 0)),
            total_chunks=int(p.get("total_chunks", 0)), token_count=int(p.get("token_count", 0)),
        )
