"""bookrag: answers questions about a book, and only from the book.

The public names are imported lazily so that `import bookrag` stays cheap for a Lambda warm-up or
health check that never retrieves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bookrag.version import __version__

__all__ = [
    "AgentError",
    "EmbeddingError",
    "ErrorResponse",
    "Response",
    "RetrievalError",
    "RetrievedChunk",
    "ScoredPoint",
    "Source",
    "__version__",
    "get_embedding",
    "retrieve_book_context",
    "retrieve_chunks",
    "run_agent",
    "search_vectors",
    "validate_retrieval",
]

if TYPE_CHECKING:
    from bookrag.contracts.agent import ErrorResponse, Response, ScoredPoint, Source
    from bookrag.contracts.python_api import RetrievedChunk
    from bookrag.errors import AgentError, EmbeddingError, RetrievalError
    from bookrag.services.python_api import (
        get_embedding,
        retrieve_book_context,
        retrieve_chunks,
        run_agent,
        search_vectors,
        validate_retrieval,
    )

_API = "bookrag.services.python_api"
_LAZY = {
    # the retrieval contract
    "retrieve_chunks": _API,
    "validate_retrieval": _API,
    "RetrievedChunk": "bookrag.contracts.python_api",
    # the agent contract
    "run_agent": _API,
    "get_embedding": _API,
    "search_vectors": _API,
    "retrieve_book_context": _API,
    "Response": "bookrag.contracts.agent",
    "Source": "bookrag.contracts.agent",
    "ScoredPoint": "bookrag.contracts.agent",
    "ErrorResponse": "bookrag.contracts.agent",
    "EmbeddingError": "bookrag.errors",
    "RetrievalError": "bookrag.errors",
    "AgentError": "bookrag.errors",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'bookrag' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
