"""How one request retrieved: normally (hybrid, or the mode asked for), or on BM25 alone because the
query could not be embedded (`retrieval.retriever`: the embedder timed out, was rate limited, failed
with a 5xx, or its circuit was open).

A degraded request says so in its response header `X-Retrieval-Mode: sparse-fallback` (the web
middleware `web.middleware.retrieval_mode`) and in the `RetrievalFallbacks` metric. The request scope
is a dict shared by reference, like `domain.book_version`'s pins: a route runs in a worker thread on a
copy of the request's context, and what it marks there must reach the middleware.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

HEADER = "X-Retrieval-Mode"
SPARSE_FALLBACK = "sparse-fallback"

_MODE: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("bookrag_retrieval_mode", default=None)


@contextmanager
def request_mode() -> Iterator[dict[str, str]]:
    """Scope one request; yields {"mode": ...} once a retrieval of the request degraded. Nested scopes
    join the outer one."""
    outer = _MODE.get()
    if outer is not None:
        yield outer
        return
    mode: dict[str, str] = {}
    token = _MODE.set(mode)
    try:
        yield mode
    finally:
        _MODE.reset(token)


def mark_degraded(mode: str = SPARSE_FALLBACK) -> None:
    scope = _MODE.get()
    if scope is not None:
        scope["mode"] = mode
