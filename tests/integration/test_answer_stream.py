"""POST /api/answer/stream over HTTP (in process) on the sample book: the same answer as /api/answer,
as Server-Sent Events; the same validation, sessions, keys and limits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from bookrag.answering.agent import BookRAGAgent
from bookrag.answering.answerers.base import Deadline, Draft, Retrieve
from bookrag.auth.keys import mint_key
from bookrag.config.settings import Settings, get_settings
from bookrag.domain.models import SearchHit
from bookrag.errors import AnswerUnavailableError
from bookrag.services.container import container_for
from bookrag.web.app import create_app
from bookrag.web.sse import frames
from tests.support.sse import parse

IN_BOOK = "How do I load parameters for a node from a YAML file?"
OFF_BOOK = "What is the capital of Australia?"


def stream(client: TestClient, body: dict[str, Any], **headers: str) -> tuple[Any, list[tuple[str, Any]]]:
    response = client.post("/api/answer/stream", json=body, headers=headers)
    is_sse = response.headers["content-type"].startswith("text/event-stream")
    return response, parse(response.text) if is_sse else []


@pytest.fixture
def client(book_env: Settings) -> TestClient:
    return TestClient(create_app("all"))


def test_sources_then_text_then_exactly_the_answer_route_s_response(client: TestClient) -> None:
    response, events = stream(client, {"query": IN_BOOK})

    assert response.status_code == 200 and response.headers["cache-control"] == "no-cache"
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "sources" and kinds[-1] == "final" and set(kinds[1:-1]) == {"delta"}
    assert events[0][1]["sources"], "the retrieved sections come first"
    final = events[-1][1]
    assert final == client.post("/api/answer", json={"query": IN_BOOK}).json()
    assert not final["is_refusal"] and "ros__parameters" in final["answer"]
    # The streamed text is the final answer, markers numbered the same way (nothing was dropped here).
    streamed = "".join(data["text"] for kind, data in events if kind == "delta")
    assert streamed.split() == final["answer"].split()


def test_a_refusal_streams_no_text(client: TestClient) -> None:
    _, events = stream(client, {"query": OFF_BOOK})

    assert "delta" not in [kind for kind, _ in events]
    assert events[-1] == ("final", client.post("/api/answer", json={"query": OFF_BOOK}).json())
    assert events[-1][1]["is_refusal"] and events[-1][1]["sources"]


@pytest.mark.parametrize(("body", "code"), [({"query": " "}, "INVALID_QUERY"),
                                            ({"query": "x" * 1001}, "INVALID_QUERY_LENGTH"),
                                            ({"query": "ROS", "session_id": "ses_" + "a" * 32}, "SESSION_NOT_FOUND"),
                                            ({"question": "ROS"}, "INVALID_QUERY")])
def test_bad_input_is_the_same_json_envelope_and_status_as_the_answer_route(client: TestClient,
                                                                             body: dict[str, Any], code: str) -> None:
    response, _ = stream(client, body)
    expected = client.post("/api/answer", json=body)

    assert response.headers["content-type"] == "application/json"
    assert (response.status_code, response.json()) == (expected.status_code, expected.json())
    assert response.json()["code"] == code


def test_a_session_keeps_the_streamed_turn(client: TestClient) -> None:
    _, events = stream(client, {"query": "What is a topic in ROS 2?", "start_session": True})
    session_id = events[-1][1]["session_id"]

    follow_up = client.post("/api/answer", json={"query": "Which QoS profile suits a camera?",
                                                 "session_id": session_id}).json()

    assert follow_up["session_id"] == session_id and "standalone_question" in follow_up


class _Unavailable:
    """An answerer whose model is down (the port's own error)."""

    name = "unavailable"

    def answer(self, question: str, hits: list[SearchHit], retrieve: Retrieve, deadline: Deadline) -> Draft:
        raise AnswerUnavailableError()


def test_a_failure_after_the_first_event_is_an_error_event_with_the_envelope(book_env: Settings) -> None:
    agent = BookRAGAgent(book_env, container_for(book_env).retriever, _Unavailable())
    events = agent.events(IN_BOOK)

    body = b"".join(frames(next(events), events)).decode()

    (first, *_, last) = parse(body)
    assert first[0] == "sources"
    assert last[0] == "error"
    assert last[1] == {"error": AnswerUnavailableError.public_message, "code": "AGENT_ERROR", "details": {},
                       "recoverable": True, "message": "Unable to generate an answer right now. Please try again.",
                       "error_type": "AgentError"}


def test_keys_and_limits_are_the_answer_route_s(use_env: Callable[..., None], indexed_book: dict[str, str]) -> None:
    plaintext, record = mint_key("reader")
    use_env(**indexed_book, AUTH_ENABLED="true", API_KEY_HASHES=record.setting_entry(), RATE_LIMIT_PER_MINUTE="2",
            AUTH_FAILURE_LIMIT_PER_MINUTE="1")
    client = TestClient(create_app("all"))
    assert container_for(get_settings()).guard is not None

    refused, _ = stream(client, {"query": IN_BOOK})
    assert refused.status_code == 401 and refused.json()["code"] == "AUTH_REQUIRED"
    assert client.post("/api/answer", json={"query": OFF_BOOK}, headers={"X-API-Key": plaintext}).status_code == 200
    served, events = stream(client, {"query": OFF_BOOK}, **{"X-API-Key": plaintext})
    assert served.status_code == 200 and events[-1][0] == "final"
    limited, _ = stream(client, {"query": OFF_BOOK}, **{"X-API-Key": plaintext})  # one limit for both routes
    assert limited.status_code == 429 and limited.json()["code"] == "RATE_LIMITED"
    assert limited.headers["retry-after"]
