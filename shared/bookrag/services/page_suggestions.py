"""The questions a page answers (`services.suggesting` stored them at ingest), looked up by the page's URL for
`GET /api/pages/suggestions`. Read once per book version and kept: a request costs a dict lookup."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from bookrag.adapters.store.port import SUGGESTIONS_FIELD
from bookrag.contracts.pages import PageSuggestionsResponse
from bookrag.services.book import route_of

if TYPE_CHECKING:
    from bookrag.services.container import Container

_FIELDS = ("source_file", "source_url", "doc_title", "chunk_index", SUGGESTIONS_FIELD)


@dataclass(frozen=True, slots=True)
class _Page:
    url: str
    title: str
    suggestions: tuple[str, ...]


_lock = threading.Lock()
_read: dict[int, tuple[str, dict[str, _Page]]] = {}  # per store: (book version, pages by route)


def _pages(container: Container) -> tuple[str | None, dict[str, _Page]]:
    store = container.store
    version = store.book_version()
    label = version.label if version else ""
    with _lock:
        kept = _read.get(id(store))
        if kept is not None and kept[0] == label:
            return label or None, kept[1]
    pages: dict[str, _Page] = {}
    base = container.settings.book_base_url
    for payload in store.scroll_payloads(_FIELDS):
        if int(payload.get("chunk_index") or 0) != 0:
            continue
        url = str(payload.get("source_url") or "").split("#", 1)[0]
        questions = tuple(str(q) for q in payload.get(SUGGESTIONS_FIELD) or ())
        pages[route_of(url, base)] = _Page(url=url, title=str(payload.get("doc_title") or ""), suggestions=questions)
    with _lock:
        _read[id(store)] = (label, pages)
    return label or None, pages


def _route(url: str, base_url: str, routes: dict[str, _Page]) -> str | None:
    """The route of the book page at `url`: under BOOK_BASE_URL, or, on another host (a preview, a local build),
    the longest route its path ends with ("/docs/module-1/nodes/" -> "/module-1/nodes")."""
    route = route_of(url, base_url)
    if route in routes:
        return route
    path = "/" + urlsplit(url).path.strip("/")
    found = [r for r in routes if r != "/" and (path == r or path.endswith(r))]
    return max(found, key=len) if found else None


def page_suggestions(container: Container, url: str) -> PageSuggestionsResponse:
    """The questions of the page at `url`; an unknown page has none (the widget opens on any page of the site)."""
    label, pages = _pages(container)
    route = _route(url.split("#", 1)[0].split("?", 1)[0], container.settings.book_base_url, pages)
    page = pages.get(route) if route is not None else None
    if page is None:
        return PageSuggestionsResponse(url=None, title=None, suggestions=[], book_version=label)
    return PageSuggestionsResponse(url=page.url, title=page.title, suggestions=list(page.suggestions),
                                   book_version=label)
