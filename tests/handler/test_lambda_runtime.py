"""The built artifact under Lambda's own runtime client: `sam build`'s function code and layer, run by
`awslambdaric` on python3.12 against a Runtime API on 127.0.0.1, in the deployed configuration (Cohere
embeddings, here its stub). One runtime process per function serves every event in turn, as a warm
container would: health, a scheduled warm-up, then a retrieve or an answer.

Needs `make sam-check` (it builds `.aws-sam/build` and the `.venv-ric` runtime venv); skips without it.
"""

from __future__ import annotations

import json
import queue
import subprocess
from typing import Any

import pytest

from tests.support.env import cohere_stub_book, without_our_vars
from tests.support.events import load_event
from tests.support.paths import ROOT
from tests.support.runtime_api import RuntimeApi
from tests.support.stubs import StubServer

BUILD = ROOT / ".aws-sam" / "build"
RIC_PYTHON = ROOT / ".venv-ric" / "bin" / "python3.12"
FUNCTIONS = {"retrieval": ("RetrievalFunction", "retrieval_handler.lambda_handler"),
             "agent": ("AgentFunction", "agent_handler.lambda_handler")}

pytestmark = pytest.mark.skipif(not (RIC_PYTHON.exists() and (BUILD / "SharedLayer").is_dir()),
                                reason="no sam build output or runtime venv: run `make sam-check`")


@pytest.fixture(scope="module")
def deployed_env(cohere_stub: StubServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return cohere_stub_book(cohere_stub.url, str(tmp_path_factory.mktemp("ric") / "qdrant"))


def run_under_ric(function: str, events: list[str], env: dict[str, str]) -> list[tuple[str, Any]]:
    """Each event's outcome ("response" or "error", and the body), from one runtime process."""
    folder, handler = FUNCTIONS[function]
    task_root = BUILD / folder
    layer = BUILD / "SharedLayer" / "python"
    with RuntimeApi([load_event(name) for name in events]) as api:
        child_env = {**without_our_vars(), **env, "AWS_LAMBDA_RUNTIME_API": api.address,
                     "LAMBDA_TASK_ROOT": str(task_root), "PYTHONPATH": f"{task_root}:{layer}",
                     "AWS_LAMBDA_FUNCTION_NAME": f"bookrag-{function}", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
                     "AWS_LAMBDA_FUNCTION_VERSION": "1", "AWS_REGION": "us-east-1", "AUTH_ENABLED": "false",
                     "POWERTOOLS_METRICS_NAMESPACE": "bookrag-test", "_HANDLER": handler}
        process = subprocess.Popen([str(RIC_PYTHON), "-m", "awslambdaric", handler], cwd=task_root, env=child_env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            outcomes = []
            for _ in events:
                try:
                    request_id, kind, body = api.results.get(timeout=300)
                except queue.Empty:
                    pytest.fail("the runtime returned no result")
                assert request_id != "init", f"init failed: {body}"
                outcomes.append((kind, body))
            assert process.poll() is None  # the same process is still serving: one warm container
            return outcomes
        finally:
            process.kill()
            process.wait(timeout=30)


@pytest.mark.parametrize(("function", "request_event"), [("retrieval", "retrieve-valid.json"),
                                                          ("agent", "answer-valid.json")])
def test_built_function_serves_health_warm_up_and_a_request_in_one_process(
        deployed_env: dict[str, str], cohere_stub: StubServer, function: str, request_event: str) -> None:
    calls_before = len(cohere_stub.calls("/v2/embed"))

    (h_kind, health), (w_kind, warm_up), (r_kind, response) = run_under_ric(
        function, ["health.json", "scheduled-warmup.json", request_event], deployed_env)

    assert (h_kind, w_kind, r_kind) == ("response", "response", "response")
    assert health["statusCode"] == 200 and json.loads(health["body"])["status"] == "ok"
    assert warm_up["warmed"] is True and warm_up["store_ready"] is True
    assert response["statusCode"] == 200
    body = json.loads(response["body"])
    assert body["retrieved_chunks"] if function == "retrieval" else body["answer"]
    # The warm-up never paid: the only embed call is the request's own query.
    assert len(cohere_stub.calls("/v2/embed")) - calls_before == 1


def test_built_function_answers_bad_input_with_the_contract_envelope(deployed_env: dict[str, str]) -> None:
    ((kind, response),) = run_under_ric("retrieval", ["retrieve-query-too-long.json"], deployed_env)

    assert kind == "response" and response["statusCode"] == 400
    assert "Traceback" not in response["body"]
