"""`GET /api/health`: what the service runs and what it has built."""

from __future__ import annotations

from pydantic import BaseModel, Field


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
    book_version: str | None = Field(None, description=(
        "The book version this process last served (health makes no store call: null until a request or the "
        "warm-up has read the store)"))
    books: dict[str, str | None] = Field(default_factory=dict, description=(
        "Each book this process has served (`default`: the one book of a one-book deployment), with the version "
        "it last read (null until read)"))
