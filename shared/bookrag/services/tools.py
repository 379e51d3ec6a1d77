"""The tools registry: every tool the service offers, each one entry, which the REST tool routes
(`web.routes.retrieval`), `GET /api/tools` and the MCP server (`mcp.server`) all loop over.

Adding a tool is one `register(Tool(...))` (plus its HttpApi route in `template.yaml` when it has a REST
path). The interfaces read the registry when they are built (`create_app`, `build_server`), so an entry
registered before then is served everywhere. A contract's tool takes its description and its
`GET /api/tools` definition from `contracts.tools`, the one home of the contracts' text.

`answer_question` is registered by `services.conversations`, next to the service it runs: the retrieval
function, which serves no answer, never loads the agent contract's models (~15 ms of its cold start).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from bookrag import errors
from bookrag.answering.context import book_context, source_summary
from bookrag.contracts.envelope import Envelope
from bookrag.contracts.tools import (
    NO_CONTENT_TOOL,
    BookContentRequest,
    BookContentResponse,
    BookContextRequest,
    BookContextResponse,
    PerformRetrievalRequest,
    PerformRetrievalResponse,
    tool_definition,
)
from bookrag.domain.book_version import retitled
from bookrag.domain.models import Filters, SearchHit
from bookrag.retrieval.retriever import SearchOptions, default_threshold
from bookrag.services.operations import book_version_label

if TYPE_CHECKING:
    from bookrag.config.settings import Settings
    from bookrag.services.container import Container

Run = Callable[["Container", Any], BaseModel | dict[str, Any]]
Definition = Callable[["Settings", str], dict[str, Any]]  # given the settings and the book's title


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool: its contract (name, text, request and response models, error envelope) and what runs it.

    `run(container, body)` gets the body validated by `request`; its result is shaped by `response`
    (`exclude_none` drops null fields). `rest_path` is its REST route (None: none, as `answer_question`,
    whose REST form is `POST /api/answer`), `rest_doc` that route's OpenAPI description. `retrieval`:
    offered by MCP servers that serve the retrieval tools only; `listed`: in `GET /api/tools`, as
    `definition(settings)` (by default the request model's JSON schema as its parameters)."""

    name: str
    title: str
    description: str
    request: type[BaseModel]
    response: type[BaseModel]
    run: Run
    envelope: Envelope = "rest"
    exclude_none: bool = False
    rest_path: str | None = None
    rest_doc: str = ""
    retrieval: bool = True
    listed: bool = True
    definition: Definition | None = None

    def function(self, settings: Settings, title: str = "") -> dict[str, Any]:
        """Its OpenAI-style function definition, as `GET /api/tools` serves it for the book titled `title`."""
        if self.definition is not None:
            return self.definition(settings, title)
        return {"name": self.name, "description": retitled(self.description, title),
                "parameters": self.request.model_json_schema()}


def served_title(container: Container) -> str:
    """The title of the book `container` serves, as its live version records it ('' when unknown or when
    the store cannot say: the contract's own words are then served)."""
    try:
        version = container.store.book_version()
    except errors.BookRAGError:
        return ""
    return version.title if version else ""


_REGISTRY: dict[str, Tool] = {}


def register(tool: Tool) -> Tool:
    """Add `tool` after the ones registered before it (the order every interface lists them in)."""
    if tool.name in _REGISTRY:
        raise ValueError(f"tool {tool.name!r} is already registered")
    _REGISTRY[tool.name] = tool
    return tool


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def registered() -> tuple[Tool, ...]:
    """Every tool, in registration order."""
    return tuple(_REGISTRY.values())


def contract_tool(name: str, title: str, request: type[BaseModel], response: type[BaseModel], run: Run,
                  rest_doc: str = "", **options: Any) -> Tool:
    """A tool the contracts define: its description and `GET /api/tools` definition are the contract's
    (`min_score`'s default the threshold in force), its REST route `/api/tools/<name>`."""

    def definition(settings: Settings, title: str) -> dict[str, Any]:
        return tool_definition(name, default_threshold(settings, "tool_content"), title)

    return Tool(name, title, str(tool_definition(name)["description"]), request, response, run,
                rest_path=f"/api/tools/{name}", rest_doc=f"The `{name}` agent tool{rest_doc}.",
                definition=definition, **options)


# --- the contracts' tools -------------------------------------------------------------------------


def retrieve_book_content(container: Container, body: BookContentRequest) -> dict[str, Any]:
    retriever = container.retriever
    threshold = body.min_score if body.min_score is not None else default_threshold(retriever.settings,
                                                                                    "tool_content")
    result = retriever.search(body.query, SearchOptions(top_k=body.result_count, min_score=threshold,
                                                        filters=Filters(body.module_name, body.source_file)))
    out: dict[str, Any] = {
        "results": [
            {
                "id": h.chunk_id,
                "content": h.text,
                "score": h.score,
                "source_url": h.payload.source_url,
                "page_number": h.payload.page_number,
                "section_title": h.section_heading,
                "metadata": _metadata(h),
            }
            for h in result.hits
        ],
        "query_embedding_used": result.query_vector,
        "book_version": book_version_label(retriever),
    }
    if not result.hits:
        out["message"] = NO_CONTENT_TOOL
    return out


_METADATA = ("source_file", "module_name", "doc_title", "heading_path", "chunk_index", "total_chunks", "token_count",
             "created_at")


def _metadata(hit: SearchHit) -> dict[str, Any]:
    stored = hit.payload.to_dict()
    return {k: stored[k] for k in _METADATA}


def perform_retrieval(container: Container, body: PerformRetrievalRequest) -> dict[str, Any]:
    retriever = container.retriever
    threshold = default_threshold(retriever.settings, "perform_retrieval")
    result = retriever.search(body.query, SearchOptions(top_k=body.top_k, min_score=threshold,
                                                        filters=Filters(body.module_name, body.source_file)))
    results = [
        {"content": h.text, "source_url": h.payload.source_url,
         "similarity_score": h.score, "position": h.chunk_index}
        for h in result.hits
    ]
    return {"results": results, "query": body.query, "total_results": len(results),
            "book_version": book_version_label(retriever)}


def retrieve_book_context(container: Container, body: BookContextRequest) -> dict[str, Any]:
    context, hits = book_context(container.retriever, body.query)
    return {"context": context, "sources": [source_summary(h) for h in hits],
            "book_version": book_version_label(container.retriever)}


register(contract_tool("retrieve_book_content", "Retrieve book content", BookContentRequest, BookContentResponse,
                       retrieve_book_content, exclude_none=True))
register(contract_tool("perform_retrieval", "Search the book", PerformRetrievalRequest, PerformRetrievalResponse,
                       perform_retrieval))
register(contract_tool("retrieve_book_context", "Book context for a question", BookContextRequest,
                       BookContextResponse, retrieve_book_context,
                       rest_doc=": formatted context with [Source: ...] headers"))
