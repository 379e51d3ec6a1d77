"""Could the extractive answerer show its first sentence sooner by choosing its lead from a shortlist?

The stream's target (issue 15) is first answer text at most half the time of a complete answer. The
extractive answerer's lead is the best section of *all* scored statements, and scoring a statement
costs embedding it (about 90 % of an answer's time), so its first sentence is known only when every
statement is scored. The only way to show it earlier is to choose the lead from a shortlist scored
first and embed the rest afterwards, for the runners-up: a different answerer. This measures what
that would cost, per shortlist policy, over answered questions:

- lead changed: the lead chosen from the shortlist (by `ExtractiveAnswerer.select`) is not the
  lead chosen from every statement (or the shortlist alone would refuse);
- first text / complete (estimate): (the answer's time - embedding every statement + embedding the
  shortlist) / the answer's time, retrieval included; embeddings timed as the best of 3 runs.

Policies: the top M statements by the score's part that needs no embedding (word overlap, heading
match, the chunk's retrieval score), and every statement of the top K retrieved chunks.

    python benchmarks/stream_early_lead.py [--textbook-2 DOCS --textbook-2-store DIR]
-> benchmarks/stream-early-lead.json (the figures quoted in stream-results.md)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "stream-early-lead.json"
SAMPLE_SETS = ("agent-sample-book.jsonl", "sample-book.jsonl")
TEXTBOOK_2_SETS = ("textbook-2.jsonl", "textbook-2-answers.jsonl")


def best_of(runs: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(questions: list[str]) -> dict[str, Any]:
    # Imported here: the store and embedder come from the environment each book sets.
    from bookrag.answering.answerers.composition import Scored
    from bookrag.answering.answerers.extractive import ExtractiveAnswerer
    from bookrag.answering.answerers.scoring import FEATURES, weights
    from bookrag.answering.context import book_context
    from bookrag.domain.deadline import Deadline
    from bookrag.services.container import current

    agent = current().agent
    answerer = agent.answerer
    assert isinstance(answerer, ExtractiveAnswerer), "run with LLM_PROVIDER=extractive"
    retriever = agent.retriever
    weight = weights().coef[FEATURES.index("cosine")]  # the fitted score's weight of the dense cosine

    def retrieve(text: str) -> list[Any]:
        return book_context(retriever, text)[1]

    def embed(units: Sequence[Scored]) -> None:
        retriever.embed_documents([u.text for u in units] + [u.unit.text for u in units if u.unit.items])

    def same(a: Scored, b: Scored) -> bool:
        return a.hit.chunk_id == b.hit.chunk_id and a.unit == b.unit

    policies: dict[str, Callable[[list[Scored], list[str]], list[Scored]]] = {
        **{f"top {m} statements by the score without embedding": (
            lambda scored, ranked, m=m: sorted(scored, key=lambda s: -(s.score - weight * s.cosine))[:m])
           for m in (4, 6, 8, 10)},
        **{f"every statement of the top {k} chunk(s)": (
            lambda scored, ranked, k=k: [s for s in scored if s.hit.chunk_id in ranked[:k]]) for k in (1, 2)},
    }
    rows = []
    retrieve(questions[0])  # warm: the first search opens the store
    for question in questions:
        start = time.perf_counter()
        hits = retrieve(question)
        draft = answerer.answer(question, hits, retrieve, Deadline(30))
        total = time.perf_counter() - start
        if draft.refused:
            continue
        part = answerer.part_hits(question, hits, retrieve, Deadline(30))
        scored = answerer.score(question, hits, part)
        lead = answerer.select(scored, question)[0]
        everything = best_of(3, lambda scored=scored: embed(scored))
        ranked = [h.chunk_id for h in hits]
        row: dict[str, Any] = {"question": question, "statements": len(scored), "answer_s": round(total, 4),
                               "embed_all_s": round(everything, 4), "policies": {}}
        for name, policy in policies.items():
            shortlist = sorted(policy(scored, ranked), key=lambda s: -s.score)
            chosen = answerer.select(shortlist, question)
            part_time = best_of(3, lambda shortlist=shortlist: embed(shortlist)) if shortlist else 0.0
            row["policies"][name] = {
                "statements": len(shortlist),
                "lead_changed": not chosen or not same(chosen[0], lead),
                "first_text_over_complete": round((total - everything + part_time) / total, 3),
            }
        rows.append(row)
    summary = {
        name: {"lead_changed": sum(r["policies"][name]["lead_changed"] for r in rows),
               "first_text_over_complete_p50": round(statistics.median(
                   r["policies"][name]["first_text_over_complete"] for r in rows), 3)}
        for name in policies}
    return {"answered": len(rows), "embedding_share_of_answer_p50": round(statistics.median(
        r["embed_all_s"] / r["answer_s"] for r in rows), 3), "policies": summary, "rows": rows}


def questions_of(names: Sequence[str]) -> list[str]:
    return [json.loads(line)["question"] for name in names
            for line in (ROOT / "eval" / name).read_text().splitlines() if line.strip()]


def book(docs: Path, store: Path | None, sets: Sequence[str]) -> dict[str, Any]:
    """Ingests `docs` (unless `store` holds it already) and measures in a child process of its own."""
    workdir = Path(tempfile.mkdtemp(prefix="bookrag-early-lead-"))
    try:
        target = store or workdir / "store"
        env = {**os.environ, "QDRANT_PATH": str(target), "EMBEDDING_PROVIDER": "local", "LLM_PROVIDER": "extractive",
               "LOG_LEVEL": "WARNING"}
        if store is None:
            subprocess.run([sys.executable, "-m", "bookrag.devtools.cli", "ingest", str(docs)], env=env, check=True,
                           capture_output=True)
        out = workdir / "out.json"
        subprocess.run([sys.executable, __file__, "--measure", str(out), *sets], env=env, check=True)
        result: dict[str, Any] = json.loads(out.read_text())
        return {"sets": list(sets), **result}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--textbook-2", type=Path, default=ROOT.parent / "shared" / "corpus" / "physical-ai-textbook-2"
                        / "docs")
    parser.add_argument("--textbook-2-store", type=Path, help="a store that already holds textbook-2")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("sets", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        args.measure.write_text(json.dumps(measure(questions_of(args.sets))))
        return
    result = {"sample book": book(ROOT / "book" / "docs", None, SAMPLE_SETS)}
    if args.textbook_2.is_dir():
        result["textbook-2"] = book(args.textbook_2, args.textbook_2_store, TEXTBOOK_2_SETS)
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    for name, figures in result.items():
        print(f"{name}: {figures['answered']} answered, embedding {figures['embedding_share_of_answer_p50']} "
              "of an answer's time (p50)")
        for policy, summary in figures["policies"].items():
            print(f"  {policy}: lead changed {summary['lead_changed']}/{figures['answered']}, "
                  f"first text / complete ~{summary['first_text_over_complete_p50']}")


if __name__ == "__main__":
    main()
