"""The site edition a request reads (issue 35), as each interface reports it.

The routes and the MCP server enter `domain.edition.reading` with the request's `locale` and `version`;
the retriever confines every search to the edition they resolve to. What was read is then reported
without changing any contract's body for a request that named no edition: the answer's optional
`locale`, `version` and `edition_note` fields, the `X-Book-Edition` header (`ur/2.0`) and
`X-Book-Edition-Fallback` (why it differs from the request: `locale`, `version`, `untranslated`), and
MCP's `_meta`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from bookrag.domain.edition import Reading, reading

if TYPE_CHECKING:
    from bookrag.contracts.agent import Response

__all__ = ["EDITION_HEADER", "FALLBACK_HEADER", "annotate", "edition_headers", "scoped_steps"]

EDITION_HEADER = "X-Book-Edition"
FALLBACK_HEADER = "X-Book-Edition-Fallback"
T = TypeVar("T")


def _asked(request: Any) -> tuple[str | None, str | None]:
    return getattr(request, "locale", None), getattr(request, "version", None)


def scoped_steps(steps: Iterator[T], request: Any, seen: dict[str, Reading]) -> Iterator[T]:
    """`steps` with the request's edition entered around each one: a stream's steps may each run in
    another copy of the context (Starlette iterates a sync stream in a thread pool)."""
    locale, version = _asked(request)
    while True:
        with reading(locale, version, seen):
            try:
                step = next(steps)
            except StopIteration:
                return
        yield step


def annotate(response: Response, request: Any, seen: dict[str, Reading]) -> Response:
    """The answer, naming the edition it came from when the request named one or it fell back."""
    found = seen.get("read")
    locale, version = _asked(request)
    if found is not None and (locale or version or found.fallbacks):
        response.locale, response.version, response.edition_note = found.locale, found.version, found.note
    return response


def edition_headers(seen: dict[str, Reading]) -> dict[str, str]:
    """`X-Book-Edition` and, when it differs from the request's, `X-Book-Edition-Fallback` (ASCII only:
    a header never carries what the reader typed)."""
    found = seen.get("read")
    if found is None:
        return {}
    out = {EDITION_HEADER: found.label.encode("ascii", "replace").decode()}
    if found.fallbacks:
        out[FALLBACK_HEADER] = ",".join(found.fallbacks)
    return out
