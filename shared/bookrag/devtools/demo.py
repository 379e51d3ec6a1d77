"""`make demo`: a few questions against the ingested sample book, on the embedded defaults."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from bookrag.errors import BookRAGError

if TYPE_CHECKING:
    from bookrag.contracts.python_api import RetrievedChunk

QUESTIONS = (
    "How do I install ROS 2 Humble on Ubuntu?",
    "What is the difference between a topic and a service?",
    "How does a humanoid robot keep its balance while walking?",
    "What is the capital of Australia?",
)


def section_rows(chunks: list[RetrievedChunk]) -> list[str]:
    """One row per section, chunks of one section merged (best score, their positions listed)."""
    merged: dict[tuple[str, str], list[RetrievedChunk]] = {}
    for c in chunks:
        merged.setdefault((c.source_file, c.section_heading), []).append(c)
    rows = []
    for (source_file, section), group in merged.items():
        positions = ", ".join(str(c.position + 1) for c in sorted(group, key=lambda c: c.position))
        label = "chunk" if len(group) == 1 else "chunks"
        rows.append(f"  [{max(c.score for c in group):.3f}] {source_file} > {section} ({label} {positions} of "
                    f"{group[0].total_chunks})\n          {group[0].source_url}")
    return rows


def main() -> int:
    from bookrag.config.settings import get_settings
    from bookrag.retrieval.retriever import default_threshold
    from bookrag.services.python_api import retrieve_chunks, run_agent

    threshold = default_threshold(get_settings(), "rest")
    for question in QUESTIONS:
        print(f"\nQ: {question}")
        try:
            chunks = retrieve_chunks(question, top_k=3, min_score=threshold)
        except BookRAGError as exc:
            print(f"  error [{exc.code}]: {exc.message}")
            return 1
        if not chunks:
            print(f"  (nothing in the book scores above {threshold}: this question is not answered in the book)")
        for line in section_rows(chunks):
            print(line)
        response = run_agent(question)
        print(f"A: {response.answer}")
        if response.is_refusal:  # nearest sections, not citations: no [n] markers point at them
            if response.sources:
                print("   You may want to read:")
            for s in response.sources:
                print(f"   - {s.chapter} / {s.section} ({s.source_url})")
            continue
        for n, s in enumerate(response.sources, start=1):
            link = s.quotes[0].fragment_url if s.quotes else s.source_url
            print(f"   [{n}] {s.chapter} / {s.section} ({link})")
    print("\nAsk the book in a browser: run `make serve`, then open http://127.0.0.1:8000/demo")
    return 0


if __name__ == "__main__":
    sys.exit(main())
