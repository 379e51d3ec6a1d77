"""POST /api/answer/stream over HTTP on the sample book: the same answer as /api/answer, as Server-Sent
Events; the same validation, sessions, keys and limits (in process, extractive answerer); an LLM's text
as it streams, its refusal and its failures (`bookrag serve` against a chat-completions stub)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from bookrag.answering.agent import BookRAGAgent
from bookrag.answering.answerers.base import Draft, Retrieve
from bookrag.auth.keys import mint_key
from bookrag.config.settings import Settings, get_settings
from bookrag.contracts.agent import REFUSAL
from bookrag.contracts.envelope import error_body
from bookrag.domain.deadline import Deadline
from bookrag.domain.models import SearchHit
from bookrag.errors import AnswerUnavailableError
from bookrag.services.container import container_for
from bookrag.web.app import create_app
from bookrag.web.sse import frames
from tests.support.aws import FakeClock
from tests.support.serve import Served, start
from tests.support.sse import events_of, parse
from tests.support.stubs import Hold, Reply, StubServer
from tests.support.upstreams import UPSTREAM_DETAIL, completion_chunks, model_says, words

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
    # The streamed text is the final answer, markers numbered the same way.
    assert "".join(data["text"] for kind, data in events if kind == "delta") == final["answer"]


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
    guard = container_for(get_settings()).guard
    assert guard is not None
    guard.clock = FakeClock()  # a minute that does not roll over between the second and third request

    refused, _ = stream(client, {"query": IN_BOOK})
    assert refused.status_code == 401 and refused.json()["code"] == "AUTH_REQUIRED"
    assert client.post("/api/answer", json={"query": OFF_BOOK}, headers={"X-API-Key": plaintext}).status_code == 200
    served, events = stream(client, {"query": OFF_BOOK}, **{"X-API-Key": plaintext})
    assert served.status_code == 200 and events[-1][0] == "final"
    limited, _ = stream(client, {"query": OFF_BOOK}, **{"X-API-Key": plaintext})  # one limit for both routes
    assert limited.status_code == 429 and limited.json()["code"] == "RATE_LIMITED"
    assert limited.headers["retry-after"]


# --- an LLM that streams: `bookrag serve` (a real process) against a chat-completions stub ---------------

LLM_QUESTION = "I edited a Python file in my ROS 2 package. How do I build so that my changes take effect?"
LLM_PATH = "/v1/chat/completions"
SUPPORTED = "Build with colcon build --symlink-install so that edits take effect [S1]. "


@pytest.fixture(scope="module")
def llm() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


@pytest.fixture(scope="module")
def llm_served(llm: StubServer, indexed_book: dict[str, str],
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = start(indexed_book["QDRANT_PATH"], tmp_path_factory.mktemp("serve-llm"), LLM_PROVIDER="openai",
                   OPENAI_API_KEY="llm-stream-key-5c1f", OPENAI_BASE_URL=llm.url + "/v1")
    yield server
    server.stop()


def test_llm_text_reaches_the_reader_before_the_model_has_finished(llm: StubServer, llm_served: Served) -> None:
    # GIVEN a model that streams a sentence, starts the next, then holds its last words back
    hold = Hold(bound_s=20)
    llm.on(LLM_PATH, Reply(200, stream=completion_chunks(*words(SUPPORTED), "Python ", hold,
                                                         "files are linked, not copied [S1].")))
    events: list[tuple[str, Any]] = []

    # WHEN a reader streams the answer, and lets the model finish only once it has read some text
    with httpx.Client(timeout=30) as client, client.stream("POST", f"{llm_served.base}/api/answer/stream",
                                                           json={"query": LLM_QUESTION}) as response:
        for kind, data in events_of(response.iter_lines()):
            events.append((kind, data))
            if kind == "delta":
                hold.release()

    # THEN the first sentence arrived while the model still held its last words (the stub was released
    # by the reader, not by its own time bound), and the rest followed as its own event, then the final
    assert hold.released_in_time is True
    assert [kind for kind, _ in events] == ["sources", "delta", "delta", "final"]
    assert events[1][1] == {"text": SUPPORTED.strip().replace("[S1]", "[1]")}
    assert not events[-1][1]["is_refusal"] and "--symlink-install" in events[-1][1]["answer"]
    assert events[1][1]["text"] + events[2][1]["text"] == events[-1][1]["answer"]


def test_llm_stream_final_is_the_answer_route_s_response(llm: StubServer, llm_served: Served) -> None:
    llm.on(LLM_PATH, model_says(SUPPORTED.strip()))

    with httpx.Client(timeout=30) as client:
        events = parse(client.post(f"{llm_served.base}/api/answer/stream", json={"query": LLM_QUESTION}).text)
        whole = client.post(f"{llm_served.base}/api/answer", json={"query": LLM_QUESTION}).json()

    assert [call.json().get("stream") for call in llm.calls(LLM_PATH)[-2:]] == [True, None]
    assert events[-1] == ("final", whole) and not whole["is_refusal"]
    assert "".join(data["text"] for kind, data in events if kind == "delta") == whole["answer"]


def test_a_refusal_streamed_by_the_model_is_the_contract_s_refusal(llm: StubServer, llm_served: Served) -> None:
    llm.on(LLM_PATH, model_says(REFUSAL))

    with httpx.Client(timeout=30) as client:
        events = parse(client.post(f"{llm_served.base}/api/answer/stream", json={"query": LLM_QUESTION}).text)
        whole = client.post(f"{llm_served.base}/api/answer", json={"query": LLM_QUESTION}).json()

    assert [kind for kind, _ in events] == ["sources", "final"]
    assert events[-1] == ("final", whole)
    assert whole["is_refusal"] and whole["answer"] == REFUSAL and whole["refusal_reason"] == "model_refused"


@pytest.mark.parametrize(("reply", "deltas"), [
    (Reply(503, {"error": {"message": UPSTREAM_DETAIL}}), 0),
    (Reply(200, stream=completion_chunks(*words(SUPPORTED), "Python ", b"data: {" + UPSTREAM_DETAIL.encode())), 1),
], ids=["503-before-any-text", "malformed-chunk-after-text"])
def test_an_llm_failure_is_the_stream_s_error_event(llm: StubServer, llm_served: Served, reply: Reply,
                                                     deltas: int) -> None:
    llm.on(LLM_PATH, reply)

    with httpx.Client(timeout=30) as client:
        response = client.post(f"{llm_served.base}/api/answer/stream", json={"query": LLM_QUESTION})

    events = parse(response.text)
    assert response.status_code == 200 and [kind for kind, _ in events] == ["sources", *["delta"] * deltas, "error"]
    assert events[-1][1] == error_body(AnswerUnavailableError(), "agent")
    assert UPSTREAM_DETAIL not in response.text and "Traceback" not in response.text
