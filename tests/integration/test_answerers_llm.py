"""The LLM answerers over HTTP against scripted stubs on 127.0.0.1, on the indexed sample book.

Gemini (its OpenAI-compatible endpoint) and any OpenAI-compatible endpoint share one adapter; Cohere
goes through its SDK. The stubs script tool calls, final answers with citations, citations of ids
never retrieved, 429 with Retry-After, 401, hangs and malformed JSON. Time is bounded without timing
asserts: the stubs count the calls they saw.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from typing import Any

import pytest

from bookrag import errors
from bookrag.answering.agent import BookRAGAgent
from bookrag.answering.answerers.base import SYSTEM_PROMPT, Draft, StreamingAnswerer, drained
from bookrag.config.settings import Settings, load_settings
from bookrag.contracts.agent import REFUSAL
from bookrag.contracts.envelope import error_body
from bookrag.domain.deadline import Deadline
from bookrag.services.container import container_for
from bookrag.web.sse import frames
from tests.support.agents import llm_agent
from tests.support.sse import parse
from tests.support.stubs import CUT, Hold, Recorded, Reply, StreamPiece, StubServer
from tests.support.upstreams import UPSTREAM_DETAIL, chat_reply, completion, completion_chunks, model_says, words

KEY = "llm-canary-3e9d0b7a"
QUESTION = "I edited a Python file in my ROS 2 package. How do I build so that my changes take effect?"
GEMINI_PATH = "/v1beta/openai/chat/completions"
OPENAI_PATH = "/v1/chat/completions"


def tool_call(query: str, call_id: str = "call_1", name: str = "retrieve_book_context") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps({"query": query})}}


def labels_seen(req: Recorded) -> list[str]:
    """Document ids the model was shown, in every message of the request."""
    text = " ".join(str(m.get("content") or "") for m in req.json()["messages"])
    return re.findall(r'<document id="(S\d+)"', text)


def cite_the_search(req: Recorded) -> Reply:
    """A model that answers from its search: the first document of the last tool result, cited."""
    tool_result = [m["content"] for m in req.json()["messages"] if m["role"] == "tool"][-1]
    label = re.findall(r'<document id="(S\d+)"', tool_result)[0]
    return chat_reply(req, f"A costmap is built from layers [{label}].")


def answer_citing(*labels: str) -> Callable[[Recorded], Reply]:
    """A model that answers with `--symlink-install`, citing the given labels (or the first one shown)."""

    def reply(req: Recorded) -> Reply:
        cited = labels or labels_seen(req)[:1]
        return chat_reply(req, "Build with colcon build --symlink-install so edits take effect "
                          + "".join(f"[{c}]" for c in cited) + ".")

    return reply


@pytest.fixture
def agent_with(book_env: Settings) -> Callable[..., BookRAGAgent]:
    """An agent on the sample book's retriever with the given LLM settings (the store is opened once)."""

    def build(**llm: Any) -> BookRAGAgent:
        return llm_agent(book_env, **llm)

    return build


@pytest.fixture(params=["gemini", "openai"])
def chat(request: pytest.FixtureRequest, stub: StubServer, agent_with: Callable[..., BookRAGAgent]) -> Any:
    """(agent, path) for Gemini's OpenAI-compatible endpoint and a generic OpenAI-compatible one."""
    provider = request.param

    def make(**extra: Any) -> BookRAGAgent:
        values: dict[str, Any] = {"llm_provider": provider, "llm_timeout_s": 1.0, **extra}
        if provider == "gemini":
            values.update(gemini_api_key=KEY, gemini_base_url=stub.url + "/v1beta/openai")
        else:
            values.update(openai_api_key=KEY, openai_base_url=stub.url + "/v1")
        return agent_with(**values)

    return provider, make, GEMINI_PATH if provider == "gemini" else OPENAI_PATH


# --- Gemini / OpenAI-compatible ----------------------------------------------------------------------


