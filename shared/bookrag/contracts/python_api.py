"""The Python retrieval contract's result shape."""

from __future__ import annotations

from pydantic import BaseModel, Field

from bookrag.domain.models import SearchHit


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
            text=p.content_text, source_url=p.source_url, position=p.chunk_index, score=hit.score,
            chunk_id=hit.chunk_id, created_at=p.created_at, source_file=p.source_file,
            module_name=p.module_name, section_heading=p.section_heading, page_number=p.page_number,
            total_chunks=p.total_chunks, token_count=p.token_count,
        )
