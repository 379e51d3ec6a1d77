"""A document's MCP resource name: its Docusaurus route, read back from a chunk's source_url."""

from __future__ import annotations

import pytest

from bookrag.services.book import route_of

BASE = "https://x.github.io/book/docs"


@pytest.mark.parametrize(("url", "base", "route"), [
    (f"{BASE}/module-1-ros2/nodes#topics", BASE, "/module-1-ros2/nodes"),
    (f"{BASE}/module-1-ros2/nodes", f"{BASE}/", "/module-1-ros2/nodes"),
    ("http://localhost:3000/docs/intro", "http://localhost:3000/docs", "/intro"),
    ("http://localhost:3000/docs/", "http://localhost:3000/docs", "/"),
    # Ingested under another BOOK_BASE_URL: the URL's own path, rather than a wrong cut.
    ("https://old.example/docs/intro#a", "https://new.example/book", "/docs/intro"),
])
def test_route_of(url: str, base: str, route: str) -> None:
    assert route_of(url, base) == route
