"""Authentication through the real Lambda entry points: the authorizer and the retrieval function.

DynamoDB is moto's; the embedder is Cohere's SDK pointed at a stub, so "no embedding call" is what the
stub saw on the wire. Events come from events/; a key is added to a copy, never to the file.
"""

from __future__ import annotations

import copy
import logging
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bookrag.config.settings import get_settings
from bookrag.services.container import auth_container, container_for, reset_auth
from tests.support.aws import API_KEYS_TABLE, RATE_LIMIT_TABLE, AuthTables, FakeClock
from tests.support.events import body_of, load_event
from tests.support.paths import ROOT
from tests.support.upstreams import embed_reply

RETRIEVAL_EVENTS = ["retrieve-valid.json", "retrieve-defaults.json", "tool-retrieve-book-content.json",
                    "tool-perform-retrieval.json", "tool-retrieve-book-context.json", "tools-list.json",
                    "openapi.json", "retrieve-not-json.json", "retrieve-query-too-long.json"]
OTHER_IP = "198.51.100.9"
TINY_BOOK = """---
title: Robots
---
# Robots

## Installing ROS 2

Install ROS 2 Humble on Ubuntu 22.04 with apt, then source the setup script in every new shell.
"""


def with_key(event_name: str, key: str | None, source_ip: str | None = None) -> dict[str, Any]:
    """A copy of an events/ file as API Gateway would send it with this key (and source IP)."""
    event = copy.deepcopy(load_event(event_name))
    if key is not None:
        event["headers"]["x-api-key"] = key
        if "identitySource" in event:  # authorizer events: the key header comes first, then the source IP
            event["identitySource"] = [key, *event["identitySource"]]
    if source_ip is not None:
        event["requestContext"]["http"]["sourceIp"] = source_ip
    return event


@pytest.fixture
def captured_logs() -> Iterator[list[str]]:
    """Every log record of the test (ours, Powertools', botocore's), rendered with all its fields."""
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(f"{record.getMessage()} {record.__dict__}")

    handler = Keep(logging.DEBUG)
    loggers = [logging.getLogger(), logging.getLogger("bookrag")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.DEBUG)
    yield lines
    for lg, level in zip(loggers, levels, strict=True):
        lg.removeHandler(handler)
        lg.setLevel(level)


# --- the authorizer -------------------------------------------------------------------------------


