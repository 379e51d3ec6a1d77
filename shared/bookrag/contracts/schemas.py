"""Request and response models at the HTTP edge, named by role, one set per contract."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator

from bookrag.domain.query import normalize_query

# Unknown request fields are ignored on every route (extra="ignore"), consistently.
_REQUEST = ConfigDict(extra="ignore", str_strip_whitespace=False)
Score = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Filter = Annotated[str | None, Field(default=None, min_length=1, max_length=200)]


class _QueryRequest(BaseModel):
    model_config = _REQUEST

    @field_validator("query", mode="before", check_fields=False)
    @classmethod
    def _normalize(cls, value: object) -> object:
        return normalize_query(value) if isinstance(value, str) else value


# --- POST /api/retrieve ---------------------------------------------------------------------------


class RetrieveRequest(_QueryRequest):
    query: str = Field(min_length=1, max_length=1000, description="The search query text")
    top_k: StrictInt = Field(5, ge=1, le=10, description="Number of results to return (max 10)")
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


class ErrorBody(BaseModel):
    """The error envelope of every route: the REST contract's, with `recoverable` added."""

    error: str
    code: str
    details: dict[str, Any] = Field(default_factory=dict)
    recoverable: bool = False


# --- POST /api/tools/retrieve_book_content --------------------------------------------------------


class BookContentRequest(_QueryRequest):
    query: str = Field(min_length=1, max_length=1000, description="The user's question or query")
    top_k: float = Field(5, ge=1, le=10, allow_inf_nan=False, description="Number of top results (1..10)")
    min_score: Score | None = Field(None, description="Minimum relevance score (0..1; default 0.5 with Cohere)")
    module_name: Filter = None
    source_file: Filter = None

    @field_validator("top_k")
    @classmethod
    def _whole(cls, value: float) -> float:
        if value != int(value):
            raise ValueError("top_k must be a whole number")
        return value


class BookContentResult(BaseModel):
    id: str
    content: str
    score: float
    source_url: str
    page_number: int
    section_title: str
    metadata: dict[str, Any]


class BookContentResponse(BaseModel):
    results: list[BookContentResult]
    query_embedding_used: list[float]
    message: str | None = None


# --- POST /api/tools/perform_retrieval ------------------------------------------------------------


class PerformRetrievalRequest(_QueryRequest):
    query: str = Field(min_length=1, max_length=500)
    top_k: StrictInt = Field(5, ge=1, le=10)
    module_name: Filter = None
    source_file: Filter = None


class PerformRetrievalResult(BaseModel):
    content: str
    source_url: str
    similarity_score: float
    position: int


class PerformRetrievalResponse(BaseModel):
    results: list[PerformRetrievalResult]
    query: str
    total_results: int


# --- POST /api/tools/retrieve_book_context --------------------------------------------------------


class BookContextRequest(_QueryRequest):
    query: str = Field(min_length=1, max_length=1000, description="The user's question about the book content")


class BookContextResponse(BaseModel):
    context: str
    sources: list[dict[str, Any]]


# --- GET /api/health ------------------------------------------------------------------------------


class HealthResponse(BaseModel):
    status: str
    version: str
    embedding_provider: str
    llm_provider: str
    store: str
    collection: str
    retrieval_mode: str
    default_thresholds: dict[str, float]
    cold_start: bool
    clients_ready: dict[str, bool]
    uptime_s: float


# --- POST /api/answer -----------------------------------------------------------------------------


class AnswerRequest(_QueryRequest):
    query: str = Field(min_length=1, max_length=1000, description="A question about the book")


class AnswerErrorBody(ErrorBody):
    """Errors of /api/answer also carry the agent contract's ErrorResponse fields."""

    message: str = Field(description="User-facing message from the agent contract")
    error_type: str = Field(description="EmbeddingError | RetrievalError | InvalidQueryError | AgentError | ...")
