"""`GET /api/health`: what the service runs and what it has built."""

from __future__ import annotations

from pydantic import BaseModel


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
