"""Health: configuration and process state, without paid calls and without heavy imports."""

from __future__ import annotations

import sys
import time
from typing import Any

from bookrag import __version__
from bookrag.domain.thresholds import DEFAULT_THRESHOLDS
from bookrag.observability import _state


def _factory_ready(module: str, factory: str) -> bool:
    # Only look at modules already imported: importing them here would cost the cold start we avoid.
    mod = sys.modules.get(module)
    cached = getattr(mod, factory, None) if mod else None
    return bool(cached is not None and cached.cache_info().currsize)


def health() -> dict[str, Any]:
    """Raises `ConfigError` (naming the variable) when configuration is invalid."""
    from bookrag.config.settings import get_settings

    s = get_settings()
    provider = s.resolved_embedding_provider

    return {
        "status": "ok",
        "version": __version__,
        "embedding_provider": provider,
        "llm_provider": s.resolved_llm_provider,
        "store": s.qdrant_location,
        "collection": s.qdrant_collection,
        "retrieval_mode": s.retrieval_mode,
        "default_thresholds": DEFAULT_THRESHOLDS[provider],
        "cold_start": _state["invocations"] <= 1,
        "clients_ready": {
            "embedder": _factory_ready("bookrag.adapters.embedders", "get_embedder"),
            "store": _factory_ready("bookrag.adapters.qdrant.store", "get_qdrant_client"),
            "app": _factory_ready("bookrag.web.app", "get_app"),
        },
        "uptime_s": round(time.time() - _state["started"], 3),
    }
