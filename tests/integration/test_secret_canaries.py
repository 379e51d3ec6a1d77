"""Canary keys through every error path: none may reach a response, a log line, stdout or an exception.

COHERE_API_KEY, QDRANT_API_KEY and GEMINI_API_KEY are set to canaries; the upstreams (stubs on
127.0.0.1) refuse them, fail, hang or answer garbage, and every route is called. All log records of
every logger (httpx, httpcore, cohere, qdrant_client, urllib3 and ours, at DEBUG) and everything
written to the process's stdout and stderr (Powertools writes there) are searched for the canaries.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from bookrag.devtools.local_invoke import load_handler
from bookrag.errors import BookRAGError
from bookrag.runtime.lambda_context import SyntheticContext
from tests.support.events import load_event
from tests.support.paths import ROOT
from tests.support.stubs import Reply, StubServer
from tests.support.upstreams import FAULTS, UPSTREAM_DETAIL, cohere_embed, serve_qdrant, stub_env

CANARIES = {
    "COHERE_API_KEY": "co-CANARY-5f3a1e9d77",
    "QDRANT_API_KEY": "qd-CANARY-0c4b2a8e11",
    "GEMINI_API_KEY": "gm-CANARY-9d8e7f6a55",
}
LOGGERS = ("", "httpx", "httpcore", "cohere", "qdrant_client", "urllib3", "bookrag", "starlette", "fastapi",
           "mangum", "aws_lambda_powertools")
ROUTES = ("/api/retrieve", "/api/tools/retrieve_book_content", "/api/tools/perform_retrieval",
          "/api/tools/retrieve_book_context", "/api/answer")
FAULT_NAMES = ("401", "500", "hang", "malformed-json", "reset")

pytestmark = pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")


@pytest.fixture
def everything_logged(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    yield caplog


@pytest.fixture
def upstreams(use_env: Callable[..., None]) -> Iterator[tuple[StubServer, StubServer, StubServer]]:
    with StubServer() as cohere, StubServer() as qdrant, StubServer() as gemini:
        use_env(**stub_env(cohere.url, qdrant.url, cohere_key=CANARIES["COHERE_API_KEY"],
                           qdrant_key=CANARIES["QDRANT_API_KEY"]),
                LLM_PROVIDER="gemini", GEMINI_API_KEY=CANARIES["GEMINI_API_KEY"], GEMINI_BASE_URL=gemini.url,
                LLM_TIMEOUT_S="0.5")
        gemini.on("/", Reply(401, {"error": {"message": UPSTREAM_DETAIL}}))
        yield cohere, qdrant, gemini


def _assert_clean(where: str, text: str) -> None:
    found = [name for name, canary in CANARIES.items() if canary in text]
    assert not found, f"{found} leaked into {where}"


def _exception_texts(exc: BaseException) -> str:
    """repr and str of the exception and of everything chained to it, as a logger could print them."""
    parts: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        parts += [repr(current), str(current), repr(getattr(current, "details", ""))]
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    return "\n".join(parts)


@pytest.mark.parametrize("upstream", ["cohere", "qdrant"])
@pytest.mark.parametrize("fault", FAULT_NAMES)
def test_no_canary_leaks_from_any_error_path(fault: str, upstream: str, everything_logged: pytest.LogCaptureFixture,
                                             capfd: pytest.CaptureFixture[str], upstreams: Any) -> None:
    from bookrag.config.settings import get_settings
    from bookrag.services.container import container_for
    from bookrag.web.app import create_app

    # GIVEN canary keys and one upstream failing this way
    cohere, qdrant, _ = upstreams
    reply = FAULTS[fault].reply
    assert reply is not None
    cohere.on("/v2/embed", reply if upstream == "cohere" else cohere_embed)
    serve_qdrant(qdrant, exists=reply if upstream == "qdrant" else None)
    client = TestClient(create_app("all"))
    served = client.app.openapi()["paths"]  # type: ignore[attr-defined]

    # WHEN every route is called, and the retrieval core directly
    # A timeout costs the same on every route (the cold fault matrix covers each): two routes suffice.
    routes = ROUTES[:1] + ROUTES[-1:] if fault == "hang" else ROUTES
    bodies = [client.post(route, json={"query": "How do I install ROS 2?"}).text for route in routes if route in served]
    # Cohere down (not refusing): the query is answered from BM25 (its warning logged), not failed.
    falls_back = upstream == "cohere" and fault not in ("401", "403", "404")
    if falls_back:
        assert container_for(get_settings()).retriever.search("How do I install ROS 2?").hits
        failure = ""
    else:
        with pytest.raises(BookRAGError) as caught:
            container_for(get_settings()).retriever.search("How do I install ROS 2?")
        failure = _exception_texts(caught.value)

    # THEN the calls failed (or fell back), and no canary is anywhere
    assert bodies and (falls_back or all('"code"' in body for body in bodies))
    assert (cohere.calls("/v2/embed") and qdrant.requests) or upstream == "cohere"
    for body in bodies:
        _assert_clean("a response body", body)
        assert UPSTREAM_DETAIL not in body
    _assert_clean("an exception", failure)
    records = everything_logged.records
    assert any(r.name.startswith("httpcore") for r in records)  # the transport's DEBUG records were captured
    _assert_clean("a log record", "\n".join(f"{r.getMessage()} {r.__dict__}" for r in records))
    out, err = capfd.readouterr()
    _assert_clean("stdout", out)
    _assert_clean("stderr", err)


def test_the_canaries_did_reach_the_upstreams(upstreams: Any) -> None:
    """The search above would pass vacuously if the keys were never sent: they are, in headers only."""
    from bookrag.config.settings import get_settings
    from bookrag.services.container import container_for

    cohere, qdrant, _ = upstreams
    cohere.on("/v2/embed", cohere_embed)
    serve_qdrant(qdrant)

    container_for(get_settings()).retriever.search("How do I install ROS 2?")

    assert cohere.calls("/v2/embed")[0].headers["authorization"] == f"Bearer {CANARIES['COHERE_API_KEY']}"
    assert qdrant.requests[0].headers["api-key"] == CANARIES["QDRANT_API_KEY"]


def test_no_canary_leaks_through_the_lambda_handler(upstreams: Any, retrieval_handler_module: Any,
                                                    capfd: pytest.CaptureFixture[str],
                                                    everything_logged: pytest.LogCaptureFixture) -> None:
    """The Powertools logger and metrics write JSON to stdout: search it too."""
    cohere, qdrant, _ = upstreams
    cohere.on("/v2/embed", FAULTS["401"].reply or Reply())
    serve_qdrant(qdrant)

    response = retrieval_handler_module.lambda_handler(load_event("retrieve-valid.json"),
                                                        SyntheticContext(function_name="bookrag-test"))

    assert response["statusCode"] == 500
    _assert_clean("a handler response", str(response))
    out, err = capfd.readouterr()
    _assert_clean("stdout", out)
    _assert_clean("stderr", err)
    _assert_clean("a log record", "\n".join(f"{r.getMessage()} {r.__dict__}" for r in everything_logged.records))


@pytest.fixture
def retrieval_handler_module() -> Any:
    return load_handler("retrieval", root=ROOT)
