"""The agent tools' definitions, exactly as the contracts give them (OpenAI-style function schemas)."""

from __future__ import annotations

from typing import Any

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
