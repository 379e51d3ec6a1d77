"""The deployed streaming path: `sam build`'s StreamFunction started exactly as AWS's Lambda Web Adapter
starts it (its wrapper runs ${LAMBDA_TASK_ROOT}/${_HANDLER}, run.sh, with the template's PORT), ready when
the template's readiness path answers; then spoken to as the adapter speaks to it (HTTP on 127.0.0.1, the
invocation's request context in `x-amzn-request-context`). The model is an OpenAI-compatible stub that
holds the rest of its completion until the test has read the first SSE text event: the text reaches the
reader before the model has finished, and the final event is exactly `POST /api/answer`'s body.

Needs `make sam-check` (the build, and python3.12 for the layer's wheels); skips without it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bookrag.auth.keys import mint_key
from tests.support import web_adapter as adapter
from tests.support.env import cohere_stub_book
from tests.support.paths import ROOT
from tests.support.sse import events_of, parse
from tests.support.stubs import Hold, Recorded, Reply, StubServer
from tests.support.template import load_template
from tests.support.upstreams import chat_reply, completion_chunks, words
from tests.support.web_adapter import BUILT, Started

LLM_PATH = "/v1/chat/completions"
QUESTION = "I edited a Python file in my ROS 2 package. How do I build so that my changes take effect?"


@pytest.fixture(scope="module")
def llm() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


@pytest.fixture(scope="module")
def key() -> tuple[str, str]:
    plaintext, record = mint_key("stream reader")
    return plaintext, record.setting_entry()


@pytest.fixture(scope="module")
def started(cohere_stub: StubServer, llm: StubServer, key: tuple[str, str],
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Started]:
    if not BUILT:
        pytest.skip("no sam build output of StreamFunction: run `make sam-check`")
    declared = adapter.declared()
    assert declared["AWS_LAMBDA_EXEC_WRAPPER"] == "/opt/bootstrap"
    assert declared["AWS_LWA_INVOKE_MODE"] == "response_stream"
    book = cohere_stub_book(cohere_stub.url, str(tmp_path_factory.mktemp("lwa") / "qdrant"))
    with adapter.started({**book, "AUTH_ENABLED": "true", "API_KEY_HASHES": key[1],
                          "AUTH_FAILURE_LIMIT_PER_MINUTE": "1", "POWERTOOLS_METRICS_NAMESPACE": "bookrag-test",
                          "LLM_PROVIDER": "openai", "OPENAI_API_KEY": "llm-lwa-key-91d0",
                          "OPENAI_BASE_URL": llm.url + "/v1"}) as running:
        yield running


def quoted(req: Recorded) -> list[str]:
    """The stub model's answer: two sentences quoted from the first document it is shown, cited (so the
    grounding check keeps them, whichever chunk the stub embedder's ties put first)."""
    shown = re.search(r'<document id="(S\d+)"[^>]*>\n(.*?)\n</document>', req.json()["messages"][1]["content"], re.S)
    assert shown is not None, "the model was shown no document"
    body = shown.group(2).split("\n\n", 1)[-1]  # past a heading line
    prose = " ".join(body.replace("**", "").replace("`", "").split())
    sentences = [x for x in re.split(r"(?<=[.!?])\s+", prose) if len(x.split()) >= 6][:2]
    assert len(sentences) == 2, prose
    return [f"{x.rstrip('.!?')} [{shown.group(1)}]. " for x in sentences]


def held_after_first_sentence(hold: Hold) -> Callable[[Recorded], Reply]:
    def reply(req: Recorded) -> Reply:
        first, second = quoted(req)
        # The next sentence's first word tells the answerer that the first one has ended.
        head, *tail = words(second.strip())
        return Reply(200, stream=completion_chunks(*words(first), head, hold, *tail))

    return reply


def context(ip: str) -> dict[str, str]:
    """The header the adapter adds to every request it forwards: a function URL's request context."""
    return {"x-amzn-request-context": json.dumps({"http": {"method": "POST", "sourceIp": ip}, "requestId": "r"})}


