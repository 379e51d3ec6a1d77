"""What every request model at an edge shares: query normalisation, the JSON number types, score and
filter types, and the contract error codes of each field.

Each request model names, per field, the contract's codes (`error_codes`); the web layer reads them
from the model of the route that failed, so a new route brings its codes with it.

Every constraint here is one the OpenAPI document states, so a request the schema allows is accepted
and one it forbids is refused:
- an `integer` accepts any JSON number with a zero fraction (`9.0` is an integer in JSON Schema, and
  LLM tool callers send it) and refuses booleans, strings and fractions;
- a `number` refuses booleans and strings (JSON Schema's number is not JSON's true, nor "0.7");
- a query's limits count its characters as sent (JSON Schema's minLength/maxLength), and its
  `pattern` asks for one visible character, the same rule as "not empty once normalised".
"""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar, NamedTuple

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, field_validator
from pydantic_core import PydanticCustomError

from bookrag.domain.query import VISIBLE_CHARACTER, normalize_query


class Codes(NamedTuple):
    """One field's contract codes: missing or empty, too long, and of the wrong JSON type."""

    invalid: str
    too_long: str
    wrong_type: str | None = None  # None: the `invalid` code


FieldCodes = dict[str, Codes]

# Unknown request fields are ignored on every route (extra="ignore"), consistently.
_REQUEST = ConfigDict(extra="ignore", str_strip_whitespace=False)


def _json_integer(value: Any) -> Any:
    """JSON Schema's integer: 9.0 is one, True and "9" are not (pydantic's lax int would take both)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PydanticCustomError("int_type", "Input should be an integer")
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise PydanticCustomError("int_from_float", "Input should be an integer")
        return int(value)
    return value


def _json_number(value: Any) -> Any:
    """JSON Schema's number: refuses booleans and strings (pydantic's lax float takes True and "0.7")."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PydanticCustomError("float_type", "Input should be a number")
    return float(value)


JsonInt = Annotated[StrictInt, BeforeValidator(_json_integer)]
JsonNumber = Annotated[float, Field(allow_inf_nan=False), BeforeValidator(_json_number)]
# Constraints before the validator: after it, pydantic writes them into the JSON schema as raw "ge"/"le"
# (not JSON Schema), and schema-valid bounds would look unconstrained.
Score = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False), BeforeValidator(_json_number)]
Filter = Annotated[str | None, Field(default=None, min_length=1, max_length=200)]


def query_field(max_chars: int, description: str) -> Any:
    """A `query` field: 1..max_chars characters as sent, at least one of them visible."""
    return Field(min_length=1, max_length=max_chars, pattern=VISIBLE_CHARACTER, description=(
        f"{description}. 1 to {max_chars} characters as sent, at least one visible (not white space, a "
        "control or an invisible format character); the query is then normalised (NFC, controls and "
        "invisible characters removed, white space folded) before it is used."))



class QueryRequest(BaseModel):
    """A request whose `query` is checked as sent, then normalised (`normalize_query`).

    Every query may name the site edition it reads (issue 35): optional, so each contract's own fields,
    defaults and errors are unchanged. A locale or version the book lacks is not an error: the answer
    comes from the site's default, and says so."""

    model_config = _REQUEST
    error_codes: ClassVar[FieldCodes] = {}

    locale: Filter = Field(None, description=(
        "For a book ingested from a Docusaurus site: the locale to read (`ur`, or a language tag such as "
        "`ur-PK`, read by its language). Default: the site's default locale. One the book lacks falls back "
        "to it, and the response says so (`edition_note`)"))
    version: Filter = Field(None, description=(
        "For a versioned site: the docs version to read, by name (`2.0`, `current`; `next` is the current "
        "one). Default: the version the site serves by default. One the book lacks falls back to it, and "
        "the response says so (`edition_note`)"))

    @field_validator("query", mode="after", check_fields=False)
    @classmethod
    def _normalize(cls, value: str) -> str:
        return normalize_query(value)


class ErrorBody(BaseModel):
    """The error envelope of every route: the REST contract's, with `recoverable` added."""

    error: str
    code: str
    details: dict[str, Any] = Field(default_factory=dict)
    recoverable: bool = False
