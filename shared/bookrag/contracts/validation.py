"""A failed request validation as the contract's error: the field's code from the model's `error_codes`.

The one mapping for every interface: the HTTP routes (`web.errors`, for FastAPI's validation of the
route's model), the MCP tools and the conversation fields of the Python API (which validate a model
themselves). The MCP client tests compare REST and MCP bodies for the same bad input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bookrag import errors
from bookrag.contracts.base import FieldCodes
from bookrag.contracts.envelope import CODE_MESSAGES

# pydantic error types that mean "a value of the wrong JSON type" (a field's `wrong_type` code).
_WRONG_TYPE = {"string_type", "string_unicode", "int_type", "int_from_float", "float_type", "bool_type"}
_TOO_LONG = {"string_too_long", "too_long"}


def invalid_input(codes: FieldCodes, problems: Sequence[Mapping[str, Any]]) -> errors.InvalidInputError:
    """The first failed field that `codes` names decides the code; otherwise INVALID_REQUEST.

    `problems` are pydantic's error dicts (FastAPI's prefix their location with "body")."""
    for item in problems:
        loc = [str(p) for p in item.get("loc", ()) if p != "body"]
        field = loc[0] if loc else None
        if field is None or field not in codes:
            continue
        field_codes = codes[field]
        kind = item.get("type")
        if kind in _TOO_LONG:
            code = field_codes.too_long
        elif kind in _WRONG_TYPE and field_codes.wrong_type:
            code = field_codes.wrong_type
        else:
            code = field_codes.invalid
        return errors.InvalidInputError(CODE_MESSAGES[code], code=code, field=field)
    loc = [str(p) for p in (problems[0].get("loc", ()) if problems else ()) if p != "body"]
    return errors.InvalidInputError(CODE_MESSAGES["INVALID_REQUEST"], code="INVALID_REQUEST",
                                    field=loc[0] if loc else None)


def model_codes(model: object) -> FieldCodes:
    """A request model's `error_codes` ({} for anything else)."""
    codes: FieldCodes = getattr(model, "error_codes", {}) if isinstance(model, type) else {}
    return codes
