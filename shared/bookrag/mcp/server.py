"""The book's MCP server: the contracts' tools and the book's documents, on the official SDK's low-level `Server`.

Tools are the registered ones (`services.tools`): the REST routes' operations under the contracts' names.
Each input schema is the JSON schema of the request model its REST route validates with (names, limits,
defaults), and arguments are validated by that model, so a bad argument gets the REST route's contract
code. Results are the REST responses' bodies (dumped through the same response models) as structured
content, plus the same JSON as text for clients that read only text. A failure is a tool error (`isError`)
whose content is the contract's envelope (`contracts.envelope`): code and message, never exception text
or a stack trace.

Resources are read-only: `book://toc` (the table of contents, JSON) and `book://docs/<route>` for each
document (Markdown rebuilt from its chunks).

The same `Server` serves stdio (`bookrag mcp`) and, per request, the stateless HTTP endpoint (`mcp.asgi`).
"""

from __future__ import annotations

import contextvars
import json
import logging
from functools import lru_cache
from typing import Any, Literal

import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

import bookrag.services.conversations  # noqa: F401  (registers answer_question, the agent's tool)
from bookrag import errors
from bookrag.contracts.agent import Response
from bookrag.contracts.envelope import Envelope, error_body
from bookrag.contracts.validation import invalid_input, model_codes
from bookrag.domain.book_version import retitled
from bookrag.domain.edition import reading
from bookrag.services.editions import annotate
from bookrag.services.tools import Tool, registered
from bookrag.version import __version__

logger = logging.getLogger("bookrag.mcp")

ToolSet = Literal["retrieval", "all"]
TOC_URI = "book://toc"
DOC_PREFIX = "book://docs"
# The book's content, read-only: no tool writes, any call may be repeated.
_READ_ONLY = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                   open_world_hint=False)


BOOK_VERSION_META = "bookrag/book_version"
# "quoted" when the book's sentences stood in for a model answer that did not hold (issue 34); absent otherwise.
ANSWER_MODE_META = "bookrag/answer_mode"
EDITION_META = "bookrag/edition"  # `locale/version` of a site's book (the X-Book-Edition header's value)
EDITION_FALLBACK_META = "bookrag/edition_fallback"
# answer_question's id in the question log (issue 36): the `query_id` of POST /api/feedback; absent when the log is off.
QUERY_ID_META = "bookrag/query_id"


def served_tools(tool_set: ToolSet) -> tuple[Tool, ...]:
    """The registered tools `tool_set` serves, in registration order (read now, not at import)."""
    return tuple(tool for tool in registered() if tool_set == "all" or tool.retrieval)


def definition(tool: Tool) -> types.Tool:
    return types.Tool(name=tool.name, title=tool.title, description=tool.description,
                      input_schema=tool.request.model_json_schema(),
                      output_schema=tool.response.model_json_schema(mode="serialization"),
                      annotations=_READ_ONLY)


# --- tool calls -----------------------------------------------------------------------------------


def _as_text(data: Any) -> list[types.ContentBlock]:
    return [types.TextContent(type="text", text=json.dumps(data, ensure_ascii=False))]


def tool_error(exc: errors.BookRAGError, envelope: Envelope) -> types.CallToolResult:
    body = error_body(exc, envelope)
    return types.CallToolResult(content=_as_text(body), structured_content=body, is_error=True)


def call_tool_sync(tool: Tool, arguments: dict[str, Any]) -> types.CallToolResult:
    """Validate with the request model, run the operation, shape the result; every failure a tool error.
    One book version per call, named in the result's `_meta` (`bookrag/book_version`) for every tool."""
    from bookrag.domain.book_version import one_version
    from bookrag.services.container import current

    try:
        try:
            body = tool.request.model_validate(arguments)
        except ValidationError as exc:
            raise invalid_input(model_codes(tool.request), exc.errors()) from None
        with one_version() as seen, reading(getattr(body, "locale", None), getattr(body, "version", None)) as read:
            result = tool.run(current(), body)
        if isinstance(result, Response):
            result = annotate(result, body, read)
        model = result if isinstance(result, BaseModel) else tool.response.model_validate(result)
        data = model.model_dump(mode="json", exclude_none=tool.exclude_none)
        label = next(iter(seen.values()), None)
    except errors.BookRAGError as exc:
        if exc.http_status >= 500:
            logger.warning("tool failed", extra={"tool": tool.name, "code": exc.code})
        return tool_error(exc, tool.envelope)
    except Exception as exc:  # the cause is logged by class only; the caller gets the generic envelope
        logger.error("tool crashed", extra={"tool": tool.name, "error_class": type(exc).__name__})
        return tool_error(errors.BookRAGError(), tool.envelope)
    meta = {BOOK_VERSION_META: label} if label else {}
    found = read.get("read")
    if found is not None:  # a site's book: the edition read, and why it is not the one asked for
        meta[EDITION_META] = found.label
        if found.fallbacks:
            meta[EDITION_FALLBACK_META] = ",".join(found.fallbacks)
    if getattr(result, "answer_mode", "") == "quoted":
        meta[ANSWER_MODE_META] = "quoted"
    if query_id := getattr(result, "query_id", None):
        meta[QUERY_ID_META] = query_id
    return types.CallToolResult(content=_as_text(data), structured_content=data, _meta=meta or None)


