"""The nine deviations of issue 12, one test (or a few) each: every one failed before the fix.

Real parts only: the app over TestClient on the session's indexed sample book, the CLI through typer's
runner against a closed port on 127.0.0.1, the guard with in-memory keys, settings from the environment.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import bookrag
from bookrag import errors
from bookrag.auth.guard import authorize_http_api, build_guard
from bookrag.auth.keys import mint_key
from bookrag.config.settings import AuthSettings, get_settings
from bookrag.domain.query import has_visible_character, normalize_query
from bookrag.services.container import current
from bookrag.web.app import create_app
from tests.support.events import load_event
from tests.support.paths import ROOT

# --- 1. QDRANT_HOST with a key: https unless loopback --------------------------------------------


@pytest.mark.parametrize(("env", "url"), [
    ({"QDRANT_HOST": "xyz.cloud.qdrant.io", "QDRANT_API_KEY": "k"}, "https://xyz.cloud.qdrant.io:6333"),
    ({"QDRANT_HOST": "127.0.0.1", "QDRANT_API_KEY": "k"}, "http://127.0.0.1:6333"),
    ({"QDRANT_HOST": "localhost"}, "http://localhost:6333"),
    ({"QDRANT_HOST": "::1", "QDRANT_PORT": "6334"}, "http://[::1]:6334"),
    # A private network may opt out of TLS, with or without a key.
    ({"QDRANT_HOST": "10.0.3.7", "QDRANT_API_KEY": "k", "QDRANT_HTTPS": "false"}, "http://10.0.3.7:6333"),
    ({"QDRANT_HOST": "qdrant", "QDRANT_API_KEY": "k", "QDRANT_HTTPS": "false"}, "http://qdrant:6333"),
    ({"QDRANT_HOST": "qdrant.example.com", "QDRANT_HTTPS": "false"}, "http://qdrant.example.com:6333"),
])
def test_qdrant_host_gets_https_unless_loopback_or_a_private_opt_out(
        use_env: Callable[..., None], env: dict[str, str], url: str) -> None:
    use_env(**env)
    assert get_settings().qdrant_remote_url == url


@pytest.mark.parametrize("host", ["qdrant.example.com", "34.120.1.9"])
def test_plain_http_with_a_key_to_a_public_host_is_refused(use_env: Callable[..., None], host: str) -> None:
    use_env(QDRANT_HOST=host, QDRANT_API_KEY="canary-key-1", QDRANT_HTTPS="false")
    with pytest.raises(errors.ConfigError) as caught:
        get_settings()
    assert "QDRANT_HTTPS" in str(caught.value) and "canary-key-1" not in str(caught.value)


# --- 2. GEMINI_API_KEY alone: the agent contract's model -----------------------------------------


def test_a_gemini_key_alone_selects_gemini_and_health_says_so(use_env: Callable[..., None]) -> None:
    use_env(GEMINI_API_KEY="g-key")
    settings = get_settings()
    assert settings.resolved_llm_provider == "gemini"
    assert TestClient(create_app("all")).get("/api/health").json()["llm_provider"] == "gemini"
    answerer: Any = current().answerer  # built, no call made
    assert answerer.model == "gemini-2.0-flash"


def test_a_named_provider_wins_over_the_gemini_key(use_env: Callable[..., None]) -> None:
    use_env(GEMINI_API_KEY="g-key", LLM_PROVIDER="extractive")
    assert get_settings().resolved_llm_provider == "extractive"


# --- 3. The agent contract's Python surface --------------------------------------------------------


def test_the_agent_contract_names_are_importable_from_bookrag() -> None:
    for name in ("get_embedding", "search_vectors", "retrieve_book_context", "run_agent",
                 "EmbeddingError", "RetrievalError", "AgentError"):
        assert name in bookrag.__all__ and getattr(bookrag, name) is not None
    assert issubclass(errors.StoreConnectionError, bookrag.RetrievalError)
    assert issubclass(errors.StoreError, bookrag.RetrievalError)
    assert issubclass(errors.AnswerTimeoutError, bookrag.AgentError)
    assert issubclass(errors.EmbeddingAuthError, bookrag.EmbeddingError)
    # The contract's AuthenticationError is an upstream's 401; our caller's key is CallerAuthError.
    assert errors.AuthenticationError is errors.UpstreamAuthError
    assert not issubclass(errors.CallerAuthError, errors.UpstreamAuthError)
    assert (errors.CallerAuthError.code, errors.InvalidApiKeyError.code) == ("AUTH_REQUIRED", "INVALID_API_KEY")


def test_get_embedding_search_vectors_and_retrieve_book_context(book_env: Any) -> None:
    embedding = bookrag.get_embedding("How do I install ROS 2?")
    assert isinstance(embedding, list) and len(embedding) == 384 and all(isinstance(x, float) for x in embedding)

    points = bookrag.search_vectors(embedding, top_k=3)
    assert 1 <= len(points) <= 3
    assert [p.score for p in points] == sorted((p.score for p in points), reverse=True)
    assert all(0.33 <= p.score <= 1.0 and p.id and p.payload["content_text"] for p in points)

    context = bookrag.retrieve_book_context("How do I install ROS 2?")
    assert context.startswith("Context from the book:\n\n[Source: ")


@pytest.mark.parametrize(("call", "code"), [
    (lambda: bookrag.get_embedding(""), "INVALID_QUERY"),
    (lambda: bookrag.get_embedding(123), "INVALID_QUERY"),
    (lambda: bookrag.get_embedding("x" * 1001), "INVALID_QUERY_LENGTH"),
    (lambda: bookrag.search_vectors([0.1] * 3), "INVALID_EMBEDDING"),
    (lambda: bookrag.search_vectors([True] * 384), "INVALID_EMBEDDING"),
    (lambda: bookrag.search_vectors([0.1] * 384, top_k=0), "INVALID_TOP_K"),
    (lambda: bookrag.retrieve_book_context("\u200b"), "INVALID_QUERY"),
])
def test_the_agent_functions_refuse_bad_input_as_the_contract_says(book_env: Any, call: Callable[[], Any],
                                                                   code: str) -> None:
    with pytest.raises(errors.InvalidInputError) as caught:
        call()
    assert caught.value.code == code


def test_an_unreachable_store_is_the_contracts_retrieval_error(use_env: Callable[..., None]) -> None:
    use_env(QDRANT_URL=f"http://127.0.0.1:{_closed_port()}", QDRANT_TIMEOUT_S="1", EMBEDDING_PROVIDER="local")
    with pytest.raises(bookrag.RetrievalError):
        bookrag.retrieve_book_context("How do I install ROS 2?")


# --- 4. Lax types ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "body", "code"), [
    ("/api/retrieve", {"query": "ROS 2", "score_threshold": True}, "INVALID_SCORE_THRESHOLD"),
    ("/api/retrieve", {"query": "ROS 2", "score_threshold": "0.7"}, "INVALID_SCORE_THRESHOLD"),
    ("/api/tools/retrieve_book_content", {"query": "ROS 2", "min_score": True}, "INVALID_SCORE_THRESHOLD"),
    ("/api/tools/retrieve_book_content", {"query": "ROS 2", "min_score": "0.7"}, "INVALID_SCORE_THRESHOLD"),
    ("/api/tools/retrieve_book_content", {"query": "ROS 2", "top_k": True}, "INVALID_TOP_K"),
    ("/api/tools/retrieve_book_content", {"query": "ROS 2", "top_k": "5"}, "INVALID_TOP_K"),
    ("/api/retrieve", {"query": "ROS 2", "top_k": True}, "INVALID_TOP_K"),
    ("/api/retrieve", {"query": "ROS 2", "top_k": 2.5}, "INVALID_TOP_K"),
    ("/api/tools/perform_retrieval", {"query": "ROS 2", "top_k": 1.5}, "INVALID_TOP_K"),
    ("/api/retrieve", {"query": 123}, "INVALID_QUERY"),
    ("/api/retrieve", {}, "MISSING_QUERY"),
    ("/api/tools/perform_retrieval", {"query": ["ROS"]}, "INVALID_QUERY"),
])
def test_booleans_strings_and_fractions_are_refused_with_the_fields_code(
        book_env: Any, path: str, body: dict[str, Any], code: str) -> None:
    response = TestClient(create_app("all")).post(path, json=body)
    assert response.status_code == 400 and response.json()["code"] == code, response.text


@pytest.mark.parametrize(("path", "body", "most"), [
    ("/api/retrieve", {"query": "How do I install ROS 2?", "top_k": 9.0, "score_threshold": 0}, 9),
    ("/api/tools/perform_retrieval", {"query": "How do I install ROS 2?", "top_k": 1.0}, 1),
    # The retrieve_book_content contract declares top_k a number: a fraction is a valid call.
    ("/api/tools/retrieve_book_content", {"query": "How do I install ROS 2?", "top_k": 1.147, "min_score": 0}, 1),
    ("/api/tools/retrieve_book_content", {"query": "How do I install ROS 2?", "top_k": 2.9, "min_score": 0}, 2),
])
def test_integral_and_contract_numbers_are_accepted(book_env: Any, path: str, body: dict[str, Any],
                                                    most: int) -> None:
    response = TestClient(create_app("all")).post(path, json=body)
    assert response.status_code == 200, response.text
    data = response.json()
    results = data.get("retrieved_chunks", data.get("results"))
    assert 1 <= len(results) <= most


# --- 5. Authorization: Bearer, in `bookrag serve` and in the authorizer ------------------------------


def test_bearer_and_x_api_key_are_the_same_key(use_env: Callable[..., None], book_env: Any) -> None:
    plaintext, record = mint_key("contract client")
    use_env(AUTH_ENABLED="true", API_KEY_HASHES=record.setting_entry(), RATE_LIMIT_PER_MINUTE="3",
            AUTH_FAILURE_LIMIT_PER_MINUTE="2")
    client = TestClient(create_app("all"))

    assert client.get("/api/tools", headers={"Authorization": f"Bearer {plaintext}"}).status_code == 200
    assert client.get("/api/tools", headers={"authorization": f"bearer {plaintext}"}).status_code == 200
    assert client.get("/api/tools", headers={"X-API-Key": plaintext}).status_code == 200
    # Same limits: the fourth request of the minute, whichever header carried the key.
    over = client.get("/api/tools", headers={"Authorization": f"Bearer {plaintext}"})
    assert over.status_code == 429 and over.json()["code"] == "RATE_LIMITED"
    wrong = client.get("/api/tools", headers={"Authorization": "Bearer brk_000000000000_nope"})
    assert wrong.status_code == 401 and wrong.json()["code"] == "INVALID_API_KEY"
    basic = client.get("/api/tools", headers={"Authorization": f"Basic {plaintext}"})
    assert basic.status_code == 401 and basic.json()["code"] == "AUTH_REQUIRED"


def test_the_authorizer_accepts_a_bearer_key() -> None:
    plaintext, record = mint_key("contract client")
    guard = build_guard(AuthSettings(auth_enabled=True, api_key_hashes=record.setting_entry()), lambda: None)
    assert guard is not None
    event = load_event("authorizer-retrieve.json")
    event["headers"] = {k: v for k, v in event["headers"].items() if k.lower() != "x-api-key"}

    assert authorize_http_api({**event, "headers": {**event["headers"], "authorization": f"Bearer {plaintext}"}},
                              guard)["isAuthorized"] is True
    assert authorize_http_api({**event, "headers": {**event["headers"], "authorization": "Bearer wrong"}},
                              guard) == {"isAuthorized": False}


def test_the_gateway_calls_the_authorizer_whichever_header_carries_the_key() -> None:
    # An HTTP API answers its own bare 401 unless every identity source is present: no header may be one.
    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=_CfnLoader)
    authorizer = template["Resources"]["BookApi"]["Properties"]["Auth"]["Authorizers"]["ApiKeyAuthorizer"]
    assert "Headers" not in authorizer["Identity"]
    assert authorizer["Identity"]["ReauthorizeEvery"] == 0  # an IP-only cache key must never be cached


# --- 6. /api/tools shows the thresholds in force -----------------------------------------------------


def test_tools_advertise_the_min_score_default_in_force(book_env: Any) -> None:
    tools = TestClient(create_app("all")).get("/api/tools").json()["tools"]
    content = next(t["function"] for t in tools if t["function"]["name"] == "retrieve_book_content")
    min_score = content["parameters"]["properties"]["min_score"]
    assert min_score["default"] == 0.25  # the local embedder's (the contract's 0.5 is Cohere's)
    assert "0.25" in min_score["description"]


# --- 7. The CLI speaks the contract's messages -------------------------------------------------------


def test_the_cli_prints_the_contracts_message_and_the_code(use_env: Callable[..., None]) -> None:
    from bookrag.devtools.cli import app

    use_env(QDRANT_URL=f"http://127.0.0.1:{_closed_port()}", QDRANT_TIMEOUT_S="1", EMBEDDING_PROVIDER="local")
    runner = CliRunner()

    plain = runner.invoke(app, ["ask", "How do I install ROS 2?"])
    assert plain.exit_code == 2
    assert "error [CONNECTION_ERROR]: Book content temporarily unavailable. Please try again." in plain.stderr
    assert "Unable to connect" not in plain.stderr and "127.0.0.1" not in plain.stderr

    as_json = runner.invoke(app, ["retrieve", "How do I install ROS 2?", "--json"])
    assert as_json.exit_code == 2
    assert json.loads(as_json.stdout) == {"message": "Book content temporarily unavailable. Please try again.",
                                          "error_type": "RetrievalError", "recoverable": True}


def test_the_cli_names_a_bad_option_in_its_own_words(use_env: Callable[..., None]) -> None:
    from bookrag.devtools.cli import app

    result = CliRunner().invoke(app, ["retrieve", "ROS 2", "--top-k", "0"])
    assert result.exit_code == 2 and "error [INVALID_TOP_K]: top_k must be an integer" in result.stderr


# --- 8. query_type is recorded, with bounded cardinality ------------------------------------------


def test_query_type_is_a_bounded_metric_dimension_and_a_log_field(
        book_env: Any, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    client = TestClient(create_app("all"))
    capsys.readouterr()
    for query_type in ("How-To", "a brand new category 7f3a", None):
        body = {"query": "How do I install ROS 2?", **({"query_type": query_type} if query_type else {})}
        assert client.post("/api/retrieve", json=body).status_code == 200
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    metrics = [r for r in records if "Queries" in r]
    assert [m["query_type"] for m in metrics] == ["how_to", "other", "unspecified"]
    assert all(["service", "query_type"] in m["_aws"]["CloudWatchMetrics"][0]["Dimensions"] for m in metrics)
    logged = [getattr(r, "query_type", None) for r in caplog.records if r.getMessage() == "retrieval served"]
    assert logged == ["how_to", "other", "unspecified"]
    assert "7f3a" not in json.dumps(records) and "7f3a" not in caplog.text


# --- 9. One length rule: characters as sent -------------------------------------------------------


def test_lengths_count_the_query_as_sent(book_env: Any) -> None:
    client = TestClient(create_app("all"))
    expands = "\u0958"  # DEVANAGARI LETTER QA: NFC makes it two characters
    assert len(normalize_query(expands)) == 2

    assert client.post("/api/retrieve", json={"query": expands * 1000}).status_code == 200
    too_long = client.post("/api/retrieve", json={"query": "a" * 1001})
    assert too_long.status_code == 400 and too_long.json()["code"] == "INVALID_QUERY_LENGTH"
    # Over maxLength as sent, under it once white space is folded: refused, as the schema says.
    spaced = client.post("/api/tools/retrieve_book_context", json={"query": "ROS" + " " * 1000 + "2"})
    assert spaced.status_code == 400 and spaced.json()["code"] == "INVALID_QUERY"
    for path in ("/api/retrieve", "/api/answer"):
        blank = client.post(path, json={"query": "\x01"})
        assert blank.status_code == 400 and blank.json()["code"] in {"MISSING_QUERY", "INVALID_QUERY"}


def test_the_schema_pattern_is_exactly_not_empty_once_normalised() -> None:
    for point in range(0x110000):
        if 0xD800 <= point < 0xE000:
            continue
        char = chr(point)
        assert has_visible_character(char) == bool(normalize_query(char)), hex(point)


def test_python_api_and_agent_apply_the_same_rule(book_env: Any) -> None:
    assert bookrag.retrieve_chunks("\u0958" * 1000, min_score=0.0) is not None
    with pytest.raises(errors.InvalidInputError) as caught:
        bookrag.run_agent("a" * 1001)
    assert caught.value.code == "INVALID_QUERY_LENGTH"


# --- and the 405s ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "allow"), [
    ("GET", "/api/retrieve", "POST"), ("TRACE", "/api/answer", "POST"), ("DELETE", "/api/tools", "GET"),
])
def test_405_carries_allow_and_the_envelope(method: str, path: str, allow: str) -> None:
    response = TestClient(create_app("all")).request(method, path)
    assert response.status_code == 405
    assert set(response.headers["allow"].split(", ")) == set(allow.split(", "))
    assert response.json()["code"] == "METHOD_NOT_ALLOWED"


# --- helpers --------------------------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _CfnLoader(yaml.SafeLoader):
    """Reads CloudFormation's short-form tags (!Ref, !GetAtt, ...) as plain values."""


_CfnLoader.add_multi_constructor("!", lambda loader, suffix, node: None)
