"""Server-Sent Events for `POST /api/answer/stream`: the agent's events as `text/event-stream`.

Events, in order: `sources` (the sections retrieved, before the answer), `delta` (answer text as it is
produced), then either `final` (the complete response, exactly the body `/api/answer` returns) or
`error` (the agent envelope of `contracts.envelope`). Behind API Gateway's HTTP API and Mangum the
body is buffered and delivered whole: still valid SSE, only not incremental (README, "Streaming").
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from starlette.responses import StreamingResponse

from bookrag import errors
from bookrag.contracts.envelope import error_body
from bookrag.observability import record_refusal

if TYPE_CHECKING:
    from bookrag.answering.agent import AgentEvent

MEDIA_TYPE = "text/event-stream"
logger = logging.getLogger("bookrag.web")


def frame(event: str, data: Any) -> bytes:
    """One SSE event; the JSON payload is on one line (json.dumps escapes newlines)."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def encode(event: AgentEvent) -> bytes:
    if event.kind == "sources":
        return frame("sources", {"sources": [s.model_dump(exclude_none=True) for s in event.sources]})
    if event.kind == "delta":
        return frame("delta", {"text": event.text})
    record_refusal(event.response.is_refusal)
    return frame("final", event.response.model_dump(mode="json", exclude_none=True))


def frames(first: AgentEvent, rest: Iterator[AgentEvent]) -> Iterator[bytes]:
    """`first`, then the rest of the events; a failure among them becomes the stream's `error` event."""
    yield encode(first)
    try:
        for event in rest:
            yield encode(event)
    except errors.BookRAGError as exc:  # the status line is sent: the failure travels as an event
        if exc.http_status >= 500:
            logger.warning("stream failed", extra={"code": exc.code, "error_class": type(exc).__name__})
        yield frame("error", error_body(exc, "agent"))
    except Exception as exc:
        logger.error("unhandled error in stream", extra={"error_class": type(exc).__name__})
        yield frame("error", error_body(errors.BookRAGError(), "agent"))


def event_stream(events: Iterator[AgentEvent], headers: dict[str, str] | None = None) -> StreamingResponse:
    """The response for `events`, with `headers` added. The first event is produced here, before the status
    line: input, session and retrieval errors still get their own status and the JSON envelope."""
    first = next(events)
    # no-cache and no proxy buffering: each event should reach the reader as soon as it is written.
    return StreamingResponse(frames(first, events), media_type=MEDIA_TYPE,
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", **(headers or {})})
