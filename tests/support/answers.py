"""Small hand-made pages through the real chunker, answered by the extractive answerer with a retriever
that does not embed (each unit takes its chunk's score, as with a remote embedder)."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

from bookrag.answering.answerers.extractive import ExtractiveAnswerer
from bookrag.domain.deadline import Deadline
from bookrag.domain.models import ChunkPayload, SearchHit
from bookrag.ingestion.chunker import chunk_document, parse_document


def hits_of(markdown: str, path: str = "doc.md", score: float = 0.6, step: float = 0.0) -> list[SearchHit]:
    """The page's chunks as search hits, the first scoring `score`, each next one `step` lower."""
    doc = parse_document(markdown, path)
    out = []
    for i, chunk in enumerate(chunk_document(doc)):
        payload = ChunkPayload.from_dict({
            "chunk_id": f"{path}-{i}", "content_text": chunk.text, "source_file": path,
            "section_heading": chunk.section_heading, "heading_path": chunk.heading_path,
            "doc_title": doc.title, "chunk_index": i})
        out.append(SearchHit(chunk_id=f"{path}-{i}", score=score - step * i, rank_score=score - step * i,
                             payload=payload))
    return out


def answer(question: str, hits: list[SearchHit], uses_term: Callable[[str], bool] = lambda term: True) -> str:
    """The extractive answer's text; fails the test on a refusal. `uses_term`: whether the book-wide
    term lookup finds a stemmed term (every term, by default)."""
    retriever = SimpleNamespace(settings=SimpleNamespace(resolved_embedding_provider="local"),
                                embeds_locally=False, uses_term=uses_term,
                                vocabulary=lambda: frozenset(), pages=lambda: [])
    draft = ExtractiveAnswerer(retriever).answer(question, hits, lambda q, page=None, opening=0: [], Deadline(30))  # type: ignore[arg-type]
    assert not draft.refused
    return draft.text
