"""`make demo`: a few questions against the ingested sample book, on the embedded defaults."""

from __future__ import annotations

import sys

from bookrag.errors import BookRAGError

QUESTIONS = (
    "How do I install ROS 2 Humble on Ubuntu?",
    "What is the difference between a topic and a service?",
    "How does a humanoid robot keep its balance while walking?",
    "What is the capital of Australia?",
)


def main() -> int:
    from bookrag.config.settings import get_settings
    from bookrag.retrieval.retriever import default_threshold
    from bookrag.services.python_api import retrieve_chunks

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
        for c in chunks:
            print(f"  [{c.score:.3f}] {c.source_file} > {c.section_heading}\n          {c.source_url}")
        try:
            from bookrag.services.python_api import run_agent
        except ImportError:
            continue
        response = run_agent(question)
        print(f"A: {response.answer}")
        for s in response.sources:
            print(f"   - {s.chapter} / {s.section} ({s.source_url})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
