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
            text=hit.text, source_url=str(p.get("source_url", "")), position=hit.chunk_index,
            score=hit.score, chunk_id=hit.chunk_id, created_at=float(p.get("created_at", 0.0)),
            source_file=hit.source_file, module_name=str(p.get("module_name", "")),
            section_heading=hit.section_heading, page_number=int(p.get("page_number", 0)),
            total_chunks=int(p.get("total_chunks", 0)), token_count=int(p.get("token_count", 0)),
        )
