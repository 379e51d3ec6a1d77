"""`GET /api/pages/suggestions`: the questions a page of the book answers, for the widget's opening panel."""

from __future__ import annotations

from pydantic import BaseModel, Field

MAX_URL_CHARS = 2000  # a browser's address; longer is not a page of ours


class PageSuggestionsResponse(BaseModel):
    url: str | None = Field(description="The book page the URL was matched to (its address under BOOK_BASE_URL); "
                                        "null when it is no page of the book")
    title: str | None = Field(description="That page's title")
    suggestions: list[str] = Field(max_length=3, description=(
        "Up to three questions the page answers, found at ingest: each one the book's own answerer answered "
        "from this page; empty for a page without any, or a URL that is no page of the book"))
    book_version: str | None = Field(description="The book version the questions were checked against")
