"""Every interface names the book version it answered from: REST, the three tools, the agent, health
(over the app and the Lambda entry), MCP tool results, and the Python API. The sample book, indexed once
per session by an incremental ingest, records its version in its collection's metadata."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

import bookrag
from bookrag.mcp.server import BOOK_VERSION_META, QUERY_ID_META, call_tool_sync, served_tools
from bookrag.runtime.entry import handle
from bookrag.runtime.lambda_context import SyntheticContext
from bookrag.services.container import current
from bookrag.web.app import create_app
from tests.support.events import body_of, load_event

QUESTION = {"query": "How do I install ROS 2?"}


@pytest.fixture
def label(book_env: Any) -> str:
    version = current().store.book_version()
    assert version is not None and version.label.startswith(version.content_hash[:12])
    return version.label


@pytest.mark.parametrize("path", ["/api/retrieve", "/api/tools/retrieve_book_content",
                                  "/api/tools/perform_retrieval", "/api/tools/retrieve_book_context"])
def test_retrieval_bodies_and_headers_name_the_version(label: str, path: str) -> None:
    response = TestClient(create_app("all")).post(path, json=QUESTION)

    assert response.status_code == 200
    assert response.headers["X-Book-Version"] == label and response.json()["book_version"] == label


def test_the_answer_names_it_in_a_header_and_keeps_the_contracts_body(label: str) -> None:
    response = TestClient(create_app("all")).post("/api/answer", json=QUESTION)

    assert response.status_code == 200 and response.headers["X-Book-Version"] == label
    assert set(response.json()) == {"answer", "sources", "is_refusal", "refusal_reason"}


def test_health_names_the_version_last_served_without_a_store_call(label: str) -> None:
    client = TestClient(create_app("all"))
    client.post("/api/retrieve", json=QUESTION)

    health = client.get("/api/health")
    assert health.json()["book_version"] == label and health.headers["X-Book-Version"] == label
    lambda_health = handle(load_event("health.json"), SyntheticContext(function_name="t"), "retrieval")
    assert body_of(lambda_health)["book_version"] == label and lambda_health["headers"]["x-book-version"] == label


def test_a_refused_request_carries_the_version_too(label: str) -> None:
    client = TestClient(create_app("all"))
    client.post("/api/retrieve", json=QUESTION)

    bad = client.post("/api/retrieve", json={"query": ""})
    assert bad.status_code == 400 and bad.headers["X-Book-Version"] == label


def test_every_mcp_tool_result_names_the_version(label: str, use_env: Any) -> None:
    use_env(LLM_PROVIDER="extractive")
    for spec in served_tools("all"):
        result = call_tool_sync(spec, dict(QUESTION))
        assert not result.is_error and result.meta is not None and result.meta[BOOK_VERSION_META] == label, spec.name
        # answer_question also names its record in the question log (issue 36); the retrieval tools nothing else.
        assert set(result.meta) == ({BOOK_VERSION_META, QUERY_ID_META} if spec.name == "answer_question"
                                    else {BOOK_VERSION_META}), spec.name
        if spec.name != "answer_question":
            assert result.structured_content["book_version"] == label


def test_the_python_api_names_it_on_the_response(label: str, use_env: Any) -> None:
    use_env(LLM_PROVIDER="extractive")
    response = bookrag.run_agent(QUESTION["query"])
    assert response.book_version == label
    assert "book_version" not in response.model_dump()  # the contract's Response, as before
