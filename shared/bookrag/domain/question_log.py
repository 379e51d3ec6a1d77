"""What the question log keeps of one request, a reader's vote on an answer, and the `QuestionLog` port.

The log is how a book's owner learns what readers ask and where the book is silent. Readers are students,
so a record holds no personal data: no IP address, user agent or key, only a hash of the key's id, and a
question scrubbed before it is stored (`text.scrub`). A record is written after the response is built and
off the request's path; a failed write never fails the reader's request.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, Protocol

from bookrag.domain.books import DEFAULT_BOOK

Route = Literal["answer", "answer_stream", "retrieve", "mcp_answer", "mcp_retrieve"]
Outcome = Literal["answered", "refused", "error"]
Rating = Literal["up", "down"]

QUERY_ID_PATTERN = r"^query_[0-9a-f]{32}$"  # the REST contract's query_id shape; answers' X-Query-Id too
COMMENT_MAX_CHARS = 500  # a short comment after a "down": enough for "the formula is wrong", not an essay


@dataclass(frozen=True, slots=True)
class LoggedSection:
    """A section the response cited (answers) or returned (retrieval), best first."""

    url: str  # the chunk's page URL with its anchor: the section a reader would open
    title: str  # the section's heading path, " > " joined
    score: float


@dataclass(frozen=True, slots=True)
class QueryRecord:
    query_id: str  # also the `X-Query-Id` header a reader's feedback names
    at: float  # epoch seconds (UTC)
    route: Route
    question: str  # scrubbed
    book_version: str
    outcome: Outcome
    refusal_reason: str | None  # the refusal's or error's code; None when answered
    sections: tuple[LoggedSection, ...]
    latency_ms: float
    answerer: str  # "extractive", "gemini", ...; "" for retrieval
    key_hash: str  # a hash of the API key's id ("anonymous" when auth is off); never the key
    top_score: float | None = None  # the best retrieved chunk's similarity: low means the book is thin here
    book: str = DEFAULT_BOOK  # the book the request read (`domain.books`): each book has its own report


@dataclass(frozen=True, slots=True)
class FeedbackRecord:
    query_id: str
    rating: Rating
    at: float
    comment: str | None = None  # scrubbed, at most COMMENT_MAX_CHARS
    book: str = DEFAULT_BOOK  # the book of the vote's request: a vote names only a query of its own book


def comments_later(earlier: FeedbackRecord, later: FeedbackRecord) -> bool:
    """Whether `later` attaches a comment to the vote `earlier` without changing it: the widget sends a
    thumbs-down when it is given (so closing the comment box loses nothing) and its comment, if the reader
    writes one, afterwards. A changed rating or a second comment is a second vote."""
    return later.comment is not None and earlier.comment is None and later.rating == earlier.rating


class QuestionLog(Protocol):
    """Where records and votes are kept: a folder of JSON lines (`bookrag serve`) or DynamoDB (Lambda)."""

    def write(self, records: list[QueryRecord]) -> None:
        """Store a batch of records (the writer batches them off the request path)."""

    def add_feedback(self, feedback: FeedbackRecord) -> None:
        """Store a vote, or attach its comment to the vote already stored (`comments_later`). Raises
        `UnknownQueryError` for a query id the log does not hold and `FeedbackExistsError` when that query
        already has a vote this one does not just comment on."""

    def records(self, since: float) -> Iterator[QueryRecord]:
        """Every record at or after `since` (epoch seconds), in no promised order."""

    def feedback(self, since: float) -> Iterator[FeedbackRecord]:
        """Every vote at or after `since`."""
