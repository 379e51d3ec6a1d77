"""A failed request model validation as the contract's error: the field's code from the model's `error_codes`.

Interfaces that validate a request model themselves (the MCP tools) use this; the HTTP routes get the same
codes through `web.errors`, and the MCP client tests compare the two for the same bad input.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from bookrag import errors
from bookrag.contracts.envelope import CODE_MESSAGES


def invalid_input(model: type[BaseModel], exc: ValidationError) -> errors.InvalidInputError:
    """The first failed field that `model.error_codes` names decides the code; otherwise INVALID_REQUEST."""
    codes: dict[str, tuple[str, str]] = getattr(model, "error_codes", {})
    problems: list[Any] = list(exc.errors())
    for item in problems:
        loc = [str(p) for p in item.get("loc", ())]
        field = loc[0] if loc else None
        if field is None or field not in codes:
            continue
        missing_code, long_code = codes[field]
        code = long_code if item.get("type") == "string_too_long" else missing_code
        return errors.InvalidInputError(CODE_MESSAGES[code], code=code, field=field)
    loc = [str(p) for p in (problems[0].get("loc", ()) if problems else ())]
    return errors.InvalidInputError(CODE_MESSAGES["INVALID_REQUEST"], code="INVALID_REQUEST",
                                    field=loc[0] if loc else None)
