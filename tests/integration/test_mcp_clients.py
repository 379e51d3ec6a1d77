"""The official `mcp` Python client against our server: over real HTTP to `bookrag serve` on 127.0.0.1 and over
stdio to `bookrag mcp`, each a subprocess on its own copy of the indexed sample book.

Each transport lists the tools and resources, calls every tool and compares the results with the REST
responses to the same query, reads the documents, and gets the contract's errors; over HTTP also the keys.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from bookrag.auth.keys import mint_key
from tests.support.mcp import as_json, bookrag_serve, copy_index, run_async, server_env

TOOLS = {"retrieve_book_content", "perform_retrieval", "retrieve_book_context", "answer_question"}
QUERY = "What sensors does a humanoid robot use?"
# tool -> (arguments, REST route); the same body goes to both.
CALLS: dict[str, tuple[dict[str, Any], str]] = {
    "retrieve_book_content": ({"query": QUERY, "top_k": 3}, "/api/tools/retrieve_book_content"),
    "perform_retrieval": ({"query": QUERY, "top_k": 2}, "/api/tools/perform_retrieval"),
    "retrieve_book_context": ({"query": QUERY}, "/api/tools/retrieve_book_context"),
    "answer_question": ({"query": "How do I install ROS 2 Humble?"}, "/api/answer"),
}
BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("retrieve_book_content", {"query": ""}, "/api/tools/retrieve_book_content"),
    ("retrieve_book_content", {"query": "ROS 2", "min_score": 1.5}, "/api/tools/retrieve_book_content"),
    ("perform_retrieval", {"query": "ROS", "top_k": 2.5}, "/api/tools/perform_retrieval"),
    ("perform_retrieval", {"query": "r" * 501}, "/api/tools/perform_retrieval"),
    ("answer_question", {"query": "   "}, "/api/answer"),
    ("answer_question", {}, "/api/answer"),
]

Session = Callable[[Callable[[Client], Awaitable[Any]]], Any]


@pytest.fixture(scope="module")
def key() -> tuple[str, str]:
    plaintext, record = mint_key("mcp-client")
    return plaintext, record.setting_entry()


@pytest.fixture(scope="module")
def served(indexed_book: dict[str, str], tmp_path_factory: pytest.TempPathFactory,
           key: tuple[str, str]) -> Iterator[str]:
    """`bookrag serve` with API keys on, on a copy of the sample book."""
    index = copy_index(indexed_book["QDRANT_PATH"], tmp_path_factory.mktemp("mcp-http") / "qdrant")
    env = server_env(index, AUTH_ENABLED="true", API_KEY_HASHES=key[1], RATE_LIMIT_PER_MINUTE="10000",
                     AUTH_FAILURE_LIMIT_PER_MINUTE="100")
    with bookrag_serve(env) as base:
        yield base


@pytest.fixture(scope="module")
def stdio_index(indexed_book: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_index(indexed_book["QDRANT_PATH"], tmp_path_factory.mktemp("mcp-stdio") / "qdrant")


def over_http(base: str, api_key: str | None, mode: str = "auto") -> Session:
    def run(body: Callable[[Client], Awaitable[Any]]) -> Any:
        async def main() -> Any:
            headers = {"x-api-key": api_key} if api_key else {}
            async with (httpx2.AsyncClient(headers=headers, timeout=120) as http,
                        Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode) as client):
                return await body(client)

        return run_async(main)

    return run


def over_stdio(index: Path) -> Session:
    params = StdioServerParameters(command=sys.executable, args=["-m", "bookrag.devtools.cli", "mcp"],
                                   env=server_env(index))

    def run(body: Callable[[Client], Awaitable[Any]]) -> Any:
        async def main() -> Any:
            async with Client(params) as client:
                return await body(client)

        return run_async(main)

    return run


@pytest.fixture(params=["http", "http-legacy", "stdio"])
def session(request: pytest.FixtureRequest, key: tuple[str, str]) -> Session:
    """The same checks over each transport; "http-legacy" is a pre-2026 client (initialize handshake)."""
    if request.param == "stdio":
        return over_stdio(request.getfixturevalue("stdio_index"))
    base = request.getfixturevalue("served")
    return over_http(base, key[0], "legacy" if request.param == "http-legacy" else "auto")


def rest(base: str, api_key: str, path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{base}{path}", json=body, headers={"x-api-key": api_key}, timeout=120)


def test_lists_the_tools_with_the_rest_request_schemas_and_the_resources(session: Session) -> None:
    async def body(client: Client) -> tuple[Any, Any]:
        return await client.list_tools(), await client.list_resources()

    tools, resources = session(body)
    by_name = {t.name: t for t in tools.tools}

    assert set(by_name) == TOOLS
    content = by_name["retrieve_book_content"].input_schema
    assert content["required"] == ["query"]
    assert content["properties"]["top_k"]["maximum"] == 10 and content["properties"]["top_k"]["default"] == 5
    assert by_name["perform_retrieval"].input_schema["properties"]["query"]["maxLength"] == 500
    assert all(t.annotations is not None and t.annotations.read_only_hint for t in tools.tools)
    uris = [str(r.uri) for r in resources.resources]
    assert uris[0] == "book://toc" and len(uris) == 17


def test_every_tool_answers_as_its_rest_route(session: Session, served: str, key: tuple[str, str]) -> None:
    async def body(client: Client) -> dict[str, Any]:
        return {name: await client.call_tool(name, args) for name, (args, _) in CALLS.items()}

    results = session(body)

    for name, (args, path) in CALLS.items():
        result = results[name]
        expected = rest(served, key[0], path, args)
        assert expected.status_code == 200
        assert not result.is_error, name
        assert result.structured_content == expected.json(), name


def test_bad_arguments_are_tool_errors_with_the_rest_codes(session: Session, served: str,
                                                           key: tuple[str, str]) -> None:
    async def body(client: Client) -> list[Any]:
        return [await client.call_tool(name, args) for name, args, _ in BAD_CALLS]

    results = session(body)

    for (name, args, path), result in zip(BAD_CALLS, results, strict=True):
        expected = rest(served, key[0], path, args)
        assert expected.status_code == 400
        assert result.is_error, (name, args)
        assert result.structured_content == expected.json(), (name, args)
        assert "Traceback" not in as_json(result)["content"][0]["text"]


def test_an_unknown_tool_is_a_protocol_error(session: Session) -> None:
    async def body(client: Client) -> Any:
        try:
            await client.call_tool("delete_book", {})
        except MCPError as exc:  # caught here: leaving the client's task group would wrap it in a group
            return exc
        return None

    error = session(body)
    assert isinstance(error, MCPError) and error.code == -32602


def test_reads_the_table_of_contents_and_a_document(session: Session) -> None:
    async def body(client: Client) -> tuple[Any, Any, Any]:
        toc = await client.read_resource("book://toc")
        first = json.loads(toc.contents[0].text)["documents"][0]  # type: ignore[union-attr]
        doc = await client.read_resource(f"book://docs{first['route']}")
        return toc, first, doc

    toc, first, doc = session(body)
    text = doc.contents[0].text

    assert toc.contents[0].mime_type == "application/json"
    assert first["title"] and first["sections"] and first["url"].startswith("http")
    assert doc.contents[0].mime_type == "text/markdown"
    assert text.startswith(f"# {first['title']}\n") and len(text) > 200


def test_an_unknown_document_is_not_found(session: Session) -> None:
    async def body(client: Client) -> Any:
        try:
            await client.read_resource("book://docs/no/such/page")
        except MCPError as exc:
            return exc
        return None

    error = session(body)
    assert isinstance(error, MCPError) and error.error.message == "Resource not found"


@pytest.mark.parametrize("api_key", [None, "bk_000000000000_wrong"])
def test_http_without_a_valid_key_is_refused(served: str, api_key: str | None) -> None:
    async def body(client: Client) -> Any:
        return await client.list_tools()

    with pytest.raises(Exception) as caught:  # the SDK's error for an HTTP 401, whatever its class
        over_http(served, api_key)(body)
    raw = httpx.post(f"{served}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                     headers={"x-api-key": api_key} if api_key else {})
    assert raw.status_code == 401
    assert raw.json()["code"] in ("AUTH_REQUIRED", "INVALID_API_KEY")
    assert "Traceback" not in repr(caught.value)


def test_http_get_and_a_foreign_host_are_refused(served: str, key: tuple[str, str]) -> None:
    get = httpx.get(f"{served}/mcp", headers={"x-api-key": key[0]})
    rebound = httpx.post(f"{served}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                         headers={"x-api-key": key[0], "host": "attacker.example",
                                  "accept": "application/json, text/event-stream"})

    assert get.status_code == 405 and get.json()["code"] == "METHOD_NOT_ALLOWED"
    assert rebound.status_code == 421
