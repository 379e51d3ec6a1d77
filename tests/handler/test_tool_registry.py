"""The recipe for a new tool: one `register(Tool(...))`, and it is served everywhere.

A made-up tool (its own request and response models, a run on the real container's retriever) registered
in one place must answer at its REST path with its model's validation and the contract's error envelope,
be listed by `GET /api/tools`, and be listed and callable over MCP, with the same bodies as REST.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
from fastapi.testclient import TestClient
from mangum import Mangum
from pydantic import BaseModel, Field

from bookrag.contracts.base import Codes, FieldCodes
from bookrag.retrieval.retriever import SearchOptions
from bookrag.services.container import Container
from bookrag.services.tools import Tool, register, registered, unregister
from bookrag.web.app import create_app
from tests.support.mcp import jsonrpc_result, mcp_event

NAME = "count_sections"
PATH = f"/api/tools/{NAME}"
QUESTION = {"query": "What sensors does a humanoid robot use?", "top_k": 2}


class CountRequest(BaseModel):
    error_codes: ClassVar[FieldCodes] = {"query": Codes("INVALID_QUERY", "INVALID_QUERY_LENGTH"),
                                         "top_k": Codes("INVALID_TOP_K", "INVALID_TOP_K")}

    query: str = Field(min_length=1, max_length=200)
    top_k: int = Field(3, ge=1, le=3)


class CountResponse(BaseModel):
    query: str
    sections: list[str]


def count_sections(container: Container, body: CountRequest) -> CountResponse:
    hits = container.retriever.search(body.query, SearchOptions(top_k=body.top_k)).hits
    return CountResponse(query=body.query, sections=[h.section_heading for h in hits])


@pytest.fixture
def count_tool(book_env: Any) -> Iterator[Tool]:
    """The tool, registered for this test only: every other test sees the normal registry."""
    tool = register(Tool(NAME, "Count sections", "Which sections of the book match a query (at most 3).",
                         CountRequest, CountResponse, count_sections, rest_path=PATH,
                         rest_doc="The sections that match a query."))
    try:
        yield tool
    finally:
        unregister(NAME)
    assert NAME not in {t.name for t in registered()}


def test_a_registered_tool_is_a_rest_route_and_listed(count_tool: Tool) -> None:
    client = TestClient(create_app("retrieval"))

    ok = client.post(PATH, json=QUESTION)
    assert ok.status_code == 200
    assert ok.json()["query"] == QUESTION["query"] and 1 <= len(ok.json()["sections"]) <= 2
    bad = client.post(PATH, json={"query": "ROS", "top_k": 4})
    assert bad.status_code == 400
    assert set(bad.json()) == {"error", "code", "details", "recoverable"}  # the REST contract's envelope
    assert bad.json()["code"] == "INVALID_TOP_K"

    listed = [t["function"] for t in client.get("/api/tools").json()["tools"]]
    assert [f["name"] for f in listed] == ["retrieve_book_content", "perform_retrieval", "retrieve_book_context",
                                           NAME]
    assert listed[-1]["parameters"] == CountRequest.model_json_schema()
    operation = client.get("/openapi.json").json()["paths"][PATH]["post"]
    assert operation["description"] == "The sections that match a query."
    assert operation["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/CountRequest"}


def test_a_registered_tool_is_an_mcp_tool_with_the_rest_bodies(count_tool: Tool, lambda_context: Any) -> None:
    app = create_app("all")
    handler = Mangum(app, lifespan="off")
    rest = TestClient(app)

    tools = jsonrpc_result(handler(mcp_event("mcp-tools-list.json"), lambda_context))["tools"]
    by_name = {t["name"]: t for t in tools}
    assert by_name[NAME]["description"] == count_tool.description
    assert by_name[NAME]["inputSchema"] == CountRequest.model_json_schema()

    called = jsonrpc_result(handler(mcp_event("mcp-retrieve-book-content.json", QUESTION, tool=NAME), lambda_context))
    assert not called.get("isError")
    assert called["structuredContent"] == rest.post(PATH, json=QUESTION).json()
    assert json.loads(called["content"][0]["text"]) == called["structuredContent"]

    refused = jsonrpc_result(handler(mcp_event("mcp-retrieve-book-content.json", {"query": "ROS", "top_k": 4},
                                               tool=NAME), lambda_context))
    rest_refused = rest.post(PATH, json={"query": "ROS", "top_k": 4})
    assert refused["isError"] is True
    assert refused["structuredContent"] == rest_refused.json()
    assert refused["structuredContent"]["code"] == "INVALID_TOP_K"


def test_a_registered_tool_is_served_by_retrieval_only_mcp_servers(count_tool: Tool) -> None:
    from bookrag.mcp.server import build_server, served_tools

    assert [t.name for t in served_tools("retrieval")] == ["retrieve_book_content", "perform_retrieval",
                                                        "retrieve_book_context", NAME]
    assert build_server("retrieval") is build_server("retrieval")  # built once per set of tools


def test_without_the_registration_nothing_of_it_is_served(book_env: Any) -> None:
    client = TestClient(create_app("retrieval"))

    assert client.post(PATH, json=QUESTION).status_code == 404
    assert NAME not in {t["function"]["name"] for t in client.get("/api/tools").json()["tools"]}
