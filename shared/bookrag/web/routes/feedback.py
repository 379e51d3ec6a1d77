"""`POST /api/feedback`: a reader's thumbs up or down on one answer (`services.question_log.add_feedback`).

Guarded like the answer route (the same keys, a publishable key included, origins, rate limits and body
limit: the app's middleware and `auth.keys.PUBLISHABLE_PATHS`); bounded by its request model."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from bookrag.contracts.base import ErrorBody
from bookrag.contracts.feedback import FeedbackRequest, FeedbackResponse
from bookrag.services.container import current
from bookrag.services.question_log import add_feedback

router = APIRouter(prefix="/api")

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "INVALID_QUERY_ID, INVALID_RATING, INVALID_COMMENT, COMMENT_TOO_LONG, "
                                             "INVALID_REQUEST (an unknown field)"},
    404: {"model": ErrorBody, "description": "QUERY_NOT_FOUND: no answer with this id (never given, expired, or "
                                             "the question log is off)"},
    409: {"model": ErrorBody, "description": "FEEDBACK_EXISTS: this answer already has its vote (a comment may "
                                             "join a vote of the same rating that has none, once)"},
    503: {"model": ErrorBody, "description": "QUESTION_LOG_UNAVAILABLE: the vote could not be stored; retry"},
}


@router.post("/feedback", response_model=FeedbackResponse, status_code=201, responses=_ERRORS, tags=["feedback"])
def feedback(body: FeedbackRequest) -> FeedbackResponse:
    """Vote on an answer: `query_id` is its `X-Query-Id` header. One vote per answer; a short comment may
    say what was wrong (e-mail addresses, phone numbers and secrets are removed before it is kept), sent
    with the vote or once afterwards with the same rating."""
    add_feedback(current(), body.query_id, body.rating, body.comment)
    return FeedbackResponse(query_id=body.query_id, rating=body.rating)
