"""Retrieval with the embedder down (issue 26): BM25 alone (`sparse-fallback`) against the normal hybrid
retrieval, on textbook-2, with the retrieval evaluation's own per-question run (devtools/evaluation.py).

The book is the fragments benchmark's store (.bookrag/bench-tb2, local embedder; ingested when missing).
"Down" is the steady state of an outage: the embedder's circuit is open, so each query fails at once with
`CircuitOpenError` (before it opens, two requests pay Cohere's failed call and its retry:
tests/integration/test_degraded_retrieval.py counts them). Latency is one `Retriever.search` (top 5), in
process, as `evaluate_question` times it; p95 over eval/textbook-2.jsonl's answerable questions, after one warm-up
pass. Target: p95 <= 150 ms. hit@5 is reported for both.

-> benchmarks/degraded-results.json, degraded-results.md.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STORE = ROOT / ".bookrag" / "bench-tb2"
TEXTBOOK_2 = ROOT.parent / "shared" / "corpus" / "physical-ai-textbook-2" / "docs"
QUESTIONS = ROOT / "eval" / "textbook-2.jsonl"
OUT = ROOT / "benchmarks"


class DownEmbedder:
    """The configured embedder's name and size, but every query fails as an open circuit does."""

    def __init__(self, name: str, dimension: int) -> None:
        self.name, self.dimension = name, dimension

    def embed_query(self, text: str) -> Any:
        from bookrag.adapters.circuit import CircuitOpenError

        raise CircuitOpenError()

    def embed_documents(self, texts: Any) -> Any:
        raise AssertionError("not on the request path")


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def main() -> None:
    if not TEXTBOOK_2.is_dir():
        raise SystemExit("textbook-2 is absent")
    os.environ.update(QDRANT_PATH=str(STORE), EMBEDDING_PROVIDER="local", POWERTOOLS_METRICS_DISABLED="true")
    if not STORE.exists():
        subprocess.run([sys.executable, "-m", "bookrag.devtools.cli", "ingest", str(TEXTBOOK_2)], check=True)
    from bookrag.adapters.embedders import CachedEmbedder
    from bookrag.config.settings import get_settings
    from bookrag.devtools.evaluation import MODES, evaluate_question
    from bookrag.devtools.questions import load_questions
    from bookrag.retrieval.retriever import Retriever
    from bookrag.services.container import container_for

    settings = get_settings()
    container = container_for(settings)
    normal = container.retriever
    down = Retriever(settings, CachedEmbedder(DownEmbedder(normal.embedder.name, normal.embedder.dimension), 0),
                     container.store)
    questions = [q for q in load_questions(QUESTIONS) if q.gold_files]  # the answerable ones: hit@5 needs a gold
    spec = MODES["default"]  # what the service does
    results: dict[str, Any] = {}
    for name, retriever in (("normal (hybrid)", normal), ("embedder down (sparse-fallback)", down)):
        for q in questions:  # warm-up pass: the query cache, the store's pages
            evaluate_question(retriever, q, spec)
        rows = [evaluate_question(retriever, q, spec) for q in questions]
        ms = [r.seconds * 1000 for r in rows]
        results[name] = {"hit@5": round(statistics.fmean(r.hit5 for r in rows), 4),
                         "MRR@10": round(statistics.fmean(r.rr10 for r in rows), 4),
                         "p50_ms": round(statistics.median(ms), 1), "p95_ms": round(p95(ms), 1)}
    down_p95 = results["embedder down (sparse-fallback)"]["p95_ms"]
    summary = {"questions": len(questions), "chunks": container.store.count(), "results": results,
               "target_p95_ms": 150, "met": down_p95 <= 150}
    (OUT / "degraded-results.json").write_text(json.dumps(summary, indent=1) + "\n")
    lines = ["# Retrieval with the embedder down (textbook-2)", "",
             f"`python benchmarks/degraded_retrieval.py`: {len(questions)} answerable questions "
             f"(eval/textbook-2.jsonl), "
             f"{summary['chunks']} chunks, embedded store, one search (top 5) per question in process.", "",
             "| retrieval | hit@5 | MRR@10 | p50 | p95 |", "| --- | ---: | ---: | ---: | ---: |"]
    for name, r in results.items():
        lines.append(f"| {name} | {r['hit@5']:.3f} | {r['MRR@10']:.3f} | {r['p50_ms']:.1f} ms | {r['p95_ms']:.1f} ms |")
    lines += ["", f"Target with the embedder down: p95 <= 150 ms: {'met' if summary['met'] else 'NOT met'}."]
    (OUT / "degraded-results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
