"""The reader's side: the widget's two files at a stable path, and the demo page (`/demo`).

Served without a key (`auth.guard.OPEN_PATHS`): a public page loads them before anyone has a key, and
they contain nothing but static code and the book's own text. Not in the OpenAPI document: they are
not part of the API's contract.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from fastapi import APIRouter, Query
from starlette.responses import HTMLResponse, Response

from bookrag.errors import InvalidInputError
from bookrag.services.container import current

WIDGET_PATH = "/widget/v1"
DEMO_PAGE = "/module-1-ros2/nodes-topics"
_TYPES = {"bookrag.js": "text/javascript; charset=utf-8", "bookrag.css": "text/css; charset=utf-8"}

router = APIRouter(include_in_schema=False)


@cache
def _asset(name: str) -> bytes:
    return (files("bookrag.web") / "static" / "widget" / "v1" / name).read_bytes()


def _serve(name: str) -> Response:
    # A day, then revalidated: v1 is a stable path, so fixes still reach pages within a day.
    return Response(_asset(name), media_type=_TYPES[name], headers={"Cache-Control": "public, max-age=86400"})


@router.get(f"{WIDGET_PATH}/bookrag.js")
def widget_js() -> Response:
    return _serve("bookrag.js")


@router.get(f"{WIDGET_PATH}/bookrag.css")
def widget_css() -> Response:
    return _serve("bookrag.css")


@router.get("/demo", response_class=HTMLResponse)
def demo(page: str | None = Query(None, max_length=300)) -> HTMLResponse:
    """One chapter of the indexed book with the widget; `?page=<route>` picks another chapter."""
    from bookrag.services.book import chapter, table_of_contents
    from bookrag.web.demo import page as render

    container = current()
    toc = table_of_contents(container.store, container.settings.book_base_url)
    if not toc:
        raise InvalidInputError("No book is indexed yet: run `bookrag ingest` first", code="NOT_FOUND", status=404)
    # Default: the sample book's chapter on nodes and topics, else the first chapter with several sections.
    entry = next((e for e in toc if e.route == (page or DEMO_PAGE)), None)
    if entry is None and not page:
        entry = next((e for e in toc if len(e.sections) >= 5), toc[0])
    if entry is None:
        raise InvalidInputError("No such page in the book", code="NOT_FOUND", status=404)
    others = [e for e in toc if e is not entry]
    return HTMLResponse(render(entry, chapter(container.store, entry), others, "the book"),
                        headers={"Cache-Control": "no-cache"})

