"""Agent route: POST /api/answer (the BookRAGAgent contract over HTTP)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from bookrag.contracts.agent import AnswerErrorBody, AnswerRequest, Response
from bookrag.observability import record_refusal
from bookrag.services.container import current

router = APIRouter(prefix="/api")

_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": AnswerErrorBody, "description": description}
    for status, description in ((400, "Invalid query (INVALID_QUERY, INVALID_QUERY_LENGTH)"),
                                (429, "Rate limited; see Retry-After"),
                                (500, "Embedding, retrieval or answering failed (see error_type)"))
}


@router.post("/answer", response_model=Response, responses=_ERRORS, tags=["agent"])
def answer(body: AnswerRequest) -> Response:
    """Answer a question from the book only, citing its sections; or refuse with the nearest sections."""
    response = current().agent.run(body.query)
    record_refusal(response.is_refusal)
    return response
