"""Agent routes: POST /api/answer (the BookRAGAgent contract over HTTP) and its stream, POST /api/answer/stream."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fastapi import APIRouter, Request
from fastapi import Response as HttpResponse
from starlette.responses import StreamingResponse

from bookrag.contracts.agent import AnswerErrorBody, AnswerRequest, Response
from bookrag.domain.edition import Reading, reading
from bookrag.domain.question_log import QUERY_ID_PATTERN, Route
from bookrag.services.container import Container, current
from bookrag.services.editions import annotate, edition_headers, scoped_steps
from bookrag.services.question_log import HEADER, Entry, logging_on
from bookrag.web.middleware.api_key import caller
from bookrag.web.middleware.retrieval_mode import DOCUMENTED as RETRIEVAL_MODE
from bookrag.web.sse import event_stream

router = APIRouter(prefix="/api")

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": AnswerErrorBody, "description": description}
    for status, description in ((400, "Invalid query (INVALID_QUERY, INVALID_QUERY_LENGTH) or conversation "
                                      "(INVALID_HISTORY, HISTORY_TOO_LONG, INVALID_SESSION_ID, INVALID_SELECTION, "
                                      "SELECTION_TOO_LONG, INVALID_SOURCE, CONFLICTING_CONVERSATION)"),
                                (404, "SESSION_NOT_FOUND: the session is unknown, expired, or another API key's"),
                                (503, "SESSION_STORE_UNAVAILABLE: sessions cannot be read or written; retry"),
                                (429, "Rate limited; see Retry-After"),
                                (500, "Embedding, retrieval or answering failed (see error_type)"))
}


_QUERY_ID: dict[str, Any] = {HEADER: {
    "description": "This answer's id in the question log, for `POST /api/feedback` (absent when the log is off)",
    "schema": {"type": "string", "pattern": QUERY_ID_PATTERN}}, **RETRIEVAL_MODE}


# Fields that are None are left out: without a conversation the body is exactly the contract's Response.
@router.post("/answer", response_model=Response, responses={200: {"headers": _QUERY_ID}, **_ERRORS}, tags=["agent"],
             response_model_exclude_none=True)
def answer(body: AnswerRequest, request: Request, http: HttpResponse) -> Response:
    """Answer a question from the book only, citing its sections; or refuse with the nearest sections.

    Follow-ups: send the earlier turns (`history`) or a `session_id` (from a turn sent with
    `start_session`); the response's `standalone_question` is what was searched. About a passage:
    send `selected_text` (and `source_url` or `source_file` when known). The `X-Query-Id` header names
    the answer for `POST /api/feedback`; `X-Answer-Mode: quoted` says the model's answer did not hold
    against the book and the answer is the book's own sentences."""
    from bookrag.services.conversations import answer_recorded

    container, entry = _entry(request, body, "answer")
    with reading(body.locale, body.version) as seen:
        response = annotate(answer_recorded(container, body, entry), body, seen)
    http.headers.update(edition_headers(seen))
    if logging_on(container):
        http.headers[HEADER] = entry.query_id
    if response.answer_mode == "quoted":  # the book's sentences stand in for a model answer that did not hold
        http.headers["X-Answer-Mode"] = "quoted"
    return response


def _entry(request: Request, body: AnswerRequest, route: Route) -> tuple[Container, Entry]:
    return current(), Entry(route, body.query, caller(request.scope))


def _event(name: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": ["event", "data"],
            "properties": {"event": {"const": name},
                           "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": data}}}


# OpenAPI 3.1: the media type's `schema` describes one event (3.2 would call it `itemSchema`).
_STREAM: dict[int | str, dict[str, Any]] = {200: {
    "headers": _QUERY_ID,
    "description": "Server-Sent Events: `sources` ({sources}), `delta` ({text}) as the answer is written, then "
                   "`final` (exactly the /api/answer response) or `error` (the error envelope)",
    "content": {"text/event-stream": {"schema": {"oneOf": [
        _event("sources", {"type": "object", "required": ["sources"], "properties": {
            "sources": {"type": "array", "items": {"$ref": "#/components/schemas/Source"}}}}),
        _event("delta", {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}),
        _event("final", {"$ref": "#/components/schemas/Response"}),
        _event("error", {"$ref": "#/components/schemas/AnswerErrorBody"}),
    ]}}}}}


@router.post("/answer/stream", response_class=StreamingResponse, responses={**_STREAM, **_ERRORS}, tags=["agent"])
def answer_stream(body: AnswerRequest, request: Request) -> StreamingResponse:
    """`POST /api/answer` as Server-Sent Events: the retrieved sections, the answer's text as it is
    produced, then the complete response. Same request, limits, keys and rate limits; `X-Query-Id` too."""
    from bookrag.services.conversations import answer_events

    container, entry = _entry(request, body, "answer_stream")
    headers = {HEADER: entry.query_id} if logging_on(container) else {}
    seen: dict[str, Reading] = {}
    events = (replace(e, response=annotate(e.response, body, seen)) if e.kind == "final" and e.response else e
              for e in scoped_steps(answer_events(container, body, entry), body, seen))
    return event_stream(events, headers)
