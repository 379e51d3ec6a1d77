"""`POST /api/feedback`: a reader's vote on one answer, named by the answer's `X-Query-Id` header."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bookrag.contracts.base import Codes, FieldCodes
from bookrag.domain.query import normalize_query
from bookrag.domain.question_log import COMMENT_MAX_CHARS, QUERY_ID_PATTERN


class FeedbackRequest(BaseModel):
    # Unlike the question routes (which ignore unknown fields, as their contracts ask), a vote is a new,
    # small shape of our own: an unknown field is a client's mistake worth telling it about.
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)

    error_codes: ClassVar[FieldCodes] = {
        "query_id": Codes("INVALID_QUERY_ID", "INVALID_QUERY_ID"),
        "rating": Codes("INVALID_RATING", "INVALID_RATING"),
        "comment": Codes("INVALID_COMMENT", "COMMENT_TOO_LONG"),
    }

    query_id: str = Field(pattern=QUERY_ID_PATTERN, description="The answer's `X-Query-Id` header")
    rating: Literal["up", "down"] = Field(description="Whether the answer helped")
    comment: str | None = Field(None, max_length=COMMENT_MAX_CHARS, description=(
        f"What was wrong or missing, at most {COMMENT_MAX_CHARS} characters; e-mail addresses, phone numbers "
        "and anything that looks like a secret are removed before it is stored"))

    @field_validator("comment", mode="after")
    @classmethod
    def _normalize(cls, value: str | None) -> str | None:
        return (normalize_query(value) or None) if value is not None else None


class FeedbackResponse(BaseModel):
    query_id: str
    rating: Literal["up", "down"]
