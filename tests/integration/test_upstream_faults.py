"""Cohere (the embedder) and Qdrant (the store) failing every way, through every retrieval route.

Each upstream is a stub on 127.0.0.1 that answers 401/403, 404, 429 with Retry-After, 500/503, hangs,
resets the connection, returns malformed JSON, or is not there at all (connection refused). For each
fault and route the caller gets the contract's code and status, `recoverable` where a retry can help,
and nothing of the upstream's: no exception text, URL, host, port, key or upstream body.

Bounded time, without timing asserts: the stubs count the calls they saw. A request path never retries
a timeout (one call of at most the configured timeout), and retries a fast failure (5xx, reset,
malformed body, 429 with a short Retry-After) at most once, after at most 1 s (Cohere) or 0.2 s
(Qdrant). A 429 whose Retry-After exceeds that is answered at once, with the hint. With the defaults
(COHERE_TIMEOUT_S=5, QDRANT_TIMEOUT_S=5) a hang costs one 5 s timeout; the worst sequence on a warm
container (a slow 5xx then a timeout, on each upstream) is (5 + 1 + 5) + (5 + 0.2 + 5) = 21.2 s,
under the function's 25 s timeout and API Gateway's 30 s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.support.stubs import Reply, StubServer, closed_port
from tests.support.upstreams import (
    COLLECTION,
    FAULTS,
    UPSTREAM_DETAIL,
    cohere_embed,
    qdrant_exists,
    qdrant_query,
    serve_qdrant,
    stub_env,
)

COHERE_KEY = "co-canary-fault-matrix-91ac"
QDRANT_KEY = "qd-canary-fault-matrix-5be2"
QUERY = "How do I install ROS 2 Humble?"
EMBED = "/v2/embed"
EXISTS = f"/collections/{COLLECTION}/exists"
SEARCH = f"/collections/{COLLECTION}/points/query"

# Every route that embeds and searches, with a request body; /api/answer only once the agent has it.
ROUTES: dict[str, dict[str, Any]] = {
    "/api/retrieve": {"query": QUERY},
    "/api/tools/retrieve_book_content": {"query": QUERY},
    "/api/tools/perform_retrieval": {"query": QUERY},
    "/api/tools/retrieve_book_context": {"query": QUERY},
    "/api/answer": {"query": QUERY},
}


@dataclass(frozen=True)
class Expect:
    code: str
    recoverable: bool
    calls: int | None  # calls the failing upstream saw for one API request (None: nothing listening)
    error_type: str = ""  # the agent contract's error type, for /api/answer


# The one rule for both upstreams: no usable answer (refused, reset, timeout, 5xx, unreadable 2xx) is a
# CONNECTION_ERROR; an answer that refuses the request is EMBEDDING_ERROR / SEARCH_ERROR (404, 429);
# refused credentials are AUTH_ERROR. All are HTTP 500 (the REST contract's status for each).
def _expectations(refusal: str, error_type: str) -> dict[str, Expect]:
    return {
        "401": Expect("AUTH_ERROR", False, 1, error_type),
        "403": Expect("AUTH_ERROR", False, 1, error_type),
        "404": Expect(refusal, False, 1, error_type),
        "429-retry-after-30": Expect(refusal, True, 1, error_type),
        "429-retry-after-0": Expect(refusal, True, 2, error_type),
        "500": Expect("CONNECTION_ERROR", True, 2, error_type),
        "503": Expect("CONNECTION_ERROR", True, 2, error_type),
        "hang": Expect("CONNECTION_ERROR", True, 1, error_type),
        "reset": Expect("CONNECTION_ERROR", True, 2, error_type),
        "refused": Expect("CONNECTION_ERROR", True, None, error_type),
        "malformed-json": Expect("CONNECTION_ERROR", True, 2, error_type),
    }


COHERE_EXPECT = _expectations("EMBEDDING_ERROR", "EmbeddingError")
QDRANT_EXPECT = _expectations("SEARCH_ERROR", "RetrievalError")
WARM_FAULTS = [name for name in QDRANT_EXPECT if name != "refused"]


# The canary Qdrant key travels over http to the loopback stub, as Settings allows; qdrant-client warns.
pytestmark = pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")


@pytest.fixture
def cohere() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


@pytest.fixture
def qdrant() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


@pytest.fixture(scope="module")
def client() -> TestClient:
    from bookrag.web.app import create_app

    return TestClient(create_app("all"))


@pytest.fixture
def configure(use_env: Callable[..., None]) -> Callable[..., None]:
    """Point the service at the stubs: remote Qdrant, Cohere embeddings, short timeouts, canary keys."""

    def apply(cohere_url: str, qdrant_url: str) -> None:
        use_env(**stub_env(cohere_url, qdrant_url, cohere_key=COHERE_KEY, qdrant_key=QDRANT_KEY))

    return apply


def _route_or_skip(client: TestClient, route: str) -> None:
    if route not in client.app.openapi()["paths"]:  # type: ignore[attr-defined]
        pytest.skip(f"{route} is not served yet")


def refused_url() -> str:
    return f"http://127.0.0.1:{closed_port()}"


def assert_contract_error(response: Any, route: str, expect: Expect, *upstreams: str) -> None:
    """The contract's envelope and code, recoverable as expected, and nothing of the upstream's."""
    assert response.status_code == 500, response.text
    body = response.json()
    assert {"error", "code", "details"} <= set(body)
    assert body["code"] == expect.code
    assert body["recoverable"] is expect.recoverable
    assert body["error"] and isinstance(body["details"], dict)
    if route == "/api/answer":
        assert body["error_type"] == expect.error_type and body["message"]
    text = response.text
    leaks = [COHERE_KEY, QDRANT_KEY, UPSTREAM_DETAIL, "127.0.0.1", "localhost", "http://", "Traceback",
             "httpx", "httpcore", "qdrant_client", "cohere.", "Exception", "Errno"]
    for url in upstreams:
        leaks.append(url.rsplit(":", 1)[1])  # the port
    found = [needle for needle in leaks if needle in text]
    assert not found, f"leaked {found}: {text}"


def _retry_after(response: Any, fault: str) -> None:
    if fault == "429-retry-after-30":
        assert response.headers["retry-after"] == "30"
    elif fault == "429-retry-after-0":
        assert response.headers["retry-after"] == "1"  # never tell a caller to retry in 0 s
    else:
        assert "retry-after" not in response.headers


# Cohere down (a timeout, a 429, a 5xx, a reset or unreadable reply, nothing listening): the query is
# searched on the BM25 half alone and answered, saying so. Refused credentials or request: the error.
COHERE_DOWN = [name for name, expect in COHERE_EXPECT.items() if expect.recoverable]
COHERE_REFUSES = [name for name in COHERE_EXPECT if name not in COHERE_DOWN]


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("fault", COHERE_REFUSES)
def test_cohere_fault(fault: str, route: str, client: TestClient, cohere: StubServer, qdrant: StubServer,
                      configure: Callable[..., None]) -> None:
    # GIVEN a healthy store and a Cohere that refuses this way
    _route_or_skip(client, route)
    expect = COHERE_EXPECT[fault]
    reply = FAULTS[fault].reply
    serve_qdrant(qdrant)
    if reply is not None:
        cohere.on(EMBED, reply)
    configure(cohere.url if reply is not None else refused_url(), qdrant.url)

    # WHEN the route is called
    response = client.post(route, json=ROUTES[route])

    # THEN the contract's error, bounded attempts, and the store is never searched without a vector
    assert_contract_error(response, route, expect, cohere.url, qdrant.url)
    _retry_after(response, fault)
    if expect.calls is not None:
        assert len(cohere.calls(EMBED)) == expect.calls
    assert not qdrant.calls(SEARCH)
    assert "x-retrieval-mode" not in response.headers


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("fault", COHERE_DOWN)
def test_cohere_down_falls_back_to_bm25(fault: str, route: str, client: TestClient, cohere: StubServer,
                                        qdrant: StubServer, configure: Callable[..., None]) -> None:
    # GIVEN a healthy store and a Cohere that is down this way
    _route_or_skip(client, route)
    expect = COHERE_EXPECT[fault]
    reply = FAULTS[fault].reply
    serve_qdrant(qdrant)
    if reply is not None:
        cohere.on(EMBED, reply)
    configure(cohere.url if reply is not None else refused_url(), qdrant.url)

    # WHEN the route is called
    response = client.post(route, json=ROUTES[route])

    # THEN it is answered from the BM25 half alone (one sparse query, no dense vector), and says so
    assert response.status_code == 200, response.text
    assert response.headers["x-retrieval-mode"] == "sparse-fallback"
    if expect.calls is not None:
        assert len(cohere.calls(EMBED)) == expect.calls  # the same bounded attempts, no more
    searches = [r.json() for r in qdrant.calls(SEARCH)]
    assert searches and all(s.get("using") == "bm25" and "prefetch" not in s for s in searches)
    assert "Install ROS 2 Humble" in response.text  # the stub's one chunk, found by its words


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("fault", QDRANT_EXPECT)
def test_qdrant_fault_on_a_cold_container(fault: str, route: str, client: TestClient, cohere: StubServer,
                                          qdrant: StubServer, configure: Callable[..., None]) -> None:
    # GIVEN a healthy Cohere and a Qdrant that fails this way from its first call (the collection check)
    _route_or_skip(client, route)
    expect = QDRANT_EXPECT[fault]
    reply = FAULTS[fault].reply
    cohere.on(EMBED, cohere_embed)
    if fault == "404":  # what Qdrant says when the collection is missing
        serve_qdrant(qdrant, exists=qdrant_exists(False), info=reply, query=reply)
    elif reply is not None:
        serve_qdrant(qdrant, exists=reply, info=reply, query=reply)
    configure(cohere.url, qdrant.url if reply is not None else refused_url())

    # WHEN the route is called
    response = client.post(route, json=ROUTES[route])

    # THEN
    assert_contract_error(response, route, expect, cohere.url, qdrant.url)
    _retry_after(response, fault)
    if expect.calls is not None:
        assert len(qdrant.calls(EXISTS)) == expect.calls
        assert not qdrant.calls(SEARCH)


# Every route shares the search path (the cold matrix shows each route maps the errors alike): the warm
# container's failing search is checked on the REST route and the agent's.
@pytest.mark.parametrize("route", ["/api/retrieve", "/api/answer"])
@pytest.mark.parametrize("fault", WARM_FAULTS)
def test_qdrant_fault_on_a_warm_container(fault: str, route: str, client: TestClient, cohere: StubServer,
                                          qdrant: StubServer, configure: Callable[..., None]) -> None:
    # GIVEN a container that has already served this route (collection checked, clients built)
    _route_or_skip(client, route)
    expect = QDRANT_EXPECT[fault]
    cohere.on(EMBED, cohere_embed)
    serve_qdrant(qdrant)
    configure(cohere.url, qdrant.url)
    assert client.post(route, json=ROUTES[route]).status_code == 200

    # WHEN the search itself starts failing this way
    qdrant.on(SEARCH, FAULTS[fault].reply or Reply())
    qdrant.requests.clear()
    response = client.post(route, json=ROUTES[route])

    # THEN only the search was called, as often as the policy allows
    assert_contract_error(response, route, expect, cohere.url, qdrant.url)
    _retry_after(response, fault)
    assert len(qdrant.calls(SEARCH)) == expect.calls
    assert not qdrant.calls(EXISTS)


def test_an_idle_connection_reset_is_retried_once(client: TestClient, cohere: StubServer, qdrant: StubServer,
                                                  configure: Callable[..., None]) -> None:
    # GIVEN a warm container whose pooled connection to Qdrant a proxy has since reset
    cohere.on(EMBED, cohere_embed)
    serve_qdrant(qdrant)
    configure(cohere.url, qdrant.url)
    assert client.post("/api/retrieve", json={"query": QUERY}).status_code == 200
    qdrant.on(SEARCH, Reply(reset=True), qdrant_query())
    qdrant.requests.clear()

    # WHEN the next search meets the reset
    response = client.post("/api/retrieve", json={"query": QUERY})

    # THEN the read was retried once, on a fresh connection, and the caller never noticed
    assert response.status_code == 200
    assert len(response.json()["retrieved_chunks"]) == 1
    assert len(qdrant.calls(SEARCH)) == 2


def test_a_store_timeout_is_not_retried_on_the_request_path(client: TestClient, cohere: StubServer,
                                                            qdrant: StubServer,
                                                            configure: Callable[..., None]) -> None:
    # GIVEN a Qdrant that hangs on search, then would answer
    cohere.on(EMBED, cohere_embed)
    serve_qdrant(qdrant, query=Reply(hang=True))
    qdrant.on(SEARCH, Reply(hang=True), qdrant_query())
    configure(cohere.url, qdrant.url)

    # WHEN
    response = client.post("/api/retrieve", json={"query": QUERY})

    # THEN the budget is spent: one call, a recoverable CONNECTION_ERROR, no second timeout
    assert response.status_code == 500 and response.json()["code"] == "CONNECTION_ERROR"
    assert len(qdrant.calls(SEARCH)) == 1
