"""The REST contract (`POST /api/retrieve`): request and response models."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field, StrictInt

from bookrag.contracts.base import FieldCodes, Filter, QueryRequest, Score
from bookrag.domain.query import POLICIES

_POLICY = POLICIES["rest"]


class RetrieveRequest(QueryRequest):
    error_codes: ClassVar[FieldCodes] = {
        "query": ("MISSING_QUERY", "INVALID_QUERY_LENGTH"),
        "top_k": ("INVALID_TOP_K", "INVALID_TOP_K"),
        "score_threshold": ("INVALID_SCORE_THRESHOLD", "INVALID_SCORE_THRESHOLD"),
    }

    query: str = Field(min_length=1, max_length=_POLICY.max_query_chars, description="The search query text")
    top_k: StrictInt = Field(_POLICY.default_top_k, ge=_POLICY.min_top_k, le=_POLICY.max_top_k,
                             description="Number of results to return (max 10)")
    score_threshold: Score | None = Field(
        None, description="Minimum similarity score (0..1). Default: 0.7 with Cohere embeddings; "
                          "the measured default of the local embedder otherwise (see /api/health).")
    query_type: str | None = Field(None, max_length=100, description="Category of query for analytics")
    module_name: Filter = Field(None, description="Only chunks of this module (first folder of the docs)")
    source_file: Filter = Field(None, description="Only chunks of this file (path relative to the docs root)")



class RetrievedChunkPublic(BaseModel):
    chunk_id: str
    similarity_score: float = Field(ge=0.0, le=1.0, description=(
        "Cosine similarity to the query (0..1), as a running minimum down the ranked list: never above the "
        "chunk's own cosine, never increasing"))
    content_text: str
    source_file: str
    module_name: str
    section_heading: str
    chunk_index: int
    total_chunks: int
    token_count: int
    source_url: str
    page_number: int



class RetrieveResponse(BaseModel):
    query_id: str
    original_query: str
    retrieval_time_ms: float
    total_candidates: int
    retrieved_chunks: list[RetrievedChunkPublic]