# --- resources ------------------------------------------------------------------------------------


def _served_title() -> str:
    from bookrag.services.container import current
    from bookrag.services.tools import served_title

    return served_title(current())


def _toc() -> list[Any]:
    from bookrag.services.book import table_of_contents
    from bookrag.services.container import current

    container = current()
    return table_of_contents(container.store, container.settings.book_base_url)


def list_resources_sync() -> list[types.Resource]:
    toc = types.Resource(uri=TOC_URI, name="toc", title="Table of contents", mime_type="application/json",
                         description="Every document of the book in reading order, with its route and sections")
    docs = [types.Resource(uri=f"{DOC_PREFIX}{e.route}", name=e.route, title=e.title, mime_type="text/markdown",
                           description=f"{e.module_name}: {e.title}" if e.module_name else e.title)
            for e in _toc()]
    return [toc, *docs]


def read_resource_sync(uri: str) -> types.TextResourceContents:
    from bookrag.services.book import document_text
    from bookrag.services.container import current

    if uri == TOC_URI:
        text = json.dumps({"documents": [e.as_dict() for e in _toc()]}, ensure_ascii=False)
        return types.TextResourceContents(uri=uri, text=text, mime_type="application/json")
    if uri.startswith(DOC_PREFIX + "/"):
        route = uri[len(DOC_PREFIX):]
        entry = next((e for e in _toc() if e.route == route), None)
        if entry is not None:
            return types.TextResourceContents(uri=uri, text=document_text(current().store, entry),
                                              mime_type="text/markdown")
    raise MCPError(types.INVALID_PARAMS, "Resource not found", data={"uri": uri[:300]})


# --- the server -----------------------------------------------------------------------------------


def _resource_error(exc: errors.BookRAGError) -> MCPError:
    body = error_body(exc)
    return MCPError(types.INTERNAL_ERROR if exc.http_status >= 500 else types.INVALID_PARAMS, body["error"],
                    data=body)


def build_server(tool_set: ToolSet = "all") -> Server[Any]:
    """The MCP server with `tool_set`'s tools as registered now, built once per process and set of tools
    (it holds no client or state)."""
    return _server(served_tools(tool_set))


@lru_cache(maxsize=4)
def _server(tools: tuple[Tool, ...]) -> Server[Any]:
    by_name = {tool.name: tool for tool in tools}
    definitions = [definition(tool) for tool in tools]
    # Looked up on every HTTP tools/call (the SDK checks Mcp-Param headers against it): built once here.
    input_schemas = {d.name: d.input_schema for d in definitions}

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        # Each description names the request's book by its title (the contract's words for its textbook).
        title = await anyio.to_thread.run_sync(contextvars.copy_context().run, _served_title)
        if not title:
            return types.ListToolsResult(tools=definitions)
        return types.ListToolsResult(tools=[d.model_copy(update={"description": retitled(d.description or "", title)})
                                            for d in definitions])

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = by_name.get(params.name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, "Unknown tool", data={"tools": sorted(by_name)})
        # The operations block (embedding, the store, the answerer): a worker thread, as FastAPI runs them.
        # The caller's context (CALLER) goes with the call into the worker thread.
        context = contextvars.copy_context()
        return await anyio.to_thread.run_sync(context.run, call_tool_sync, tool, dict(params.arguments or {}))

    async def on_list_resources(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        try:
            return types.ListResourcesResult(resources=await anyio.to_thread.run_sync(list_resources_sync))
        except errors.BookRAGError as exc:
            raise _resource_error(exc) from None

    async def on_read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        try:
            contents = await anyio.to_thread.run_sync(read_resource_sync, str(params.uri))
        except errors.BookRAGError as exc:
            raise _resource_error(exc) from None
        return types.ReadResourceResult(contents=[contents])

    server: Server[Any] = Server(
        "bookrag", version=__version__, title="bookrag",
        instructions="Answers questions about the book, and only from the book. Search it with the retrieval "
                     "tools, read its documents as resources, or ask answer_question for a cited answer.",
        get_tool_input_schema=input_schemas.get,
        on_list_tools=on_list_tools, on_call_tool=on_call_tool,
        on_list_resources=on_list_resources, on_read_resource=on_read_resource)
    return server


async def serve_stdio(tool_set: ToolSet = "all") -> None:
    """Serve over this process's stdin and stdout until the client closes them."""
    from mcp.server.stdio import stdio_server

    server = build_server(tool_set)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