@pytest.fixture
def authorizer(authorizer_handler: Any, lambda_context: Any, auth_tables: AuthTables,
               use_env: Callable[..., None]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    use_env(**auth_tables.env(rate_limit=5, failure_limit=2))
    guard = auth_container().guard
    assert guard is not None
    guard.clock = FakeClock()

    def call(event: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = authorizer_handler.lambda_handler(event, lambda_context)
        return result

    return call


def test_authorizer_allows_a_valid_key_and_passes_only_ids(authorizer: Any, auth_tables: AuthTables) -> None:
    key = auth_tables.mint("alice")

    result = authorizer(with_key("authorizer-retrieve.json", key))

    assert result == {"isAuthorized": True, "context": {"key_id": key.split("_")[1], "owner": "alice"}}


@pytest.mark.parametrize("presented", [None, "", "brk_0123456789ab_" + "a" * 43, "garbage"])
def test_authorizer_denies_missing_and_invalid_keys(authorizer: Any, auth_tables: AuthTables,
                                                    presented: str | None) -> None:
    auth_tables.mint()

    assert authorizer(with_key("authorizer-retrieve.json", presented)) == {"isAuthorized": False}


def test_authorizer_denies_a_disabled_key(authorizer: Any, auth_tables: AuthTables) -> None:
    key = auth_tables.mint(enabled=False)

    assert authorizer(with_key("authorizer-retrieve.json", key)) == {"isAuthorized": False}


def test_authorizer_locks_out_an_ip_after_failed_attempts(authorizer: Any, auth_tables: AuthTables) -> None:
    key = auth_tables.mint()
    wrong = key[:-1] + ("A" if key[-1] != "A" else "B")
    for _ in range(2):
        assert authorizer(with_key("authorizer-retrieve.json", wrong))["isAuthorized"] is False

    assert authorizer(with_key("authorizer-retrieve.json", key))["isAuthorized"] is False
    assert authorizer(with_key("authorizer-retrieve.json", key, OTHER_IP))["isAuthorized"] is True


def test_authorizer_raises_when_keys_cannot_be_read(authorizer: Any, auth_tables: AuthTables) -> None:
    # API Gateway answers 500 and caches nothing: a cached deny would lock a valid key out for the TTL.
    key = auth_tables.mint()
    auth_tables.client.delete_table(TableName=API_KEYS_TABLE)

    with pytest.raises(Exception, match="Authentication is temporarily unavailable"):
        authorizer(with_key("authorizer-retrieve.json", key))


def test_authorizer_with_auth_disabled_denies(authorizer_handler: Any, lambda_context: Any) -> None:
    assert authorizer_handler.lambda_handler(with_key("authorizer-retrieve.json", "x"), lambda_context) == {
        "isAuthorized": False}


def test_authorizer_imports_nothing_heavy() -> None:
    code = ("import runpy, sys; runpy.run_path(sys.argv[1]); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'fastapi', 'starlette', 'qdrant_client', 'numpy', 'cohere', 'boto3', 'mangum', 'httpx'}))")
    handler = ROOT / "functions" / "authorizer" / "authorizer_handler.py"

    out = subprocess.run([sys.executable, "-c", code, str(handler)], capture_output=True, text=True, check=True,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT / "shared"), "PATH": ""})

    assert out.stdout.strip() == "[]"


def test_the_http_app_imports_no_boto3_when_auth_is_off() -> None:
    code = "import sys, bookrag.web.app; print('boto3' in sys.modules)"

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT / "shared"), "PATH": ""})

    assert out.stdout.strip() == "False"


# --- the retrieval function -----------------------------------------------------------------------


@pytest.fixture
def secured(auth_tables: AuthTables, stub: Any, use_env: Callable[..., None], tmp_path: Path) -> AuthTables:
    """Retrieval with auth on (DynamoDB) and Cohere embeddings from the stub (which sees every call)."""
    stub.on("/v2/embed", embed_reply())
    use_env(**auth_tables.env(rate_limit=3, failure_limit=2), EMBEDDING_PROVIDER="cohere",
            COHERE_API_KEY="co-test-key", COHERE_BASE_URL=stub.url, QDRANT_PATH=str(tmp_path / "qdrant"))
    guard = container_for(get_settings()).guard
    assert guard is not None
    guard.clock = FakeClock()
    return auth_tables


@pytest.fixture
def ingested(secured: AuthTables, stub: Any, tmp_path: Path) -> Iterator[None]:
    """A one-page book in this test's own embedded store (closed afterwards: it holds a file lock)."""
    from bookrag.adapters.store.edge.shards import close_shard
    from bookrag.ingestion.ingestor import Ingestor
    from bookrag.services.container import container_for

    settings = get_settings()
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "robots.md").write_text(TINY_BOOK)
    container = container_for(settings)
    assert Ingestor(settings, container.embedder, container.store).run(docs).chunks_total > 0
    stub.requests.clear()  # from here on, every request the stub sees was caused by an API call
    yield
    close_shard(settings)