def test_answer_with_citation_and_request_shape(chat: Any, stub: StubServer) -> None:
    provider, make, path = chat
    stub.on(path, answer_citing())

    response = make().run(QUESTION)

    assert not response.is_refusal and "--symlink-install" in response.answer and response.answer.endswith("[1].")
    (call,) = stub.calls(path)
    body = call.json()
    assert call.headers["authorization"] == f"Bearer {KEY}"
    assert body["model"] == ("gemini-2.0-flash" if provider == "gemini" else "gpt-4o-mini")
    assert body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert [t["function"]["name"] for t in body["tools"]] == ["retrieve_book_context"]  # read-only tools only
    shown = labels_seen(call)
    assert shown and body["messages"][1]["content"].count("</document>") == len(shown)
    assert response.sources[0].source_file == "module-1-ros2/installation.md"


def test_model_may_retrieve_again_and_cite_what_it_found(chat: Any, stub: StubServer) -> None:
    # GIVEN a model that first asks for another search, then cites a document from its result
    _, make, path = chat

    def cite_last_tool_document(req: Recorded) -> Reply:
        tool_results = [m["content"] for m in req.json()["messages"] if m["role"] == "tool"]
        # It cites the document of that result that lists the layers: since issue 11 a claim cited to a
        # chunk that does not support it is dropped by the grounding check.
        documents = re.findall(r'<document id="(S\d+)"[^>]*>(.*?)</document>', tool_results[-1], re.DOTALL)
        label = next(doc_id for doc_id, body in documents if "Static layer" in body)
        return Reply(200, completion(f"A costmap has a static, an obstacle and an inflation layer [{label}]."))

    stub.on(path, Reply(200, completion(None, [tool_call("Nav2 costmap layers")])), cite_last_tool_document)

    # WHEN the agent runs
    response = make().run(QUESTION)

    # THEN the second request carried the tool result for that call, and the citation is a retrieved chunk
    calls = stub.calls(path)
    assert len(calls) == 2
    messages = calls[1].json()["messages"]
    assert messages[2]["role"] == "assistant" and messages[2]["tool_calls"][0]["id"] == "call_1"
    assert messages[3]["role"] == "tool" and messages[3]["tool_call_id"] == "call_1"
    assert not response.is_refusal and response.sources[0].source_file == "module-3-perception/navigation.md"


def test_tool_steps_are_bounded_and_the_last_step_offers_no_tools(chat: Any, stub: StubServer) -> None:
    # GIVEN a model that asks for a search every time, and unknown or malformed tool calls too
    _, make, path = chat
    stub.on(path, Reply(200, completion(None, [tool_call("again", "c1"), tool_call("x", "c2", name="delete_index"),
                                                {"id": "c3", "type": "function",
                                                 "function": {"name": "retrieve_book_context",
                                                              "arguments": "{not json"}}])))

    response = make(llm_max_steps=3).run(QUESTION)

    calls = stub.calls(path)
    assert len(calls) == 3 and "tools" not in calls[-1].json()
    tool_results = [m["content"] for m in calls[-1].json()["messages"] if m["role"] == "tool"]
    assert any(r.startswith("Unknown tool") for r in tool_results)
    assert any(r.startswith("Invalid arguments") for r in tool_results)
    assert response.is_refusal and response.refusal_reason == "model_refused" and response.sources


def test_citations_of_chunks_never_retrieved_are_dropped(chat: Any, stub: StubServer) -> None:
    _, make, path = chat
    stub.on(path, Reply(200, completion("Use colcon build --symlink-install [S1]. Also rebuild nightly [S42].")))

    response = make().run(QUESTION)

    assert response.answer == "Use colcon build --symlink-install [1]." and len(response.sources) == 1


def test_answer_citing_nothing_retrieved_becomes_a_refusal(chat: Any, stub: StubServer) -> None:
    _, make, path = chat
    stub.on(path, Reply(200, completion("Run make install twice [S42]. Or reboot.")))

    response = make().run(QUESTION)

    assert response.is_refusal and response.answer == REFUSAL and response.refusal_reason == "uncited_answer"
    assert response.sources  # the nearest sections are still listed


def test_uncited_answer_becomes_a_refusal(chat: Any, stub: StubServer) -> None:
    _, make, path = chat
    stub.on(path, Reply(200, completion("Just use colcon.")))

    assert make().run(QUESTION).refusal_reason == "uncited_answer"


