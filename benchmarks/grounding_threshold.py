"""Measure the grounding check's coverage for right and wrong citations on an ingested book.

For a sample of the book's sentences (every k-th unit of at least 6 words), it computes the
coverage (`answerers.grounding.support`) of the sentence against its own chunk, and against the
best-ranked retrieved chunk from another section (a wrong citation on the same topic, the hard
case); and the share of each that passes MIN_SUPPORT and the number rule.

Usage: QDRANT_PATH=... EMBEDDING_PROVIDER=local python benchmarks/grounding_threshold.py [out.json]
"""

from __future__ import annotations

import json
import sys

from bookrag.answering.answerers.grounding import MIN_SUPPORT, support
from bookrag.config.settings import get_settings
from bookrag.domain.models import ChunkPayload, SearchHit
from bookrag.retrieval.retriever import SearchOptions
from bookrag.services.container import container_for
from bookrag.text.sentences import extract_units

EVERY = 7
SAMPLE = 150


def quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {p: round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)
            for p, q in (("p10", 0.1), ("median", 0.5), ("p90", 0.9), ("max", 0.999))}


def main() -> int:
    retriever = container_for(get_settings()).retriever
    payloads = list(retriever.store.scroll_payloads(["chunk_id", "content_text", "source_file", "section_heading",
                                                     "heading_path", "source_url"]))
    payloads.sort(key=lambda p: str(p["chunk_id"]))
    sentences: list[tuple[str, SearchHit]] = []
    for p in payloads:
        hit = SearchHit(str(p["chunk_id"]), 1.0, 1.0, ChunkPayload.from_dict(p))
        sentences += [(u.text, hit) for u in extract_units(hit.text) if len(u.text.split()) >= 6 and not u.items]
    sample = sentences[::EVERY][:SAMPLE]
    own, wrong = [], []
    own_pass = wrong_pass = 0
    for text, hit in sample:
        s = support(text, hit)
        own.append(s.coverage)
        own_pass += s.supported
        others = [h for h in retriever.search(text, SearchOptions(top_k=5, min_score=0.0)).hits
                  if (h.source_file, h.section_heading) != (hit.source_file, hit.section_heading)]
        if others:
            w = support(text, others[0])
            wrong.append(w.coverage)
            wrong_pass += w.supported
    result = {"min_support": MIN_SUPPORT, "sentences": len(sample),
              "own_chunk": {"coverage": quantiles(own), "passes": round(own_pass / len(own), 3)},
              "wrong_chunk": {"n": len(wrong), "coverage": quantiles(wrong),
                              "passes": round(wrong_pass / len(wrong), 3),
                              "passes_at": {str(t / 10): round(sum(c >= t / 10 for c in wrong) / len(wrong), 3)
                                            for t in range(4, 10)}}}
    text = json.dumps(result, indent=2)
    print(text)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
