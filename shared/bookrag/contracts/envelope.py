"""The one error envelope: every error body of every interface is built here.

REST, the tools, health, the body-size limit and the rate limit all answer
`{"error", "code", "details", "recoverable"}` (the REST contract's envelope, with `recoverable` added);
`/api/answer` adds the agent contract's `message` and `error_type`. A field or code added here reaches
every route at once.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from bookrag import errors

Envelope = Literal["rest", "agent"]

# The message of each request-validation code, as the contracts word them.
CODE_MESSAGES = {
    "MISSING_QUERY": "Query text is required",
    "INVALID_QUERY_LENGTH": "Query is too long",
    "INVALID_TOP_K": "top_k must be an integer between 1 and 10",
    "INVALID_SCORE_THRESHOLD": "Score threshold must be a number between 0.0 and 1.0",
    "INVALID_QUERY": "Invalid query provided",
    "INVALID_REQUEST": "Request body must be a JSON object with the documented fields",
    "INVALID_HISTORY": "history must be a list of {question, answer} turns",
    "HISTORY_TOO_LONG": "history has too many turns, or a turn is too long",
    "INVALID_SESSION_ID": "session_id is not a session id this service issued",
    "INVALID_SELECTION": "selected_text must be a non-empty string",
    "SELECTION_TOO_LONG": "selected_text is too long",
    "INVALID_SOURCE": "source_url and source_file must be non-empty strings of limited length",
    "INVALID_QUERY_ID": "query_id must be the X-Query-Id of an answer",
    "INVALID_RATING": 'rating must be "up" or "down"',
    "INVALID_COMMENT": "comment must be a string",
    "COMMENT_TOO_LONG": "comment is too long",
}


def error_body(exc: errors.BookRAGError, interface: Envelope = "rest") -> dict[str, Any]:
    """The envelope for `exc`; its message is ours, never an upstream's text."""
    body: dict[str, Any] = {"error": exc.message, "code": exc.code, "details": dict(exc.details),
                            "recoverable": exc.recoverable}
    if interface == "agent":
        # Imported here: the agent contract's models cost a health check or a retrieval cold start ~40 ms.
        from bookrag.contracts.agent import agent_error_fields

        body.update(agent_error_fields(exc))
    return body


def error_headers(exc: errors.BookRAGError) -> dict[str, str]:
    """Retry-After (whole seconds, at least 1) for errors that carry a hint."""
    retry_after = getattr(exc, "retry_after", None)
    return {} if retry_after is None else {"Retry-After": str(max(1, round(retry_after)))}


def error_json(exc: errors.BookRAGError, interface: Envelope = "rest") -> bytes:
    """The envelope as JSON bytes, for the middleware that answers before FastAPI does."""
    return json.dumps(error_body(exc, interface)).encode()


def interface_of(path: str) -> Envelope:
    """Which contract a path answers to: `/api/answer...` is the agent's, the rest are REST's."""
    return "agent" if path.startswith("/api/answer") else "rest"


