"""X-Book-Version on every response: the book version the request read, one version per request.

The request runs inside `one_version()`: the store pins its alias's target the first time the request
touches it, so every read of the request (search, neighbouring chunks, the stamp) is one collection,
even while an ingest switches the alias. A response that read nothing (a refusal of the key, the tool
list) carries the version this process last served, if any.
"""

from __future__ import annotations

from typing import Any

from bookrag.domain.book_version import HEADER, one_version
from bookrag.errors import BookRAGError
from bookrag.web.middleware.stamp import stamping

_HEADER = HEADER.lower().encode()


def last_served() -> str | None:
    """The version this process last read, without building or calling anything."""
    from bookrag.services.container import current

    try:
        container = current()
    except BookRAGError:  # a bad configuration is reported by the route, not here
        return None
    return container.served_version()


class BookVersionHeader:
    """Pure ASGI middleware (see BodySizeLimit)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        with one_version() as seen:

            def version() -> list[tuple[bytes, bytes]]:
                label = next(iter(seen.values()), None) or last_served()
                return [(_HEADER, label.encode())] if label else []

            await self.app(scope, receive, stamping(send, version))
