"""Schemathesis against the app's own /openapi.json, in process (ASGI), on the indexed sample book.

Valid and invalid bodies are generated for every operation (a bounded, deterministic run): no input
may cause a 5xx, every response must match the schema the app publishes, and every 4xx must be the
contract's envelope {error, code, details}.
"""

from __future__ import annotations

from typing import Any

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

MAX_EXAMPLES = 30  # per operation, valid and invalid inputs together


def _load_schema() -> Any:
    # Loaded at collection (schemathesis's lazy `from_fixture` does not support pytest 9 yet): the app
    # reads its settings per request, so building it here is independent of any test's environment.
    from bookrag.web.app import create_app

    loaded = schemathesis.openapi.from_asgi("/openapi.json", create_app("all"))
    loaded.config.generation.update(modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
                                    max_examples=MAX_EXAMPLES, deterministic=True)
    return loaded


schema = _load_schema()


def envelope_for_client_errors(ctx: Any, response: Any, case: Any) -> bool | None:
    """Every 4xx is the contract's error envelope, with a code and no upstream detail."""
    if 400 <= response.status_code < 500:
        body = response.json()
        assert isinstance(body, dict) and {"error", "code", "details"} <= set(body), body
        assert isinstance(body["code"], str) and body["code"].isupper()
        assert isinstance(body["details"], dict) and body["error"]
    return None


@schema.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
def test_no_generated_input_breaks_the_api(case: Any, book_env: Any) -> None:
    case.call_and_validate(checks=[not_a_server_error, status_code_conformance, content_type_conformance,
                                   response_schema_conformance],
                           additional_checks=[schemathesis.check(envelope_for_client_errors)])