def test_model_refusal(chat: Any, stub: StubServer) -> None:
    _, make, path = chat
    stub.on(path, Reply(200, completion(REFUSAL)))

    response = make().run(QUESTION)

    assert response.is_refusal and response.answer == REFUSAL and response.refusal_reason == "model_refused"


def test_rate_limit_with_long_retry_after_is_returned_at_once(chat: Any, stub: StubServer) -> None:
    _, make, path = chat
    stub.on(path, Reply(429, {"error": {"message": "quota"}}, {"Retry-After": "30"}))

    with pytest.raises(errors.AnswerRateLimitError) as caught:
        make().run(QUESTION)

    assert caught.value.recoverable and caught.value.retry_after == 30.0 and len(stub.calls(path)) == 1


def test_rate_limit_with_short_retry_after_is_retried_once(chat: Any, stub: StubServer) -> None:
    _, make, path = chat
    stub.on(path, Reply(429, {"error": {"message": "quota"}}, {"Retry-After": "0"}), answer_citing())

    response = make().run(QUESTION)

    assert not response.is_refusal and len(stub.calls(path)) == 2


def test_auth_failure_is_not_retried_and_leaks_nothing(chat: Any, stub: StubServer) -> None:
    _, make, path = chat
    stub.on(path, Reply(401, {"error": {"message": f"bad key {KEY}"}}))

    with pytest.raises(errors.AnswerAuthError) as caught:
        make().run(QUESTION)

    assert not caught.value.recoverable and len(stub.calls(path)) == 1
    assert KEY not in str(caught.value) and "127.0.0.1" not in str(caught.value)


def test_hang_times_out_without_retry(chat: Any, stub: StubServer) -> None:
    _, make, path = chat
    stub.on(path, Reply(hang=True))

    with pytest.raises(errors.AnswerTimeoutError):
        make(llm_timeout_s=1.0).run(QUESTION)

    assert len(stub.calls(path)) == 1


@pytest.mark.parametrize("reply", [Reply(200, b"{not json"), Reply(200, {"choices": []}), Reply(503, {})])
def test_unreadable_or_failed_replies_are_retried_once(chat: Any, stub: StubServer, reply: Reply) -> None:
    _, make, path = chat
    stub.on(path, reply)

    with pytest.raises(errors.AnswerUnavailableError) as caught:
        make().run(QUESTION)

    assert caught.value.recoverable and len(stub.calls(path)) == 2
    assert "not json" not in str(caught.value)


def test_one_http_client_per_container(chat: Any, stub: StubServer) -> None:
    _, make, path = chat
    stub.on(path, answer_citing())
    agent = make()
    agent.run(QUESTION)
    clients = container_for(agent.settings)
    built = clients.built_names()

    agent.run(QUESTION)
    agent.run("What is a costmap?")

    # One pool per container: every call of the three answers went over the first call's connection.
    assert len({call.connection for call in stub.calls(path)}) == 1 and len(stub.calls(path)) == 3
    assert clients.built_names() == built


def test_a_snapstart_restore_gives_the_model_fresh_connections(book_env: Settings, stub: StubServer) -> None:
    # GIVEN Gemini's container, which has answered once (its pool holds a connection)
    stub.on(GEMINI_PATH, answer_citing())
    settings = load_settings(qdrant_path=book_env.qdrant_path, embedding_provider="local", llm_provider="gemini",
                             gemini_api_key=KEY, gemini_base_url=stub.url + "/v1beta/openai", llm_timeout_s=1.0)
    container = container_for(settings)
    container.agent.run(QUESTION)

    # WHEN a SnapStart restore drops what holds connections, and the next request answers
    dropped = container.reset_network()
    container.agent.run(QUESTION)

    # THEN the model, and everything that held the old one, were rebuilt: the answer came over a new
    # connection (a restored snapshot's sockets are dead)
    assert {"chat_model", "answerer", "rewriter", "agent"} <= set(dropped)
    assert len({call.connection for call in stub.calls(GEMINI_PATH)}) == 2


# --- streaming (`stream`: what POST /api/answer/stream uses) --------------------------------------------


