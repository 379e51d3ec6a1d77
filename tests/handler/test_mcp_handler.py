"""POST /mcp through the real agent Lambda handler with events/ files: warm containers, security, cold starts.

The trap this guards: the SDK's session manager can run once per process, so an app that entered one on
its first invocation fails from the second warm invocation on. Here one process serves several MCP
invocations, a scheduled warm-up between them, REST between them, and every one must succeed.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bookrag.auth.keys import mint_key
from tests.support.events import body_of, load_event
from tests.support.mcp import copy_index, jsonrpc_result, mcp_event, server_env
from tests.support.paths import ROOT

TOOLS = {"retrieve_book_content", "perform_retrieval", "retrieve_book_context", "answer_question"}


@pytest.fixture(autouse=True)
def _on_sample_book(book_env: Any, use_env: Any) -> None:
    use_env(LLM_PROVIDER="extractive")


def _call(handler: Any, event: dict[str, Any], context: Any) -> dict[str, Any]:
    response: dict[str, Any] = handler.lambda_handler(event, context)
    return response


def test_every_warm_invocation_serves_mcp_around_a_warm_up_and_rest(agent_handler: Any, retrieval_handler: Any,
                                                                    lambda_context: Any) -> None:
    results = []
    for event in ("mcp-retrieve-book-content.json", "scheduled-warmup.json", "mcp-retrieve-book-content.json",
                  "mcp-tools-list.json", "mcp-retrieve-book-content.json", "answer-valid.json",
                  "mcp-retrieve-book-content.json"):
        response = _call(agent_handler, load_event(event), lambda_context)
        if event.startswith("mcp-retrieve"):
            assert response["statusCode"] == 200
            results.append(jsonrpc_result(response))
        elif event == "mcp-tools-list.json":
            assert {t["name"] for t in jsonrpc_result(response)["tools"]} == TOOLS
        elif event == "answer-valid.json":
            assert response["statusCode"] == 200

    assert len(results) == 4 and all(not r.get("isError") for r in results)
    assert all(r["structuredContent"] == results[0]["structuredContent"] for r in results)
    # The same request on the REST route, through the retrieval function, answers the same.
    rest = _call(retrieval_handler, load_event("tool-retrieve-book-content.json"), lambda_context)
    assert results[0]["structuredContent"] == body_of(rest)
    assert json.loads(results[0]["content"][0]["text"]) == body_of(rest)


def test_a_bad_argument_is_a_tool_error_with_the_rest_contract_code(agent_handler: Any, retrieval_handler: Any,
                                                                    lambda_context: Any) -> None:
    result = jsonrpc_result(_call(agent_handler, load_event("mcp-retrieve-book-content-invalid.json"),
                                  lambda_context))
    rest = load_event("tool-retrieve-book-content.json")
    rest["body"] = base64.b64encode(json.dumps({"query": "ROS 2 nodes", "top_k": 11}).encode()).decode()
    rest_response = _call(retrieval_handler, rest, lambda_context)

    assert result["isError"] is True
    assert rest_response["statusCode"] == 400
    assert result["structuredContent"] == body_of(rest_response)
    assert result["structuredContent"]["code"] == "INVALID_TOP_K"
    assert "Traceback" not in result["content"][0]["text"]


def test_answer_question_is_the_agent_contract_response(agent_handler: Any, lambda_context: Any) -> None:
    answer = jsonrpc_result(_call(agent_handler, load_event("mcp-answer-question.json"), lambda_context))
    rest = body_of(_call(agent_handler, load_event("answer-valid.json"), lambda_context))

    assert not answer.get("isError")
    assert answer["structuredContent"] == rest
    assert rest["sources"] and not rest["is_refusal"]


def test_answer_question_names_its_query_id_for_feedback(agent_handler: Any, lambda_context: Any,
                                                         invoke: Any, use_env: Any) -> None:
    # GIVEN an MCP answer: its _meta names the question log's record, as X-Query-Id does over REST
    answer = jsonrpc_result(_call(agent_handler, load_event("mcp-answer-question.json"), lambda_context))
    query_id = answer["_meta"]["bookrag/query_id"]
    # WHEN the client votes on it THEN the vote is stored
    vote = invoke(agent_handler, "feedback-unknown.json", body={"query_id": query_id, "rating": "down"})
    assert vote["statusCode"] == 201
    # and with the log off there is nothing to vote on, so no id is given
    use_env(QUESTION_LOG="off")
    silent = jsonrpc_result(_call(agent_handler, load_event("mcp-answer-question.json"), lambda_context))
    assert "bookrag/query_id" not in (silent.get("_meta") or {})


def test_resources_list_the_table_of_contents_and_every_document(agent_handler: Any, lambda_context: Any) -> None:
    result = jsonrpc_result(_call(agent_handler, load_event("mcp-resources-list.json"), lambda_context))
    uris = [r["uri"] for r in result["resources"]]

    assert uris[0] == "book://toc"
    assert len(uris) == 1 + 16  # the sample book's 16 documents
    assert all(u.startswith("book://docs/") for u in uris[1:])


@pytest.fixture
def with_keys(use_env: Any) -> tuple[str, str]:
    key, record = mint_key("mcp")
    use_env(AUTH_ENABLED="true", API_KEY_HASHES=record.setting_entry(), RATE_LIMIT_PER_MINUTE="2",
            AUTH_FAILURE_LIMIT_PER_MINUTE="2")
    return key, record.key_id


def test_mcp_needs_a_key_and_counts_against_its_rate_limit(agent_handler: Any, lambda_context: Any,
                                                           with_keys: tuple[str, str]) -> None:
    key, _ = with_keys
    missing = _call(agent_handler, mcp_event("mcp-tools-list.json"), lambda_context)
    wrong = _call(agent_handler, mcp_event("mcp-tools-list.json", x_api_key=key[:-2] + "xx"), lambda_context)
    statuses = [_call(agent_handler, mcp_event("mcp-tools-list.json", x_api_key=key), lambda_context)["statusCode"]
                for _ in range(3)]

    assert missing["statusCode"] == 401 and body_of(missing)["code"] == "AUTH_REQUIRED"
    assert wrong["statusCode"] == 401 and body_of(wrong)["code"] == "INVALID_API_KEY"
    assert statuses == [200, 200, 429]


def test_mcp_body_size_limit_is_the_apis(agent_handler: Any, lambda_context: Any) -> None:
    response = _call(agent_handler, mcp_event("mcp-retrieve-book-content.json", {"query": "x" * 20_000}),
                     lambda_context)

    assert response["statusCode"] == 413
    assert body_of(response)["code"] == "PAYLOAD_TOO_LARGE"


@pytest.mark.parametrize(("headers", "status"), [
    ({"host": "evil.example"}, 421),  # DNS rebinding: a name that is not the API's
    ({"origin": "https://evil.example"}, 403),  # a browser page of another site
    ({"origin": "https://id.execute-api.us-east-1.amazonaws.com"}, 200),  # the API's own origin
])
def test_dns_rebinding_protection_allows_only_the_apis_host_names(agent_handler: Any, lambda_context: Any,
                                                                  headers: dict[str, str], status: int) -> None:
    response = _call(agent_handler, mcp_event("mcp-tools-list.json", **headers), lambda_context)

    assert response["statusCode"] == status


def test_a_custom_domain_is_allowed_once_configured(agent_handler: Any, lambda_context: Any, use_env: Any) -> None:
    event = mcp_event("mcp-tools-list.json", host="book.example.org")
    refused = _call(agent_handler, event, lambda_context)["statusCode"]
    use_env(MCP_ALLOWED_HOSTS="book.example.org")

    assert refused == 421
    assert _call(agent_handler, event, lambda_context)["statusCode"] == 200


# --- cold starts, in fresh interpreters (benchmarks/child.py; `make bench` times them) ------------------


def cold_start(index: Path, tmp_path: Path, *events: str) -> list[dict[str, Any]]:
    out = tmp_path / "result.json"
    env = server_env(index)
    env.pop("LLM_PROVIDER")
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "child.py"), "cold", "--function", "agent", "--track",
                    "--out", str(out), "--events", *events], env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, timeout=300)
    responses: list[dict[str, Any]] = json.loads(out.read_text())["responses"]
    return responses


def sdk_modules(modules: list[str]) -> list[str]:
    return [m for m in modules if m.split(".")[0] in ("mcp", "mcp_types")]


@pytest.fixture(scope="module")
def index_copy(indexed_book: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_index(indexed_book["QDRANT_PATH"], tmp_path_factory.mktemp("mcp-cold") / "qdrant")


def test_cold_mcp_then_warm_up_then_warm_mcp_in_one_fresh_process(index_copy: Path, tmp_path: Path) -> None:
    responses = cold_start(index_copy, tmp_path, "mcp-retrieve-book-content.json", "scheduled-warmup.json",
                           "mcp-retrieve-book-content.json", "mcp-tools-list.json", "mcp-retrieve-book-content.json")

    assert [r["status"] for r in responses] == [200, "event", 200, 200, 200]
    assert sdk_modules(responses[0]["new_modules"])  # the first MCP request loads the SDK...
    assert sdk_modules(responses[2]["new_modules"]) == []  # ...once


def test_health_and_warm_up_import_nothing_from_the_mcp_sdk(index_copy: Path, tmp_path: Path) -> None:
    health, warm_up, answer = cold_start(index_copy, tmp_path, "health.json", "scheduled-warmup.json",
                                         "answer-valid.json")

    assert health["status"] == 200 and warm_up["status"] == "event" and answer["status"] == 200
    assert sdk_modules(health["new_modules"] + warm_up["new_modules"] + answer["new_modules"]) == []
    assert "bookrag.mcp.server" not in warm_up["new_modules"]


def test_the_agent_snapshot_holds_the_mcp_path_so_a_restored_mcp_request_imports_nothing(index_copy: Path) -> None:
    code = """
import json, sys
from bookrag.devtools.local_invoke import load_handler
from bookrag.runtime.lambda_context import SyntheticContext
from bookrag.runtime.snapstart import registered_hooks
from tests.support.events import load_event
from tests.support.paths import ROOT
handler = load_handler("agent", root=ROOT)
for hook in registered_hooks("before_snapshot"):  # as Lambda runs them before it takes the snapshot
    hook()
for hook in registered_hooks("after_restore"):
    hook()
before = set(sys.modules)
response = handler.lambda_handler(load_event("mcp-retrieve-book-content.json"), SyntheticContext())
print(json.dumps({"status": response["statusCode"], "new": sorted(set(sys.modules) - before)}))
"""
    out = subprocess.run([sys.executable, "-c", code], env=server_env(index_copy), cwd=ROOT, check=True,
                         capture_output=True, text=True, timeout=300)
    result = json.loads(out.stdout.strip().splitlines()[-1])

    assert result == {"status": 200, "new": []}
