"""The REST contract (`POST /api/retrieve`): request and response models."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field

from bookrag.contracts.base import Codes, FieldCodes, Filter, JsonInt, QueryRequest, Score, query_field
from bookrag.domain.query import POLICIES

_POLICY = POLICIES["rest"]


class RetrieveRequest(QueryRequest):
    error_codes: ClassVar[FieldCodes] = {
        # A query that is not a string is not missing: INVALID_QUERY, the tools' code for a malformed one.
        "query": Codes("MISSING_QUERY", "INVALID_QUERY_LENGTH", "INVALID_QUERY"),
        "top_k": Codes("INVALID_TOP_K", "INVALID_TOP_K"),
        "score_threshold": Codes("INVALID_SCORE_THRESHOLD", "INVALID_SCORE_THRESHOLD"),
    }

    query: str = query_field(_POLICY.max_query_chars, "The search query text")
    top_k: JsonInt = Field(_POLICY.default_top_k, ge=_POLICY.min_top_k, le=_POLICY.max_top_k, description=(
        "Number of results to return (1..10). An integer: 5.0 counts as 5 (JSON Schema's integer), 5.5, true "
        "and \"5\" are refused with INVALID_TOP_K"))
    score_threshold: Score | None = Field(
        None, description="Minimum similarity score (0..1). Default: 0.7 with Cohere embeddings; "
                          "the measured default of the local embedder otherwise (see /api/health).")
    query_type: str | None = Field(None, max_length=100, description=(
        "Category of query for analytics: recorded as the `query_type` dimension of the `Queries` metric and "
        "a structured log field; values outside a fixed set are recorded as `other` (bounded cardinality)"))
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
    book_version: str | None = Field(None, description=(
        "The version of the book this was answered from (content hash, ingest time, git commit); also the "
        "X-Book-Version header. Null for an index ingested before versions"))