def both_ways(agent: BookRAGAgent, stub: StubServer, path: str,
              *script: Callable[[Recorded], Reply]) -> tuple[list[str], Draft, Draft]:
    """(pieces streamed, the streamed draft, `answer`'s draft) for the same scripted model output."""
    answerer = agent.answerer
    assert isinstance(answerer, StreamingAnswerer)
    hits = agent.retriever.search(QUESTION).hits

    def retrieve(query: str) -> list[Any]:
        return agent.retriever.search(query).hits

    stub.on(path, *script)
    whole = answerer.answer(QUESTION, hits, retrieve, Deadline(20))
    stub.on(path, *script)
    pieces, streamed = drained(answerer.stream(QUESTION, hits, retrieve, Deadline(20)))
    return pieces, streamed, whole


def test_stream_yields_the_model_s_pieces_and_returns_answer_s_draft(chat: Any, stub: StubServer) -> None:
    _, make, path = chat
    text = "Build with colcon build --symlink-install [S1]. Python files are then linked, not copied [S1]."

    pieces, streamed, whole = both_ways(make(), stub, path, model_says(text))

    assert pieces == words(text) and streamed == whole and whole.text == text
    first, second = stub.calls(path)
    assert "stream" not in first.json() and second.json() == {**first.json(), "stream": True}


def test_a_streamed_tool_call_is_assembled_as_the_whole_reply_s(chat: Any, stub: StubServer) -> None:
    # GIVEN a model that says a word, asks for a search (its arguments arrive in pieces), then cites its result;
    # its call carries a field of the provider's own (Gemini's thinking models sign their calls and refuse
    # a call sent back without its signature)
    _, make, path = chat
    signed = {**tool_call("Nav2 costmap layers"), "extra_content": {"google": {"thought_signature": "c2lnbmVk"}}}

    # WHEN the answerer runs streamed and whole
    pieces, streamed, whole = both_ways(make(), stub, path, model_says("Let me search.", [signed]),
                                        cite_the_search)

    # THEN both sent the same conversation, the call back exactly as the model made it, and drew the same
    # draft; the preamble streamed on its own line
    whole_calls, streamed_calls = stub.calls(path)[:2], stub.calls(path)[2:]
    assert [c.json()["messages"] for c in streamed_calls] == [c.json()["messages"] for c in whole_calls]
    assert streamed_calls[1].json()["messages"][2]["tool_calls"][0] == signed
    assert streamed == whole and not whole.refused
    assert pieces[:4] == ["Let ", "me ", "search.", "\n"] and "".join(pieces[4:]) == whole.text


FIRST_SENTENCE = "Build with colcon build --symlink-install [S1]. "
UNAVAILABLE, TIMEOUT = errors.AnswerUnavailableError, errors.AnswerTimeoutError


def sse_reply(*pieces: str | StreamPiece, end: bool = True) -> Reply:
    return Reply(200, stream=completion_chunks(*pieces, end=end))


def faults() -> dict[str, tuple[Reply, type[errors.BookRAGError], int, int]]:
    """name: (the model's reply, the error it must end in, model calls made, delta events before it)."""
    failed = {"error": {"message": UPSTREAM_DETAIL}}
    return {
        # Before any text: retried as `answer` retries; the stream is then only the sources and the error.
        "503": (Reply(503, failed), UNAVAILABLE, 2, 0),
        "429-retry-after-30": (Reply(429, failed, {"Retry-After": "30"}), errors.AnswerRateLimitError, 1, 0),
        "401": (Reply(401, failed), errors.AnswerAuthError, 1, 0),
        "hang": (Reply(hang=True), TIMEOUT, 1, 0),
        "stalls-before-text": (sse_reply(Hold(), end=False), TIMEOUT, 1, 0),
        "malformed-first-chunk": (sse_reply(b"data: {" + UPSTREAM_DETAIL.encode() + b"\n\n"), UNAVAILABLE, 2, 0),
        # After text: never retried (the reader has it); the sentence sent stays, the error follows.
        "stalls-after-text": (sse_reply(FIRST_SENTENCE, "Python ", Hold(), end=False), TIMEOUT, 1, 1),
        "malformed-after-text": (sse_reply(FIRST_SENTENCE, "Python ", b"data: {" + UPSTREAM_DETAIL.encode() + b"\n\n"),
                                 UNAVAILABLE, 1, 1),
        "connection-cut-after-text": (sse_reply(FIRST_SENTENCE, "Python ", CUT, end=False), UNAVAILABLE, 1, 1),
        "ends-before-finishing": (sse_reply(FIRST_SENTENCE, "Python ", end=False), UNAVAILABLE, 1, 1),
    }


