"""Health: configuration and process state, without paid calls and without heavy imports."""

from __future__ import annotations

import time
from typing import Any

from bookrag.domain.books import DEFAULT_BOOK
from bookrag.domain.thresholds import DEFAULT_THRESHOLDS
from bookrag.observability import process_state
from bookrag.services.container import current
from bookrag.version import __version__


def health(app_ready: bool = True) -> dict[str, Any]:
    """What this container runs and what it has built. Raises `ConfigError` (naming the variable)
    when configuration is invalid. Builds nothing: readiness is read, never caused. `app_ready`: whether
    the caller has built its HTTP app (a request served by the app has)."""
    container = current().book(DEFAULT_BOOK)
    s = container.settings
    provider = s.resolved_embedding_provider
    state = process_state()
    return {
        "status": "ok",
        "version": __version__,
        "embedding_provider": provider,
        "llm_provider": s.resolved_llm_provider,
        "store": s.qdrant_location,
        "collection": s.qdrant_collection,
        "retrieval_mode": s.retrieval_mode,
        "default_thresholds": DEFAULT_THRESHOLDS[provider],
        "cold_start": state["invocations"] <= 1,
        "clients_ready": {**container.ready(), "app": app_ready},
        "uptime_s": round(time.time() - state["started"], 3),
        "book_version": container.served_version(),
        # Every book this process has served, with the version it last read: no store call (issue 38).
        "books": {c.book_id: c.served_version() for c in (container, *container.book_containers())},
    }
