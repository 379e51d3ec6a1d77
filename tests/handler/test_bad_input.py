"""Bad input through the real Lambda entry point (Mangum) and the app: size limit, unknown fields, queries
that need normalising, and generated queries, on the indexed sample book."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bookrag.domain.query import normalize_query
from bookrag.web.middleware.body_limit import MAX_BODY_BYTES
from tests.support.events import body_of, load_event

# Each retrieval route's event in events/, and the field of its response that identifies the results.
ROUTE_EVENTS = {
    "retrieve-valid.json": lambda b: [c["chunk_id"] for c in b["retrieved_chunks"]],
    "tool-retrieve-book-content.json": lambda b: [r["id"] for r in b["results"]],
    "tool-perform-retrieval.json": lambda b: [(r["source_url"], r["position"]) for r in b["results"]],
    "tool-retrieve-book-context.json": lambda b: [s["chunk_id"] for s in b["sources"]],
}


@pytest.fixture(autouse=True)
def _on_sample_book(book_env: Any) -> None:
    """Every test here runs against the session's indexed sample book."""


def _event_body(name: str) -> dict[str, Any]:
    event = load_event(name)
    raw = base64.b64decode(event["body"]) if event.get("isBase64Encoded") else event["body"].encode()
    body: dict[str, Any] = json.loads(raw)
    return body


def _raw_event(name: str, raw: bytes, *, base64_encoded: bool) -> dict[str, Any]:
    event = load_event(name)
    event["body"] = base64.b64encode(raw).decode() if base64_encoded else raw.decode()
    event["isBase64Encoded"] = base64_encoded
    return event


# --- size limit ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("base64_encoded", [True, False])
@pytest.mark.parametrize("name", list(ROUTE_EVENTS))
def test_an_oversized_body_gets_413_before_anything_else(retrieval_handler: Any, lambda_context: Any, name: str,
                                                        base64_encoded: bool) -> None:
    # GIVEN a well-formed request padded past the limit with a field nobody reads
    raw = json.dumps({**_event_body(name), "padding": "x" * MAX_BODY_BYTES}).encode()

    # WHEN it arrives through API Gateway and Mangum
    response = retrieval_handler.lambda_handler(_raw_event(name, raw, base64_encoded=base64_encoded),
                                                lambda_context)

    # THEN 413 in the contract's envelope
    assert response["statusCode"] == 413
    body = body_of(response)
    assert body["code"] == "PAYLOAD_TOO_LARGE" and body["details"] == {"max_bytes": MAX_BODY_BYTES}


def test_a_body_just_under_the_limit_is_read(retrieval_handler: Any, lambda_context: Any) -> None:
    raw = json.dumps({"query": "x" * 1001, "padding": "y" * (MAX_BODY_BYTES - 1200)}).encode()
    assert len(raw) <= MAX_BODY_BYTES

    response = retrieval_handler.lambda_handler(_raw_event("retrieve-valid.json", raw, base64_encoded=True),
                                                lambda_context)

    assert response["statusCode"] == 400 and body_of(response)["code"] == "INVALID_QUERY_LENGTH"


def test_a_body_over_the_limit_without_a_content_length_gets_413() -> None:
    """Counted as it arrives, not only as declared (a chunked body has no Content-Length)."""
    from bookrag.web.app import create_app

    client = TestClient(create_app("all"))
    chunks = iter([b'{"query": "ROS", "padding": "', b"z" * MAX_BODY_BYTES, b'"}'])

    response = client.post("/api/retrieve", content=chunks, headers={"content-type": "application/json"})

    assert response.status_code == 413 and response.json()["code"] == "PAYLOAD_TOO_LARGE"


# --- unknown fields -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(ROUTE_EVENTS))
def test_unknown_fields_are_ignored_on_every_route(retrieval_handler: Any, invoke: Any, name: str) -> None:
    # GIVEN a route's valid request, and the same request with fields no contract defines
    plain = _event_body(name)
    extended = {"temperature": 2, "query_vector": [1, 2], "__proto__": {"admin": True}, "top_K": 99,
                "filters": {"source_file": "secret.md"}, **plain}

    # WHEN both are sent
    expected = body_of(invoke(retrieval_handler, name, body=plain))
    response = invoke(retrieval_handler, name, body=extended)

    # THEN the extra fields changed nothing
    assert response["statusCode"] == 200
    identify = ROUTE_EVENTS[name]
    assert identify(body_of(response)) == identify(expected)


# --- normalisation ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("sent", "normalised"), [
    ("How do I\u200b install ROS\x00 2\u202e Humble?", "How do I install ROS 2 Humble?"),
    ("  How do I\t\tinstall\n ROS 2 Humble?  ", "How do I install ROS 2 Humble?"),
    ("Cafe\u0301 robots", "Café robots"),
])
def test_queries_are_normalised_before_anything_else(retrieval_handler: Any, invoke: Any, sent: str,
                                                      normalised: str) -> None:
    rest = body_of(invoke(retrieval_handler, "retrieve-valid.json", body={"query": sent}))
    tool = body_of(invoke(retrieval_handler, "tool-perform-retrieval.json", body={"query": sent}))

    assert rest["original_query"] == normalised
    assert tool["query"] == normalised


@pytest.mark.parametrize("name", list(ROUTE_EVENTS))
def test_a_query_that_normalises_to_nothing_is_refused(retrieval_handler: Any, invoke: Any, name: str) -> None:
    response = invoke(retrieval_handler, name, body={"query": "\u200b\x00 \u202e\ufeff\t"})

    assert response["statusCode"] == 400
    assert body_of(response)["code"] in {"MISSING_QUERY", "INVALID_QUERY"}


QUERIES = st.lists(st.one_of(st.text(max_size=30), st.sampled_from(
    ["\x00", "\u200b", "\u202e", "\ufeff", "e\u0301", "\t", "\n", "ROS 2", "Humble", "<script>", "' OR 1=1 --",
     "{{7*7}}", "../../etc/passwd"])), max_size=8).map("".join)


@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=QUERIES)
def test_any_query_gets_results_for_its_normalised_text_or_a_contract_400(query: str) -> None:
    from bookrag.web.app import create_app

    client = TestClient(create_app("all"))
    response = client.post("/api/retrieve", json={"query": query, "score_threshold": 0.0})

    normalised = normalize_query(query)
    if normalised:
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["original_query"] == normalised
        assert all(0.0 <= c["similarity_score"] <= 1.0 for c in body["retrieved_chunks"])
    else:
        assert response.status_code == 400 and response.json()["code"] == "MISSING_QUERY"