@pytest.mark.parametrize("fault", list(faults()))
def test_a_failing_stream_ends_in_the_error_event_answer_s_mapping_gives(agent_with: Callable[..., BookRAGAgent],
                                                                          stub: StubServer, fault: str) -> None:
    reply, error, calls, deltas = faults()[fault]
    stub.on(OPENAI_PATH, reply)
    agent = agent_with(llm_provider="openai", openai_api_key=KEY, openai_base_url=stub.url + "/v1",
                       llm_timeout_s=0.5)
    events = agent.events(QUESTION)

    body = b"".join(frames(next(events), events)).decode()

    kinds = [kind for kind, _ in parse(body)]
    assert kinds == ["sources", *["delta"] * deltas, "error"]
    fields = ("error", "code", "error_type", "message", "recoverable")
    expected = error_body(error(), "agent")
    assert {k: parse(body)[-1][1][k] for k in fields} == {k: expected[k] for k in fields}
    assert len(stub.calls(OPENAI_PATH)) == calls
    assert UPSTREAM_DETAIL not in body and "Traceback" not in body and "127.0.0.1" not in body


def test_a_stream_shows_only_what_the_final_answer_keeps(agent_with: Callable[..., BookRAGAgent],
                                                        stub: StubServer) -> None:
    # GIVEN a model whose answer holds a sentence its cited chunk does not support, one that cites a
    # document it was never shown, and one without a marker that belongs to the next marked sentence
    supported = "Build with colcon build --symlink-install [S1]."
    unsupported = "Quantum annealing schedules the Jupiter fleet's warp coils [S1]."
    unknown = "The secret tuning guide recommends tripling every gain [S9]."
    unmarked, tail = "Python files are then linked.", "They are not copied [S1]."
    hold = Hold(bound_s=20)  # the model's last words wait until the reader has seen text
    stub.on(OPENAI_PATH, Reply(200, stream=completion_chunks(
        *words(" ".join([supported, unsupported, unknown, unmarked, tail])), hold, " That is all [S1].")))
    agent = agent_with(llm_provider="openai", openai_api_key=KEY, openai_base_url=stub.url + "/v1")

    events = []
    for event in agent.events(QUESTION):
        events.append(event)
        if event.kind == "delta":
            hold.release()

    # THEN text was sent while the model was still writing, and the streamed text is exactly the final
    # answer: the dropped sentences were never shown
    final = events[-1].response
    deltas = [e.text for e in events if e.kind == "delta"]
    assert hold.released_in_time is True
    assert not final.is_refusal and "".join(deltas) == final.answer
    assert "--symlink-install" in final.answer and "linked" in final.answer
    assert "Quantum" not in final.answer and "tripling" not in final.answer


@pytest.mark.parametrize(("pieces", "refused"), [
    # markers after the full stop, the group split between chunks: the sentence waits for all of them
    (["Build with colcon build --symlink-install. ", "[S1] [", "S2] Python files are then linked [S1]."], False),
    (["Build with colcon build --symlink-install [S1].", " [", "S2] Python files are then linked [S1]."], False),
    # the model declines, then writes on: nothing is sent, and the answer is the refusal
    (["This question is not answered in the book. ", "Build with colcon build --symlink-install [S1]. ",
      "Python files are then linked [S1]."], True),
], ids=["marker-group-split", "marker-after-a-marked-stop", "refusal-then-text"])
def test_the_streamed_text_is_the_final_answer_however_the_pieces_fall(
        agent_with: Callable[..., BookRAGAgent], stub: StubServer, pieces: list[str], refused: bool) -> None:
    stub.on(OPENAI_PATH, Reply(200, stream=completion_chunks(*pieces)))
    agent = agent_with(llm_provider="openai", openai_api_key=KEY, openai_base_url=stub.url + "/v1")

    events = list(agent.events(QUESTION))

    final = events[-1].response
    assert final.is_refusal is refused
    assert "".join(e.text for e in events if e.kind == "delta") == ("" if refused else final.answer)
    assert all(e.text for e in events if e.kind == "delta")


