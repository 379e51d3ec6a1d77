"""What every request model at an edge shares: query normalisation, score and filter types, and the
contract error codes of each field.

Each request model names, per field, the contract's code for a missing, empty or wrong-typed value
and for a too-long one (`error_codes`); the web layer reads them from the model of the route that
failed, so a new route brings its codes with it.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bookrag.domain.query import normalize_query

# (code for a missing, empty or wrong-typed value, code for a too-long value)
FieldCodes = dict[str, tuple[str, str]]

# Unknown request fields are ignored on every route (extra="ignore"), consistently.
_REQUEST = ConfigDict(extra="ignore", str_strip_whitespace=False)
Score = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Filter = Annotated[str | None, Field(default=None, min_length=1, max_length=200)]


class QueryRequest(BaseModel):
    """A request whose `query` is normalised (`normalize_query`) before its limits are checked."""

    model_config = _REQUEST
    error_codes: ClassVar[FieldCodes] = {}

    @field_validator("query", mode="before", check_fields=False)
    @classmethod
    def _normalize(cls, value: object) -> object:
        return normalize_query(value) if isinstance(value, str) else value


class ErrorBody(BaseModel):
    """The error envelope of every route: the REST contract's, with `recoverable` added."""

    error: str
    code: str
    details: dict[str, Any] = Field(default_factory=dict)
    recoverable: bool = False
