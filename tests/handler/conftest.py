"""Handler-level fixtures: the real Lambda entry points, a Lambda context, fresh per-test state."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

from bookrag.devtools.local_invoke import load_handler
from bookrag.runtime.lambda_context import SyntheticContext
from tests.support.events import load_event
from tests.support.paths import ROOT
from tests.support.stubs import StubServer
from tests.support.upstreams import COHERE_DIM, embed_reply


# root=ROOT: this checkout's functions/, whichever checkout the bookrag package was imported from.
@pytest.fixture(scope="session")
def retrieval_handler() -> ModuleType:
    return load_handler("retrieval", root=ROOT)


@pytest.fixture(scope="session")
def authorizer_handler() -> ModuleType:
    return load_handler("authorizer", root=ROOT)


@pytest.fixture(scope="session")
def agent_handler() -> ModuleType:
    return load_handler("agent", root=ROOT)


@pytest.fixture
def lambda_context() -> SyntheticContext:
    return SyntheticContext(function_name="bookrag-test")


@pytest.fixture
def invoke(lambda_context: SyntheticContext) -> Callable[..., dict[str, Any]]:
    """Invoke a handler with an events/ file (optionally with a replaced JSON body)."""

    def run(handler: ModuleType, event_name: str, body: Any = None) -> dict[str, Any]:
        event = load_event(event_name)
        if body is not None:
            event["body"] = base64.b64encode(json.dumps(body).encode()).decode()
            event["isBase64Encoded"] = True
        result: dict[str, Any] = handler.lambda_handler(event, lambda_context)
        return result

    return run


@pytest.fixture(scope="module")
def cohere_stub() -> Iterator[StubServer]:
    """Cohere's embed endpoint on 127.0.0.1 (the deployed configuration's embedder, in cold-start tests)."""
    with StubServer() as server:
        server.on("/v2/embed", embed_reply(COHERE_DIM))
        yield server