def invoke_with(handler: Any, context: Any, event_name: str, key: str | None,
                source_ip: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = handler.lambda_handler(with_key(event_name, key, source_ip), context)
    return result


@pytest.mark.parametrize("event_name", RETRIEVAL_EVENTS)
def test_unauthenticated_requests_get_401_and_cost_no_embedding(
        retrieval_handler: Any, lambda_context: Any, secured: AuthTables, stub: Any, event_name: str) -> None:
    missing = invoke_with(retrieval_handler, lambda_context, event_name, None)
    invalid = invoke_with(retrieval_handler, lambda_context, event_name, "brk_0123456789ab_" + "a" * 43)

    assert (missing["statusCode"], body_of(missing)["code"]) == (401, "AUTH_REQUIRED")
    assert (invalid["statusCode"], body_of(invalid)["code"]) == (401, "INVALID_API_KEY")
    assert set(body_of(invalid)) == {"error", "code", "details", "recoverable"}
    assert stub.requests == []


def test_an_authenticated_request_reaches_the_embedder(retrieval_handler: Any, lambda_context: Any,
                                                       secured: AuthTables, ingested: None, stub: Any) -> None:
    key = secured.mint()

    response = invoke_with(retrieval_handler, lambda_context, "retrieve-valid.json", key)

    assert response["statusCode"] == 200
    assert body_of(response)["retrieved_chunks"][0]["source_file"] == "robots.md"
    assert len(stub.calls("/v2/embed")) == 1


def test_health_stays_open(retrieval_handler: Any, lambda_context: Any, secured: AuthTables) -> None:
    response = invoke_with(retrieval_handler, lambda_context, "health.json", None)

    assert response["statusCode"] == 200 and body_of(response)["status"] == "ok"


def test_over_the_limit_is_429_with_retry_after_and_no_embedding(retrieval_handler: Any, lambda_context: Any,
                                                                  secured: AuthTables, stub: Any) -> None:
    key = secured.mint()
    for _ in range(3):
        assert invoke_with(retrieval_handler, lambda_context, "tools-list.json", key)["statusCode"] == 200

    response = invoke_with(retrieval_handler, lambda_context, "retrieve-valid.json", key)

    assert response["statusCode"] == 429 and response["headers"]["retry-after"] == "50"
    body = body_of(response)
    assert body["code"] == "RATE_LIMITED" and body["recoverable"] is True and body["details"]["limit"] == 3
    assert stub.requests == []


def test_failed_authentication_is_limited_more_strictly(retrieval_handler: Any, lambda_context: Any,
                                                         secured: AuthTables) -> None:
    key = secured.mint()
    # Two failures (the failure limit) lock the IP out, before its three requests (the key limit).
    for _ in range(2):
        assert invoke_with(retrieval_handler, lambda_context, "tools-list.json", key[:-3] + "abc")["statusCode"] == 401

    locked = invoke_with(retrieval_handler, lambda_context, "tools-list.json", key)
    elsewhere = invoke_with(retrieval_handler, lambda_context, "tools-list.json", key, OTHER_IP)

    assert locked["statusCode"] == 429 and body_of(locked)["details"]["scope"] == "source_ip"
    assert locked["headers"]["retry-after"] == "50"
    assert elsewhere["statusCode"] == 200


def test_keys_are_never_logged_nor_stored(retrieval_handler: Any, authorizer_handler: Any, lambda_context: Any,
                                          secured: AuthTables, captured_logs: list[str]) -> None:
    key = secured.mint()
    wrong = key[:-3] + "abc"
    guard = auth_container().guard
    assert guard is not None
    guard.clock = FakeClock()
    for presented in (key, wrong, key, key, key):
        authorizer_handler.lambda_handler(with_key("authorizer-retrieve.json", presented), lambda_context)
        invoke_with(retrieval_handler, lambda_context, "tools-list.json", presented)
    secured.client.delete_table(TableName=API_KEYS_TABLE)  # also the failure path's logs
    reset_auth()
    invoke_with(retrieval_handler, lambda_context, "tools-list.json", key)

    logged = "\n".join(captured_logs)
    # The capture works: our denials and failures, and the SDK's wire-level debug logs, are all in it.
    assert "request denied" in logged and "authentication unavailable" in logged and "GetItem" in logged
    for secret in (key, key.split("_", 2)[2], wrong.split("_", 2)[2]):
        assert secret not in logged
        assert secret not in repr(secured.items(RATE_LIMIT_TABLE))
