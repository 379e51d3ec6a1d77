"""The agent end to end on the indexed sample book, with the default (extractive) answerer.

Covers the Python contract (`run_agent`, `Response`, `ErrorResponse`), the calibration figures the
extractive answerer documents, and POST /api/answer with its error envelope.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from bookrag import errors
from bookrag.answering.context import book_context
from bookrag.contracts.agent import REFUSAL, ErrorResponse, Response, error_response
from bookrag.services.container import container_for
from bookrag.web.app import create_app
from tests.support.paths import ROOT
from tests.support.stubs import Reply

AGENT_SET = ROOT / "eval" / "agent-sample-book.jsonl"
CONTRACT_MESSAGES = {
    "EmbeddingError": "Unable to process your question. Please try again.",
    "RetrievalError": "Book content temporarily unavailable. Please try again.",
    "InvalidQueryError": "Please provide a question about the book content.",
}


def run(query: str) -> Response:
    from bookrag import run_agent

    return run_agent(query)


# --- answers and refusals ---------------------------------------------------------------------------


def test_in_book_question_is_answered_with_verified_citations(book_env: Any) -> None:
    response = run("How do I load parameters for a node from a YAML file?")

    assert not response.is_refusal and response.refusal_reason == ""
    assert "ros__parameters" in response.answer
    markers = sorted({int(n) for n in re.findall(r"\[(\d+)\]", response.answer)})
    assert markers == list(range(1, len(response.sources) + 1))  # every source is cited, in order
    question = "How do I load parameters for a node from a YAML file?"
    _, hits = book_context(container_for(book_env).agent.retriever, question)
    assert {s.chunk_id for s in response.sources} <= {h.chunk_id for h in hits}  # cited = retrieved
    first = response.sources[0]
    assert first.chapter and first.section and first.source_url.startswith("http") and 0 <= first.score <= 1
    assert first.source_file == "module-1-ros2/services-actions.md"


def test_off_book_question_is_refused_with_the_nearest_sections(book_env: Any) -> None:
    response = run("What is the capital of Australia?")

    assert response.is_refusal and response.answer == REFUSAL
    assert response.refusal_reason == "no_relevant_context"
    assert 1 <= len(response.sources) <= 3  # where the book comes closest, so the reader knows where to look


def test_near_miss_naming_something_the_book_never_mentions_is_refused(book_env: Any) -> None:
    # The ROS 2 install page scores 0.59 for this question; "Melodic" and "18.04" appear nowhere in the book.
    response = run("How do I install ROS 1 Melodic on Ubuntu 18.04?")

    assert response.is_refusal and response.refusal_reason == "weak_evidence"
    assert response.sources[0].source_file == "module-1-ros2/installation.md"


def test_calibration_figures_on_the_agent_question_set(book_env: Any) -> None:
    # GIVEN the 20 agent questions (12 in the book, 8 not)
    rows = [json.loads(line) for line in AGENT_SET.read_text().splitlines()]
    answered = refused = with_all = with_any = 0

    # WHEN each is asked
    for row in rows:
        response = run(row["question"])
        text = response.answer.lower()
        if row["in_book"] and not response.is_refusal:
            answered += 1
            with_all += all(k in text for k in row["answer_keywords"])
            with_any += any(k in text for k in row["answer_keywords"])
        if not row["in_book"] and response.is_refusal:
            refused += 1
            assert response.answer == REFUSAL

    # THEN the figures documented in bookrag.answering.answerers.extractive hold
    assert (answered, refused) == (12, 8)
    assert with_any >= 11 and with_all >= 9


def test_the_same_question_gives_the_same_answer(book_env: Any) -> None:
    question = "What is the difference between the stance phase and the swing phase of walking?"
    assert run(question) == run(question)


# --- the error contract -------------------------------------------------------------------------------


@pytest.mark.parametrize(("query", "code"), [
    ("", "INVALID_QUERY"),
    (" \u200b\t\n ", "INVALID_QUERY"),
    ("r" * 1001, "INVALID_QUERY_LENGTH"),
])
def test_invalid_queries_raise_typed_errors(book_env: Any, query: str, code: str) -> None:
    with pytest.raises(errors.InvalidInputError) as caught:
        run(query)

    assert caught.value.code == code and caught.value.details == {"field": "query"}
    assert error_response(caught.value) == ErrorResponse(message=CONTRACT_MESSAGES["InvalidQueryError"],
                                                         error_type="InvalidQueryError", recoverable=False)


@pytest.mark.parametrize(("exc", "error_type", "recoverable"), [
    (errors.EmbeddingUnavailableError(), "EmbeddingError", True),
    (errors.EmbeddingAuthError(), "EmbeddingError", False),
    (errors.StoreConnectionError(), "RetrievalError", True),
    (errors.CollectionMissingError(), "RetrievalError", False),
    (errors.AnswerTimeoutError(), "AgentError", True),
])
def test_error_response_uses_the_contract_messages(exc: errors.BookRAGError, error_type: str,
                                                   recoverable: bool) -> None:
    response = error_response(exc)

    assert response.error_type == error_type and response.recoverable is recoverable
    assert response.message == CONTRACT_MESSAGES.get(error_type,
                                                     "Unable to generate an answer right now. Please try again.")


def test_embedding_failure_is_an_embedding_error(make_settings: Callable[..., Any], stub: Any) -> None:
    # GIVEN a Cohere embedder that refuses the key (a 503 or 429 is an outage: retrieval falls back to BM25,
    # tests/integration/test_degraded_retrieval.py)
    stub.on("/v2/embed", Reply(401, {"message": "invalid api token"}))
    settings = make_settings(embedding_provider="cohere", cohere_api_key="co-test-key-1234",
                             cohere_base_url=stub.url, cohere_timeout_s=1.0)

    # WHEN the agent runs
    with pytest.raises(errors.EmbeddingError) as caught:
        container_for(settings).agent.run("How do I install ROS 2?")

    # THEN the caller gets the contract's EmbeddingError, and no answerer ran
    assert error_response(caught.value).message == CONTRACT_MESSAGES["EmbeddingError"]
    assert {c.path for c in stub.requests} == {"/v2/embed"}


# --- HTTP ------------------------------------------------------------------------------------------------


@pytest.fixture
def client() -> TestClient:
    return TestClient(create_app("agent"))


def test_http_answer(book_env: Any, client: TestClient) -> None:
    response = client.post("/api/answer", json={"query": "Which layers make up a Nav2 costmap?"})

    assert response.status_code == 200
    body = Response.model_validate(response.json())
    assert not body.is_refusal and "Inflation layer" in body.answer and body.sources


def test_http_refusal_is_a_200_response(book_env: Any, client: TestClient) -> None:
    response = client.post("/api/answer", json={"query": "Who won the 2018 FIFA World Cup?"})

    assert response.status_code == 200
    assert response.json()["is_refusal"] is True and response.json()["answer"] == REFUSAL


@pytest.mark.parametrize(("body", "code"), [
    ({"query": ""}, "INVALID_QUERY"),
    ({"query": "   "}, "INVALID_QUERY"),
    ({}, "INVALID_QUERY"),
    ({"query": 42}, "INVALID_QUERY"),
    ({"query": "r" * 1001}, "INVALID_QUERY_LENGTH"),
])
def test_http_invalid_query_envelope(book_env: Any, client: TestClient, body: dict[str, Any], code: str) -> None:
    response = client.post("/api/answer", json=body)

    assert response.status_code == 400
    payload = response.json()
    assert payload["code"] == code and payload["details"] == {"field": "query"} and payload["error"]
    assert payload["error_type"] == "InvalidQueryError" and payload["recoverable"] is False
    assert payload["message"] == CONTRACT_MESSAGES["InvalidQueryError"]


def test_http_embedding_failure_envelope(use_env: Callable[..., None], tmp_path: Path, stub: Any,
                                         client: TestClient) -> None:
    stub.on("/v2/embed", Reply(403, {"message": "internal detail that must not leak"}))  # refused, not down
    use_env(QDRANT_PATH=str(tmp_path / "q"), EMBEDDING_PROVIDER="cohere", COHERE_API_KEY="co-test-key-5678",
            COHERE_BASE_URL=stub.url, COHERE_TIMEOUT_S="1")

    response = client.post("/api/answer", json={"query": "How do I install ROS 2?"})

    assert response.status_code == 500
    payload = response.json()
    assert payload["error_type"] == "EmbeddingError" and payload["recoverable"] is False
    assert payload["message"] == CONTRACT_MESSAGES["EmbeddingError"]
    assert "internal detail" not in response.text and "co-test-key" not in response.text


def test_openapi_documents_the_answer_route(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    post = spec["paths"]["/api/answer"]["post"]
    schemas = spec["components"]["schemas"]

    assert post["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/Response")
    # The contract's four fields, required; plus the optional conversation fields of issue 13 and the site
    # edition's of issue 35.
    assert set(schemas["Response"]["properties"]) == {"answer", "sources", "is_refusal", "refusal_reason",
                                                      "standalone_question", "session_id", "selection_in_book",
                                                      "locale", "version", "edition_note"}
    assert set(schemas["Response"]["required"]) == {"answer", "sources", "is_refusal"}
    request = schemas["AnswerRequest"]["properties"]
    assert request["history"]["anyOf"][0]["maxItems"] == 10
    assert request["selected_text"]["anyOf"][0]["maxLength"] == 2000
    assert request["session_id"]["anyOf"][0]["pattern"] == "^ses_[A-Za-z0-9_-]{32}$"
    assert "404" in post["responses"]
    # The headers a client reads: the answer's id for feedback, and a degraded retrieval (issue 36).
    for path in ("/api/answer", "/api/answer/stream"):
        headers = spec["paths"][path]["post"]["responses"]["200"]["headers"]
        assert headers["X-Query-Id"]["schema"]["pattern"] and headers["X-Retrieval-Mode"]["schema"]["enum"] == [
            "sparse-fallback"]
    # The contract's six fields, plus the additive span citations (issue 11).
    assert set(schemas["Source"]["properties"]) == {"chapter", "section", "source_url", "chunk_id", "source_file",
                                                    "score", "quotes"}
    error_ref = post["responses"]["400"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert {"message", "error_type", "recoverable", "code"} <= set(schemas[error_ref]["properties"])


# --- CLI -------------------------------------------------------------------------------------------------


def test_cli_ask(book_env: Any) -> None:
    from typer.testing import CliRunner

    from bookrag.devtools.cli import app

    result = CliRunner().invoke(app, ["ask", "Which QoS profile should a camera subscriber use?", "--json"])

    assert result.exit_code == 0
    body = Response.model_validate_json(result.stdout)
    assert not body.is_refusal and "qos_profile_sensor_data" in body.answer

    plain = CliRunner().invoke(app, ["ask", "What is the current price of Bitcoin?"])
    assert plain.exit_code == 0 and plain.stdout.startswith(REFUSAL) and "Nearest sections:" in plain.stdout
