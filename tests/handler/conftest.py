"""Handler-level fixtures: the real Lambda entry points, a Lambda context, fresh per-test state."""

from __future__ import annotations

import base64
import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import ROOT, load_event


@dataclass
class LambdaContext:
    function_name: str = "bookrag-test"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:bookrag-test"
    aws_request_id: str = "52fdfc07-2182-154f-163f-5f0f9a621d72"

    def get_remaining_time_in_millis(self) -> int:
        return 25_000


def _load_handler(function_dir: str, module: str) -> ModuleType:
    # Distinct module names per function, as Lambda would import them, without touching sys.path.
    path = ROOT / "functions" / function_dir / f"{module}.py"
    spec = importlib.util.spec_from_file_location(module, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def retrieval_handler() -> ModuleType:
    return _load_handler("retrieval", "retrieval_handler")


@pytest.fixture(scope="session")
def authorizer_handler() -> ModuleType:
    return _load_handler("authorizer", "authorizer_handler")


@pytest.fixture(scope="session")
def agent_handler() -> ModuleType:
    return _load_handler("agent", "agent_handler")


@pytest.fixture
def lambda_context() -> LambdaContext:
    return LambdaContext()


@pytest.fixture
def invoke(lambda_context: LambdaContext) -> Callable[..., dict[str, Any]]:
    """Invoke a handler with an events/ file (optionally with a replaced JSON body)."""

    def run(handler: ModuleType, event_name: str, body: Any = None) -> dict[str, Any]:
        event = load_event(event_name)
        if body is not None:
            event["body"] = base64.b64encode(json.dumps(body).encode()).decode()
            event["isBase64Encoded"] = True
        result: dict[str, Any] = handler.lambda_handler(event, lambda_context)
        return result

    return run


def body_of(response: dict[str, Any]) -> Any:
    raw = response["body"]
    if response.get("isBase64Encoded"):
        raw = base64.b64decode(raw).decode()
    return json.loads(raw)


__all__ = ["Path", "body_of"]
