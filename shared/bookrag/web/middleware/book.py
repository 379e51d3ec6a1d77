"""Which book a request reads (issue 38): the key's book, or the one it names, for everything the request does.

A key holds one book or several (`Principal.books`; a key minted before books holds the default book). A
request reads its key's first book unless it names one, by the `X-Book` header or a `book` field at the top
of its JSON body (taken out before the route validates the body, so the five contracts' bodies are exactly
as they were). A book the store does not hold is 404 BOOK_NOT_FOUND; a book the key does not hold, 403
BOOK_NOT_ALLOWED. With keys off every book is open and the default book is read unless one is named.

The choice is set as the request's book (`domain.books.reading_book`): `services.container.current()` then gives
the book's own container (its store, retriever and agent), so no route or service chooses a book itself.
Inside the body limit (the body it reads is bounded) and inside the key check (which sets the key's books).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from bookrag.auth.guard import OPEN_PATHS
from bookrag.domain.books import BOOK_FIELD, BOOK_HEADER, DEFAULT_BOOK, reading_book, valid_book_id
from bookrag.errors import BookNotAllowedError, BookNotFoundError, BookRAGError, InvalidInputError
from bookrag.web.errors import error_response
from bookrag.web.middleware.api_key import BOOKS_STATE

Scope = dict[str, Any]
_HEADER = BOOK_HEADER.lower().encode()


def choose_book(held: tuple[str, ...] | None, named: str | None, known: Callable[[], list[str]]) -> str:
    """The book a request reads: `named` (or the key's first book, else the default one), checked against the
    books in the store (`known`, read only for a book other than the default) and the key's (`held`; None:
    keys are off)."""
    book = named if named is not None else (held[0] if held else DEFAULT_BOOK)
    if not valid_book_id(book) or (book != DEFAULT_BOOK and book not in known()):
        raise BookNotFoundError()
    if held is not None and book not in held:
        raise BookNotAllowedError()
    return book


def _named_in_body(body: bytes) -> tuple[str | None, bytes]:
    """The `book` a JSON object body names, and the body without it; the body as it was otherwise (a body
    that is not a JSON object is the route's to refuse)."""
    if b'"' + BOOK_FIELD.encode() + b'"' not in body:
        return None, body
    try:
        data = json.loads(body)
    except ValueError:
        return None, body
    if not isinstance(data, dict) or BOOK_FIELD not in data:
        return None, body
    named = data.pop(BOOK_FIELD)
    if not isinstance(named, str):
        raise BookNotFoundError()
    return named, json.dumps(data, ensure_ascii=False).encode()


class BookChoice:
    """Pure ASGI middleware (see BodySizeLimit)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        header = headers.get(_HEADER)
        named = header.decode("latin-1").strip() if header is not None else None
        messages: list[dict[str, Any]] = []
        try:
            if scope.get("method") == "POST" and scope["path"] != "/mcp":  # MCP names a book by its header only
                body = b""
                while True:  # bounded: the body limit, outside, has counted it already
                    message = await receive()
                    messages.append(message)
                    if message["type"] != "http.request":
                        break
                    body += message.get("body", b"")
                    if not message.get("more_body"):
                        break
                in_body, rest = _named_in_body(body)
                if in_body is not None:
                    if named is not None and named != in_body:
                        raise InvalidInputError(f"The {BOOK_HEADER} header and the body's book differ",
                                                code="INVALID_INPUT", field=BOOK_FIELD)
                    named = in_body
                    messages = [{"type": "http.request", "body": rest, "more_body": False}]
                    scope = {**scope, "headers": [(k, v) for k, v in scope.get("headers") or []
                                                  if k != b"content-length"]
                             + [(b"content-length", str(len(rest)).encode())]}
            book = choose_book(_held(scope), named, _known_books)
        except BookRAGError as exc:
            await error_response(scope["path"], exc)(scope, receive, send)
            return

        async def replay() -> dict[str, Any]:
            return messages.pop(0) if messages else await receive()

        with reading_book(book):
            await self.app(scope, replay, send)


def _held(scope: Scope) -> tuple[str, ...] | None:
    held: tuple[str, ...] | None = (scope.get("state") or {}).get(BOOKS_STATE)  # the admitted key's, a tuple
    return held


def _known_books() -> list[str]:
    from bookrag.config.settings import get_settings
    from bookrag.services.container import container_for

    return container_for(get_settings()).books()
