"""Which book a request or a command reads (issue 38): book ids, the store name each book lives under, and the
book of the current request.

One deployment serves many books. Each book is its own versioned collection in the store (`collection_of`):
the default book keeps the name it always had (`QDRANT_COLLECTION`, `book_chunks`), so a one-book deployment,
its keys and its folders stay exactly as they were; book `redux` lives under `book_chunks--redux`, with its own
versions (`book_chunks--redux__v<time>_<hash>`), its own alias or pointer, its own lock and rollback.

The request's book is a context variable, set once by the web middleware (`web/middleware/book.py`) from the
key's books and the request's `X-Book` header or `book` field, and read by `services.container.current()`.
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

DEFAULT_BOOK = "default"
BOOK_HEADER = "X-Book"
BOOK_FIELD = "book"
# Lower case, digits and single dashes: safe in a collection name, a folder name, a DynamoDB key and a URL.
# Lower case, digits and single dashes: safe in a collection name, a folder name, a DynamoDB key and a URL.
# Written again in `config.settings` (_BOOK): importing the settings would load pydantic on a health call.
_BOOK_ID = re.compile(r"[a-z0-9](?:[a-z0-9]|-(?!-)){0,39}")
# Between the base collection and a book id: never in a book id (no double dash), never in a version name.
BOOK_SEPARATOR = "--"

_BOOK: contextvars.ContextVar[str | None] = contextvars.ContextVar("bookrag_book", default=None)


def valid_book_id(book: str) -> bool:
    return bool(_BOOK_ID.fullmatch(book))


def collection_of(base: str, book: str) -> str:
    """The alias (remote) or pointer name (embedded) book `book` lives under, for QDRANT_COLLECTION `base`."""
    return base if book == DEFAULT_BOOK else f"{base}{BOOK_SEPARATOR}{book}"


def book_of(base: str, name: str) -> str | None:
    """The book whose alias or pointer `name` is (the reverse of `collection_of`), None for another name."""
    if name == base:
        return DEFAULT_BOOK
    head, sep, book = name.partition(BOOK_SEPARATOR)
    return book if sep and head == base and valid_book_id(book) and book != DEFAULT_BOOK else None


def books_among(base: str, names: Iterable[str]) -> list[str]:
    """The books named by `names` (aliases, pointers, plain collections), sorted, default first."""
    found = {b for b in (book_of(base, n) for n in names) if b is not None}
    return sorted(found, key=lambda b: (b != DEFAULT_BOOK, b))


def current_book() -> str:
    """The book the current request reads (the default book outside a request, or when none was chosen)."""
    return _BOOK.get() or DEFAULT_BOOK


@contextmanager
def reading_book(book: str) -> Iterator[str]:
    """Read `book` for the duration of the block (a request, an MCP call, a command)."""
    token = _BOOK.set(book)
    try:
        yield book
    finally:
        _BOOK.reset(token)
