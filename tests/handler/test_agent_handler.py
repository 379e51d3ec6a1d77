"""Every answer event in events/ through the agent's real Lambda entry point, on the indexed sample book."""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest

from bookrag.contracts.agent import REFUSAL
from bookrag.services.container import current
from tests.support.events import body_of
from tests.support.sse import parse
from tests.support.stubs import StubServer
from tests.support.upstreams import model_says


@pytest.fixture(autouse=True)
def _on_sample_book(book_env: Any) -> None:
    """Every test here runs against the session's indexed sample book, with the extractive answerer."""


def test_answer_valid(agent_handler: Any, invoke: Any) -> None:
    response = invoke(agent_handler, "answer-valid.json")

    assert response["statusCode"] == 200
    body = body_of(response)
    assert body["is_refusal"] is False and body["refusal_reason"] == ""
    assert "Ubuntu 22.04" in body["answer"]
    cited = sorted({int(n) for n in re.findall(r"\[(\d+)\]", body["answer"])})
    assert cited == list(range(1, len(body["sources"]) + 1))
    assert {s["source_file"] for s in body["sources"]} == {"module-1-ros2/installation.md"}
    # The contract's six fields, plus the additive span citations of issue 11.
    assert all(set(s) == {"chapter", "section", "source_url", "chunk_id", "source_file", "score", "quotes"}
               for s in body["sources"])
    assert all(q["fragment_url"].startswith(s["source_url"]) for s in body["sources"] for q in s["quotes"])


def test_answer_off_book_is_a_refusal_with_nearest_sections(agent_handler: Any, invoke: Any) -> None:
    response = invoke(agent_handler, "answer-off-book.json")

    assert response["statusCode"] == 200
    body = body_of(response)
    assert body["is_refusal"] is True and body["answer"] == REFUSAL
    assert body["refusal_reason"] == "no_relevant_context" and body["sources"]


@pytest.mark.parametrize(("event", "code"), [
    ("answer-empty.json", "INVALID_QUERY"),
    ("answer-too-long.json", "INVALID_QUERY_LENGTH"),
])
def test_invalid_queries_get_the_contract_envelope(agent_handler: Any, invoke: Any, event: str, code: str) -> None:
    response = invoke(agent_handler, event)

    assert response["statusCode"] == 400
    body = body_of(response)
    assert body["code"] == code and body["details"] == {"field": "query"}
    assert body["error_type"] == "InvalidQueryError" and body["recoverable"] is False
    assert body["message"] == "Please provide a question about the book content."


def test_scheduled_warmup_builds_the_agent(agent_handler: Any, invoke: Any) -> None:

    summary = invoke(agent_handler, "scheduled-warmup.json")

    assert summary["warmed"] is True and summary["store_ready"] is True
    assert current().built("agent")


def test_the_agent_is_built_once_per_container(agent_handler: Any, invoke: Any) -> None:

    invoke(agent_handler, "answer-valid.json")
    agent, retriever, built = current().agent, current().retriever, set(current().built_names())

    invoke(agent_handler, "answer-off-book.json")
    invoke(agent_handler, "answer-valid.json")

    assert current().agent is agent and current().retriever is retriever
    assert set(current().built_names()) == built


def _sse(response: dict[str, Any]) -> list[tuple[str, Any]]:
    raw = response["body"]
    if response.get("isBase64Encoded"):
        raw = base64.b64decode(raw).decode()
    return parse(raw)


def test_answer_stream_behind_mangum_is_the_whole_event_stream_at_once(agent_handler: Any, invoke: Any) -> None:
    response = invoke(agent_handler, "answer-stream-valid.json")

    assert response["statusCode"] == 200
    assert response["headers"]["content-type"].startswith("text/event-stream")
    events = _sse(response)
    assert events[0][0] == "sources" and events[-1][0] == "final"
    assert events[-1][1] == body_of(invoke(agent_handler, "answer-valid.json"))


def test_an_llm_s_streamed_answer_behind_mangum_is_the_answer_route_s(agent_handler: Any, invoke: Any,
                                                                       use_env: Any, stub: StubServer) -> None:
    # GIVEN the function configured with an OpenAI-compatible model that streams when asked to
    use_env(LLM_PROVIDER="openai", OPENAI_API_KEY="llm-handler-key-81d2", OPENAI_BASE_URL=stub.url + "/v1")
    stub.on("/v1/chat/completions", model_says("Build with colcon build --symlink-install so that edits take "
                                               "effect [S1]."))
    question = {"query": "I edited a Python file in my ROS 2 package. How do I build so that my changes take effect?"}

    # WHEN the same question comes through the stream route and the answer route
    streamed = _sse(invoke(agent_handler, "answer-stream-valid.json", question))
    whole = body_of(invoke(agent_handler, "answer-valid.json", question))

    # THEN the model was streamed, and the buffered event stream ends with the answer route's body
    assert [call.json().get("stream") for call in stub.calls("/v1/chat/completions")] == [True, None]
    assert [kind for kind, _ in streamed] == ["sources", "delta", "final"]
    assert streamed[-1][1] == whole and not whole["is_refusal"]


def test_answer_stream_bad_input_is_the_json_envelope(agent_handler: Any, invoke: Any) -> None:
    response = invoke(agent_handler, "answer-stream-empty.json")

    assert response["statusCode"] == 400 and body_of(response)["code"] == "INVALID_QUERY"


def test_the_widget_and_the_demo_page_are_served_by_the_agent_function(agent_handler: Any, invoke: Any) -> None:
    script = invoke(agent_handler, "widget-js.json")
    demo = invoke(agent_handler, "demo.json")

    assert script["statusCode"] == 200 and script["headers"]["content-type"].startswith("text/javascript")
    assert demo["statusCode"] == 200 and "/widget/v1/bookrag.js" in demo["body"]


def test_a_model_answer_that_does_not_hold_is_the_books_own_answer_marked_quoted(agent_handler: Any, invoke: Any,
                                                                                  use_env: Any,
                                                                                  stub: StubServer) -> None:
    # GIVEN the function configured with a model whose answer is invented
    use_env(LLM_PROVIDER="openai", OPENAI_API_KEY="llm-handler-key-quoted", OPENAI_BASE_URL=stub.url + "/v1")
    stub.on("/v1/chat/completions", model_says("The build compiles Python into WebAssembly bytecode [S1]. "
                                               "It uploads every package to a Kubernetes cluster [S1]."))
    question = {"query": "Which Ubuntu release should I install to use ROS 2 Humble?"}

    # WHEN the question comes through the answer route
    response = invoke(agent_handler, "answer-valid.json", question)

    # THEN the body is the contract's answer from the book's own sentences, and the header says so
    body = body_of(response)
    assert response["statusCode"] == 200 and body["is_refusal"] is False and "Ubuntu 22.04" in body["answer"]
    assert "WebAssembly" not in body["answer"] and set(body) == {"answer", "sources", "is_refusal", "refusal_reason"}
    assert {k.lower(): v for k, v in response["headers"].items()}.get("x-answer-mode") == "quoted"