def test_what_a_model_says_before_a_tool_call_is_not_streamed_as_the_answer(
        agent_with: Callable[..., BookRAGAgent], stub: StubServer) -> None:
    # GIVEN a model whose words before its tool call the book would support, then its cited answer
    stub.on(OPENAI_PATH, model_says("Nav2 costmap layers [S1].", [tool_call("Nav2 costmap layers")]),
            cite_the_search)
    agent = agent_with(llm_provider="openai", openai_api_key=KEY, openai_base_url=stub.url + "/v1")

    events = list(agent.events("Which layers make up a Nav2 costmap?"))

    # THEN only the answer after the search was streamed, and it is the final answer
    final = events[-1].response
    assert len(stub.calls(OPENAI_PATH)) == 2 and not final.is_refusal
    assert "".join(e.text for e in events if e.kind == "delta") == final.answer == "A costmap is built from layers [1]."


# --- Cohere --------------------------------------------------------------------------------------------


def cohere_reply(text: str, citations: list[tuple[int, int, list[str]]]) -> dict[str, Any]:
    return {
        "id": "chat-1", "finish_reason": "COMPLETE",
        "message": {
            "role": "assistant", "content": [{"type": "text", "text": text}],
            "citations": [{"start": s, "end": e, "text": text[s:e], "type": "TEXT_CONTENT",
                           "sources": [{"type": "document", "id": i, "document": {"id": i}} for i in ids]}
                          for s, e, ids in citations],
        },
        "usage": {"billed_units": {"input_tokens": 10, "output_tokens": 5}},
    }


@pytest.fixture
def cohere_agent(stub: StubServer, agent_with: Callable[..., BookRAGAgent]) -> Callable[..., BookRAGAgent]:
    def make(**extra: Any) -> BookRAGAgent:
        return agent_with(**{"llm_provider": "cohere", "cohere_api_key": KEY, "cohere_base_url": stub.url,
                             "llm_timeout_s": 1.0, **extra})

    return make


# The SDK's response parsing touches a deprecated pydantic attribute; not ours to fix.
cohere_sdk_warnings = pytest.mark.filterwarnings("ignore::DeprecationWarning:cohere.core.unchecked_base_model")


@cohere_sdk_warnings
def test_cohere_grounded_answer(cohere_agent: Callable[..., BookRAGAgent], stub: StubServer) -> None:
    text = "Build with colcon build --symlink-install. Python files are then linked, not copied."
    first_end = text.index(".")
    stub.on("/v2/chat", Reply(200, cohere_reply(text, [(0, first_end, ["S1"]),
                                                       (first_end + 2, len(text) - 1, ["S1", "S2"])])))

    response = cohere_agent().run(QUESTION)

    assert response.answer == ("Build with colcon build --symlink-install [1]. Python files are then linked, "
                               "not copied [1][2].")
    (call,) = stub.calls("/v2/chat")
    body = call.json()
    assert body["model"] == "command-r-plus-08-2024" and body["messages"][0]["role"] == "system"
    assert [d["id"] for d in body["documents"]][:2] == ["S1", "S2"]
    assert set(body["documents"][0]["data"]) == {"title", "snippet"}
    titles = [d["data"]["title"] for d in body["documents"]]
    assert len(response.sources) == 2
    assert all(title.endswith(source.section) for title, source in zip(titles, response.sources, strict=False))


@cohere_sdk_warnings
def test_cohere_citation_of_an_unknown_document_becomes_a_refusal(cohere_agent: Callable[..., BookRAGAgent],
                                                                  stub: StubServer) -> None:
    text = "Reinstall the operating system."
    stub.on("/v2/chat", Reply(200, cohere_reply(text, [(0, len(text) - 1, ["S77"])])))

    response = cohere_agent().run(QUESTION)

    assert response.is_refusal and response.refusal_reason == "uncited_answer"


