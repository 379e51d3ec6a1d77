"""`bookrag serve` with AUTH_ENABLED: the ASGI middleware with in-memory keys, over HTTP (TestClient)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from bookrag.auth.keys import mint_key
from bookrag.config.settings import get_settings
from bookrag.services.container import container_for
from bookrag.web.app import create_app
from tests.support.aws import FakeClock

ENVELOPE = {"error", "code", "details", "recoverable"}


@pytest.fixture
def key(use_env: Callable[..., None]) -> str:
    plaintext, record = mint_key("local")
    _, other = mint_key("someone else")
    use_env(AUTH_ENABLED="true", API_KEY_HASHES=f"{other.setting_entry()},{record.setting_entry()}",
            RATE_LIMIT_PER_MINUTE="3", AUTH_FAILURE_LIMIT_PER_MINUTE="2")
    guard = container_for(get_settings()).guard
    assert guard is not None
    guard.clock = FakeClock()
    return plaintext


@pytest.fixture
def client() -> TestClient:
    return TestClient(create_app("all"))


def test_without_a_key_every_route_but_health_is_401_in_the_envelope(key: str, client: TestClient) -> None:
    for method, path in [("GET", "/api/tools"), ("POST", "/api/retrieve"), ("GET", "/openapi.json"),
                         ("GET", "/no/such/route")]:
        response = client.request(method, path, json={"query": "ROS 2"})
        assert response.status_code == 401, path
        body = response.json()
        assert set(body) == ENVELOPE and body["code"] == "AUTH_REQUIRED" and body["recoverable"] is False

    assert client.get("/api/health").status_code == 200


def test_a_valid_key_in_the_header_is_served(key: str, client: TestClient) -> None:
    response = client.get("/api/tools", headers={"X-API-Key": key})

    assert response.status_code == 200 and response.json()["tools"]


# Not `Authorization: Bearer`: the REST contract's header is read (tests/integration/test_contract_fidelity.py).
@pytest.mark.parametrize("where", ["query", "cookie"])
def test_a_key_anywhere_but_the_header_is_not_read(key: str, client: TestClient, where: str) -> None:
    kwargs: dict[str, Any] = {
        "query": {"params": {"api_key": key, "x-api-key": key}},
        "cookie": {"headers": {"Cookie": f"x-api-key={key}"}},
    }[where]

    response = client.get("/api/tools", **kwargs)

    assert response.status_code == 401 and response.json()["code"] == "AUTH_REQUIRED"


def test_an_invalid_key_is_401_invalid_api_key(key: str, client: TestClient) -> None:
    response = client.get("/api/tools", headers={"X-API-Key": key[:-1] + "#"})

    assert response.status_code == 401 and response.json()["code"] == "INVALID_API_KEY"


def test_authentication_runs_before_the_body_is_read_or_validated(key: str, client: TestClient) -> None:
    too_large = client.post("/api/retrieve", content=b"x" * 100_000, headers={"content-type": "application/json"})
    not_json = client.post("/api/retrieve", content=b"not json")

    assert too_large.status_code == not_json.status_code == 401


def test_over_the_limit_is_429_with_retry_after(key: str, client: TestClient) -> None:
    for _ in range(3):
        assert client.get("/api/tools", headers={"X-API-Key": key}).status_code == 200

    response = client.get("/api/tools", headers={"X-API-Key": key})

    assert response.status_code == 429 and response.headers["Retry-After"] == "50"
    body = response.json()
    assert body["code"] == "RATE_LIMITED" and body["recoverable"] is True
    assert body["details"] == {"scope": "api_key", "limit": 3, "window_s": 60, "retry_after_s": 50}


def test_the_agent_route_keeps_its_contract_fields_on_auth_errors(key: str, client: TestClient) -> None:
    response = client.post("/api/answer", json={"query": "What is ROS 2?"})

    body = response.json()
    assert response.status_code == 401
    assert body["error_type"] == "AuthenticationError" and body["message"] and body["recoverable"] is False


def test_failed_attempts_lock_the_source_ip_before_the_key_limit(key: str, client: TestClient) -> None:
    for _ in range(2):
        assert client.get("/api/tools", headers={"X-API-Key": "brk_0123456789ab_" + "a" * 43}).status_code == 401

    response = client.get("/api/tools", headers={"X-API-Key": key})

    assert response.status_code == 429 and response.json()["details"]["scope"] == "source_ip"
    assert int(response.headers["Retry-After"]) == 50


def test_auth_disabled_serves_without_a_key(client: TestClient) -> None:
    assert client.get("/api/tools").status_code == 200
