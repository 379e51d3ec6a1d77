"""`GET /api/pages/suggestions?url=...`: the questions a page answers, for the widget's opening panel (issue 36).

Guarded like the answer route (keys, a publishable key included, origins, rate limits). Cached by browsers
and CDNs for a few minutes: the questions change only with the book version, which the response names."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi import Response as HttpResponse

from bookrag.contracts.base import ErrorBody
from bookrag.contracts.pages import MAX_URL_CHARS, PageSuggestionsResponse
from bookrag.services.container import current

router = APIRouter(prefix="/api")

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "INVALID_REQUEST: `url` missing, empty or too long"},
}
CACHE_SECONDS = 300  # a new book version reaches readers within five minutes


@router.get("/pages/suggestions", response_model=PageSuggestionsResponse, responses=_ERRORS, tags=["widget"])
def suggestions(url: Annotated[str, Query(min_length=1, max_length=MAX_URL_CHARS, pattern=r"\S",
                                          description="The page's address (the reader's location)")],
                http: HttpResponse) -> PageSuggestionsResponse:
    """Up to three questions the book page at `url` answers, each checked at ingest against the book's own
    answerer; an address that is no page of the book has none."""
    from bookrag.services.page_suggestions import page_suggestions  # not on the health or answer path

    http.headers["Cache-Control"] = f"public, max-age={CACHE_SECONDS}"
    return page_suggestions(current(), url)