@cohere_sdk_warnings
@pytest.mark.parametrize(("reply", "error", "calls"), [
    (Reply(429, {"message": "slow down"}, {"Retry-After": "30"}), errors.AnswerRateLimitError, 1),
    (Reply(401, {"message": "invalid api token"}), errors.AnswerAuthError, 1),
    (Reply(hang=True), errors.AnswerTimeoutError, 1),
    (Reply(500, {"message": "boom"}), errors.AnswerUnavailableError, 2),
])
def test_cohere_failures(cohere_agent: Callable[..., BookRAGAgent], stub: StubServer, reply: Reply,
                         error: type[errors.BookRAGError], calls: int) -> None:
    stub.on("/v2/chat", reply)

    with pytest.raises(error):
        cohere_agent().run(QUESTION)

    assert len(stub.calls("/v2/chat")) == calls


# --- the request deadline ---------------------------------------------------------------------------


@pytest.mark.parametrize(("left_after_reserve", "told"), [(0.6, "The search took too long"),
                                                          (0.2, "No time left")])
def test_a_model_requested_search_never_outlives_the_deadline(book_env: Settings, stub: StubServer,
                                                              left_after_reserve: float, told: str) -> None:
    from bookrag.answering.answerers.tool_calling import FINAL_ANSWER_RESERVE_S, ToolCallingAnswerer

    # GIVEN a model that asks for a search, a search that never returns, and little time left
    stub.on(OPENAI_PATH, Reply(200, completion(None, [tool_call("more")])), answer_citing("S1"))
    settings = load_settings(qdrant_path=book_env.qdrant_path, embedding_provider="local", llm_provider="openai",
                             openai_api_key=KEY, openai_base_url=stub.url + "/v1")
    hits = container_for(book_env).retriever.search(QUESTION).hits
    released = threading.Event()
    searches: list[str] = []

    def stuck(query: str) -> list[Any]:
        searches.append(query)
        released.wait(30)
        return []

    deadline = Deadline(FINAL_ANSWER_RESERVE_S + left_after_reserve, clock=lambda: 0.0)  # a frozen clock

    # WHEN the answerer runs
    try:
        answerer = ToolCallingAnswerer(settings, container_for(settings).chat_model)
        draft = answerer.answer(QUESTION, hits, stuck, deadline)
    finally:
        released.set()

    # THEN the model is told to answer from what it has, and does
    tool_message = next(m for m in stub.calls(OPENAI_PATH)[1].json()["messages"] if m["role"] == "tool")
    assert tool_message["content"].startswith(told)
    assert not draft.refused and draft.cited_chunk_ids == [hits[0].chunk_id]
    assert len(searches) == (1 if left_after_reserve >= 0.5 else 0)


def cohere_stream(text: str, citations: list[tuple[int, int, list[str]]], *pieces: StreamPiece,
                  end: bool = True) -> list[StreamPiece]:
    """Cohere's v2 chat stream of `text` word by word, each citation sent once the text it cites has
    been, then `pieces` (a fault), then `message-end` (`end=False`: the stream stops before it)."""

    def event(kind: str, **fields: Any) -> bytes:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n".encode()

    out: list[StreamPiece] = [event("message-start", id="chat-1", delta={"message": {"role": "assistant"}}),
                              event("content-start", index=0,
                                    delta={"message": {"content": {"type": "text", "text": ""}}})]
    sent, pending = 0, sorted(citations, key=lambda c: c[1])
    for word in words(text):
        out.append(event("content-delta", index=0, delta={"message": {"content": {"text": word}}}))
        sent += len(word)
        while pending and pending[0][1] <= sent:
            start, stop, ids = pending.pop(0)
            out.append(event("citation-start", index=0, delta={"message": {"citations": {
                "start": start, "end": stop, "text": text[start:stop], "type": "TEXT_CONTENT",
                "sources": [{"type": "document", "id": i, "document": {"id": i}} for i in ids]}}}))
            out.append(event("citation-end", index=0))
    out += [*pieces, event("content-end", index=0)]
    if end:
        out.append(event("message-end", delta={"finish_reason": "COMPLETE",
                                               "usage": {"billed_units": {"input_tokens": 10, "output_tokens": 5}}}))
    return out


