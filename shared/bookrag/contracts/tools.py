"""The agent tools' contracts: their definitions exactly as the contracts give them (OpenAI-style
function schemas), and the request and response models of their HTTP routes."""

from __future__ import annotations

import copy
import math
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from bookrag.contracts.base import Codes, FieldCodes, Filter, JsonInt, JsonNumber, QueryRequest, Score, query_field
from bookrag.domain.book_version import retitled
from bookrag.domain.query import POLICIES

_CONTENT = POLICIES["tool_content"]
_PERFORM = POLICIES["perform_retrieval"]
_CONTEXT = POLICIES["book_context"]

NO_CONTENT_TOOL = "No relevant content found"



NO_CONTEXT = "No relevant content found in the book for this query."



# OpenAI-style function definitions, exactly as the contracts give them.
TOOL_DEFINITIONS: list[dict[str, Any]] = [
    {
        "name": "retrieve_book_content",
        "description": (
            "Retrieve relevant content from book collection based on semantic similarity to the user's query"
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string",
                          "description": "The user's question or query to search for relevant content"},
                "top_k": {"type": "number", "description": "Number of top results to return (default: 5, max: 10)",
                          "default": 5, "minimum": 1, "maximum": 10},
                "min_score": {"type": "number",
                              "description": "Minimum relevance score threshold (default: 0.5, range: 0.0-1.0)",
                              "default": 0.5, "minimum": 0.0, "maximum": 1.0},
            },
            "required": ["query"],
        },
    },
    {
        "name": "perform_retrieval",
        "description": "Search the book content database to find relevant information for answering user queries",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "The search query text to find relevant document chunks",
                          "minLength": 1, "maxLength": 500},
                "top_k": {"type": "integer", "description": "Number of results to retrieve (default: 5, max: 10)",
                          "minimum": 1, "maximum": 10, "default": 5},
            },
            "required": ["query"],
        },
    },
    {
        "name": "retrieve_book_context",
        "description": "Retrieve relevant context from the Physical AI & Humanoid Robotics textbook for answering "
                       "the query. Always call this tool before answering any question.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "The user's question about the book content"}},
            "required": ["query"],
        },
    },
]


def tool_definition(name: str, min_score_default: float | None = None, title: str = "") -> dict[str, Any]:
    """The contract's definition of tool `name`, as served: a `min_score` default is the threshold in force
    when given (the contract's 0.5 is calibrated for Cohere; another embedder has its own, see
    `bookrag.domain.thresholds`), so a caller that relies on the default is told what it gets; a description
    names the book titled `title` (the contract's words for its own textbook, `domain.book_version.retitled`)."""
    served = copy.deepcopy(next(d for d in TOOL_DEFINITIONS if d["name"] == name))
    served["description"] = retitled(served["description"], title)
    min_score = served["parameters"]["properties"].get("min_score")
    if min_score is not None and min_score_default is not None:
        min_score["default"] = min_score_default
        min_score["description"] = (f"Minimum relevance score threshold (default: {min_score_default:g}, "
                                    "range: 0.0-1.0)")
    return served


class BookContentRequest(QueryRequest):
    error_codes: ClassVar[FieldCodes] = {
        "query": Codes("INVALID_QUERY", "INVALID_QUERY"),
        "top_k": Codes("INVALID_TOP_K", "INVALID_TOP_K"),
        "min_score": Codes("INVALID_SCORE_THRESHOLD", "INVALID_SCORE_THRESHOLD"),
    }

    query: str = query_field(_CONTENT.max_query_chars, "The user's question or query")
    # The tool contract declares top_k a JSON `number`, so a fraction is a valid call: it is kept a
    # number here too (the contract wins over integer semantics) and rounded down to a count.
    top_k: JsonNumber = Field(_CONTENT.default_top_k, ge=_CONTENT.min_top_k, le=_CONTENT.max_top_k, description=(
        "Number of top results (1..10). A JSON number, as the retrieve_book_content tool contract declares it: "
        "a fraction is accepted and rounded down (2.7 returns at most 2 results); true and \"5\" are refused"))
    min_score: Score | None = Field(None, description=(
        "Minimum relevance score (0..1). Default: the retrieve_book_content threshold in force for the "
        "configured embedder (0.5 with Cohere, as the contract says; see GET /api/tools and /api/health)"))
    module_name: Filter = None
    source_file: Filter = None

    @property
    def result_count(self) -> int:
        return math.floor(self.top_k)



class BookContentResult(BaseModel):
    id: str
    content: str
    score: float
    source_url: str
    page_number: int
    section_title: str
    metadata: dict[str, Any]



class BookContentResponse(BaseModel):
    results: list[BookContentResult]
    query_embedding_used: list[float]
    message: str | None = None
    book_version: str | None = Field(None, description=(
        "The version of the book this was answered from (content hash, ingest time, git commit); also the "
        "X-Book-Version header. Null for an index ingested before versions"))



class PerformRetrievalRequest(QueryRequest):
    error_codes: ClassVar[FieldCodes] = {
        "query": Codes("INVALID_QUERY", "INVALID_QUERY_LENGTH"),
        "top_k": Codes("INVALID_TOP_K", "INVALID_TOP_K"),
    }

    query: str = query_field(_PERFORM.max_query_chars, "The search query text to find relevant document chunks")
    top_k: JsonInt = Field(_PERFORM.default_top_k, ge=_PERFORM.min_top_k, le=_PERFORM.max_top_k)
    module_name: Filter = None
    source_file: Filter = None



class PerformRetrievalResult(BaseModel):
    content: str
    source_url: str
    similarity_score: float
    position: int



class PerformRetrievalResponse(BaseModel):
    results: list[PerformRetrievalResult]
    query: str
    total_results: int
    book_version: str | None = Field(None, description=(
        "The version of the book this was answered from (content hash, ingest time, git commit); also the "
        "X-Book-Version header. Null for an index ingested before versions"))



class BookContextRequest(QueryRequest):
    error_codes: ClassVar[FieldCodes] = {"query": Codes("INVALID_QUERY", "INVALID_QUERY")}

    query: str = query_field(_CONTEXT.max_query_chars, "The user's question about the book content")



class BookContextResponse(BaseModel):
    context: str
    sources: list[dict[str, Any]]
    book_version: str | None = Field(None, description=(
        "The version of the book this was answered from (content hash, ingest time, git commit); also the "
        "X-Book-Version header. Null for an index ingested before versions"))