def test_the_first_text_event_arrives_before_the_model_has_finished(started: Started, llm: StubServer,
                                                                     key: tuple[str, str]) -> None:
    # GIVEN a model that streams a sentence and a word, then holds the rest of its completion back
    hold = Hold(bound_s=60)
    llm.on(LLM_PATH, held_after_first_sentence(hold))
    events: list[tuple[str, Any]] = []

    # WHEN a reader streams the answer through the adapter's port, releasing the model on the first text
    with httpx.Client(timeout=60) as client, client.stream(
            "POST", f"{started.base}/api/answer/stream", json={"query": QUESTION},
            headers={"X-API-Key": key[0], **context("203.0.113.7")}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for kind, data in events_of(response.iter_lines()):
            events.append((kind, data))
            if kind == "delta":
                hold.release()

    # THEN the reader had text while the model still held its words back (released by the reader, not
    # by the stub's bound), and the rest followed
    assert hold.released_in_time is True
    assert [kind for kind, _ in events][:2] == ["sources", "delta"] and events[-1][0] == "final"
    assert not events[-1][1]["is_refusal"]
    assert events[-1][1]["answer"] == "".join(data["text"] for kind, data in events if kind == "delta")


def test_the_final_event_is_the_answer_route_s_response(started: Started, llm: StubServer,
                                                        key: tuple[str, str]) -> None:
    llm.on(LLM_PATH, lambda req: chat_reply(req, "".join(quoted(req)).strip()))
    headers = {"X-API-Key": key[0], **context("203.0.113.8")}

    with httpx.Client(timeout=60) as client:
        streamed = parse(client.post(f"{started.base}/api/answer/stream", json={"query": QUESTION},
                                     headers=headers).text)
        whole = client.post(f"{started.base}/api/answer", json={"query": QUESTION}, headers=headers)

    assert whole.status_code == 200
    assert streamed[-1] == ("final", whole.json()) and not whole.json()["is_refusal"]


def test_keys_and_per_ip_limits_are_the_app_s_with_the_adapter_s_source_ip(started: Started) -> None:
    # A function URL has no authorizer: the app refuses a missing key, and counts failures per reader IP,
    # which it reads from the adapter's request context (every request comes from 127.0.0.1).
    bad = "brk_sec_" + "x" * 40
    with httpx.Client(base_url=started.base, timeout=30) as client:
        def ask(ip: str, **headers: str) -> httpx.Response:
            return client.post("/api/answer/stream", json={"query": QUESTION}, headers={**headers, **context(ip)})

        missing = ask("198.51.100.1")
        wrong = ask("198.51.100.1", **{"X-API-Key": bad})
        again = ask("198.51.100.1", **{"X-API-Key": bad})
        other = ask("198.51.100.2", **{"X-API-Key": bad})

    assert missing.status_code == 401 and missing.json()["code"] == "AUTH_REQUIRED"
    assert wrong.status_code == 401 and wrong.json()["code"] == "INVALID_API_KEY"
    assert again.status_code == 429  # AUTH_FAILURE_LIMIT_PER_MINUTE=1 for that reader
    assert other.status_code == 401  # another reader is not limited by the first one's failures


def test_a_scheduled_warm_up_arrives_as_a_pass_through_event(started: Started, cohere_stub: StubServer) -> None:
    calls = len(cohere_stub.calls("/v2/embed"))
    path = adapter.declared()["AWS_LWA_PASS_THROUGH_PATH"]

    # The adapter POSTs a non-HTTP event (an EventBridge schedule) with a null request context.
    warmed = httpx.post(started.base + path, json={"source": "aws.events", "detail-type": "Scheduled Event"},
                        headers={"x-amzn-request-context": "null"}, timeout=60)

    assert warmed.status_code == 200 and warmed.json()["warmed"] is True and warmed.json()["store_ready"] is True
    assert len(cohere_stub.calls("/v2/embed")) == calls  # never a paid call
    # A reader's POST to that path carries its own request context: not a warm-up (no route: 404 after auth).
    assert httpx.post(started.base + path, json={}, headers=context("198.51.100.3"), timeout=30).status_code == 401


def test_the_template_starts_the_app_the_adapter_s_way() -> None:
    function = load_template()["Resources"]["StreamFunction"]["Properties"]
    assert function["FunctionUrlConfig"] == {"AuthType": "NONE", "InvokeMode": "RESPONSE_STREAM"}
    assert (Path(ROOT / "functions" / "stream" / function["Handler"]).stat().st_mode & 0o111) != 0
