"""The `retrieve_book_context` tool: the agent's own retrieval, formatted as the agent contract shows it."""

from __future__ import annotations

from typing import Any

from bookrag.contracts.tools import NO_CONTEXT
from bookrag.domain.models import Filters, SearchHit
from bookrag.retrieval.retriever import DIVERSITY_MAX_PER_FILE, Retriever, SearchOptions, default_threshold


def book_context(retriever: Retriever, query: str, top_k: int = 5, min_score: float | None = None,
                 per_file: int = DIVERSITY_MAX_PER_FILE, filters: Filters | None = None) -> tuple[str, list[SearchHit]]:
    """The agent tool: the contract's "Context from the book:" text, and the hits behind it (at most
    `per_file` of one page)."""
    threshold = min_score if min_score is not None else default_threshold(retriever.settings, "agent")
    hits = retriever.search(query, SearchOptions(top_k=top_k, min_score=threshold, per_file=per_file,
                                                   filters=filters)).hits
    return format_context(hits), hits



def format_context(hits: list[SearchHit]) -> str:
    if not hits:
        return NO_CONTEXT
    blocks = [f"[Source: {h.citation_label}]\n{h.text}" for h in hits]
    return "Context from the book:\n\n" + "\n\n".join(blocks)



def source_summary(hit: SearchHit) -> dict[str, Any]:
    return {"chunk_id": hit.chunk_id, "source": hit.citation_label, "source_url": hit.payload.source_url,
            "source_file": hit.source_file, "section_heading": hit.section_heading, "score": hit.score}
