"""bookrag: answers questions about a book, and only from the book.

The public names are imported lazily so that `import bookrag` stays cheap for a Lambda warm-up or
health check that never retrieves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Response", "RetrievedChunk", "retrieve_chunks", "run_agent", "validate_retrieval"]

if TYPE_CHECKING:
    from bookrag.contracts.agent import Response
    from bookrag.contracts.python_api import RetrievedChunk
    from bookrag.services.python_api import retrieve_chunks, run_agent, validate_retrieval

_LAZY = {
    "retrieve_chunks": "bookrag.services.python_api",
    "validate_retrieval": "bookrag.services.python_api",
    "RetrievedChunk": "bookrag.contracts.python_api",
    "run_agent": "bookrag.services.python_api",
    "Response": "bookrag.contracts.agent",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'bookrag' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