COHERE_TEXT = "Build with colcon build --symlink-install. Python files are then linked, not copied."
COHERE_CITATIONS = [(0, COHERE_TEXT.index("."), ["S1"]),
                    (COHERE_TEXT.index(".") + 2, len(COHERE_TEXT) - 1, ["S1", "S2"])]
WORDS = len(words(COHERE_TEXT))
UNREADABLE_EVENT = b"event: content-delta\ndata: {" + UPSTREAM_DETAIL.encode() + b"\n\n"


@cohere_sdk_warnings
def test_cohere_stream_yields_its_text_and_returns_answer_s_draft(cohere_agent: Callable[..., BookRAGAgent],
                                                                   stub: StubServer) -> None:
    def reply(req: Recorded) -> Reply:
        if req.json().get("stream"):
            return Reply(200, stream=cohere_stream(COHERE_TEXT, COHERE_CITATIONS))
        return Reply(200, cohere_reply(COHERE_TEXT, COHERE_CITATIONS))

    pieces, streamed, whole = both_ways(cohere_agent(), stub, "/v2/chat", reply)

    # The text streams as it comes; Cohere's citations come as events of their own, so the markers
    # are placed at the end, where `answer` places them.
    assert pieces == words(COHERE_TEXT) and streamed == whole
    assert whole.text == ("Build with colcon build --symlink-install [S1]. "
                          "Python files are then linked, not copied [S1][S2].")
    first, second = stub.calls("/v2/chat")
    assert second.json() == {**first.json(), "stream": True}


@cohere_sdk_warnings
@pytest.mark.parametrize(("reply", "error", "calls", "streamed"), [
    (lambda: Reply(500, {"message": UPSTREAM_DETAIL}), UNAVAILABLE, 2, 0),
    (lambda: Reply(hang=True), TIMEOUT, 1, 0),
    (lambda: Reply(200, stream=cohere_stream(COHERE_TEXT, [], Hold(), end=False)), TIMEOUT, 1, WORDS),
    (lambda: Reply(200, stream=cohere_stream(COHERE_TEXT, [], CUT, end=False)), UNAVAILABLE, 1, WORDS),
    (lambda: Reply(200, stream=cohere_stream(COHERE_TEXT, [], end=False)), UNAVAILABLE, 1, WORDS),
    # An event the SDK cannot read is skipped by it (and logged, raw): the reply would have a hole.
    (lambda: Reply(200, stream=cohere_stream("", [], UNREADABLE_EVENT, *cohere_stream(COHERE_TEXT, [])[2:])),
     UNAVAILABLE, 2, 0),
    (lambda: Reply(200, stream=cohere_stream(COHERE_TEXT, [], UNREADABLE_EVENT)), UNAVAILABLE, 1, WORDS),
], ids=["500", "hang", "stalls-after-text", "connection-cut-after-text", "ends-without-message-end",
        "unreadable-event-before-text", "unreadable-event-after-text"])
def test_cohere_stream_failures(cohere_agent: Callable[..., BookRAGAgent], stub: StubServer,
                                reply: Callable[[], Reply], error: type[errors.BookRAGError], calls: int,
                                streamed: int, caplog: pytest.LogCaptureFixture) -> None:
    stub.on("/v2/chat", reply())
    agent = cohere_agent(llm_timeout_s=0.5)
    assert isinstance(agent.answerer, StreamingAnswerer)
    pieces = agent.answerer.stream(QUESTION, agent.retriever.search(QUESTION).hits, lambda q: [], Deadline(20))
    received: list[str] = []

    with pytest.raises(error) as caught:
        received.extend(pieces)

    assert len(received) == streamed and len(stub.calls("/v2/chat")) == calls
    assert UPSTREAM_DETAIL not in str(caught.value)
    assert UPSTREAM_DETAIL not in caplog.text  # the upstream's words are not ours to log
