"""Upstream faults through the real Lambda entry point: the same contract errors as through the app."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.support.events import body_of
from tests.support.stubs import StubServer
from tests.support.upstreams import FAULTS, UPSTREAM_DETAIL, cohere_embed, serve_qdrant, stub_env

COHERE_KEY = "co-canary-handler-3e7f"
QDRANT_KEY = "qd-canary-handler-c21d"

pytestmark = pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")


@pytest.mark.parametrize(("upstream", "fault", "code", "recoverable"), [
    ("qdrant", "401", "AUTH_ERROR", False),
    ("qdrant", "hang", "CONNECTION_ERROR", True),
    ("qdrant", "malformed-json", "CONNECTION_ERROR", True),
    ("cohere", "401", "AUTH_ERROR", False),  # refused, not down: no fallback (a 429 or 503 falls back, below)
])
def test_faults_through_the_lambda_handler(upstream: str, fault: str, code: str, recoverable: bool,
                                           retrieval_handler: Any, invoke: Any,
                                           use_env: Callable[..., None]) -> None:
    reply = FAULTS[fault].reply
    assert reply is not None
    with StubServer() as cohere, StubServer() as qdrant:
        # GIVEN the real entry point and one failing upstream
        cohere.on("/v2/embed", reply if upstream == "cohere" else cohere_embed)
        serve_qdrant(qdrant, exists=reply if upstream == "qdrant" else None)
        use_env(**stub_env(cohere.url, qdrant.url, cohere_key=COHERE_KEY, qdrant_key=QDRANT_KEY))

        # WHEN an API Gateway event from events/ arrives
        response = invoke(retrieval_handler, "retrieve-valid.json")

    # THEN the contract's error, and nothing of the upstream's
    assert response["statusCode"] == 500
    body = body_of(response)
    assert body["code"] == code and body["recoverable"] is recoverable
    text = str(response)
    for needle in (COHERE_KEY, QDRANT_KEY, UPSTREAM_DETAIL, "127.0.0.1", cohere.url, qdrant.url):
        assert needle not in text
    if fault.startswith("429"):
        assert response["headers"]["retry-after"] == "30"


@pytest.mark.parametrize("fault", ["429-retry-after-30", "503"])
def test_cohere_down_through_the_lambda_handler_falls_back_to_bm25(fault: str, retrieval_handler: Any, invoke: Any,
                                                                   use_env: Callable[..., None]) -> None:
    reply = FAULTS[fault].reply
    assert reply is not None
    with StubServer() as cohere, StubServer() as qdrant:
        # GIVEN the real entry point and Cohere's embed endpoint down
        cohere.on("/v2/embed", reply)
        serve_qdrant(qdrant)
        use_env(**stub_env(cohere.url, qdrant.url, cohere_key=COHERE_KEY, qdrant_key=QDRANT_KEY))

        # WHEN an API Gateway event from events/ arrives
        response = invoke(retrieval_handler, "retrieve-valid.json")

    # THEN the book's words still find the chunk, and the response says how
    assert response["statusCode"] == 200, response
    assert body_of(response)["retrieved_chunks"]
    assert response["headers"]["x-retrieval-mode"] == "sparse-fallback"
