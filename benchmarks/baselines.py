"""Plain baselines beside ours (issue 37), on one book's answer set: does each of our stages earn its keep?

Retrieval, file level (the gold files of each answerable question):
- `bm25`: bm25s (Lucene BM25, k1 1.5, b 0.75, English stop words, no stemmer) over plain chunks;
- `dense`: the same MiniLM we embed with, cosine over the same plain chunks;
- `rrf`: reciprocal-rank fusion of the two (k = 60);
- `ours`: the service's retriever (`SearchOptions()` defaults, the store in QDRANT_PATH).
Plain chunks: each file cut at its headings, each section into windows of at most 300 words (no tuning).
MRR@10 of the first gold file, hit@5 (a gold file among the top 5 chunks' files), and the refusal AUC of
each ranker's top score (answerable against unanswerable questions: does the score tell them apart?).

Answers: the no-logic answer, the first 600 characters of our top three chunks, scored like an answer
(keyword recall, share holding a keyword), beside ours in the `make eval` report. And what any answer quoting
our chunks could reach (`reach`): for the top k chunks the agent's search returns (the question respelt as the
agent searches it, `SearchOptions(top_k=24)`'s order, k in `REACH`), the share of answerable questions whose
expected fact (a keyword) is in their text or headings, and the keyword recall of that text: an extractive
answer over those chunks cannot do better. The answerer reads the top 5 (and a multi-part question's clause
searches).

Usage: QDRANT_PATH=... python benchmarks/baselines.py eval/answers-redux.jsonl DOCS out.json
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from bookrag.answering.answerers.questions import searchable
from bookrag.config.settings import load_settings
from bookrag.devtools.answer_eval import keyword_recall
from bookrag.devtools.answer_sets import load_answer_cases
from bookrag.devtools.questions import reciprocal_rank, roc_auc
from bookrag.retrieval.retriever import SearchOptions
from bookrag.services.container import container_for

WINDOW = 300
RRF_K = 60
DEPTH = 100
REACH = (1, 2, 3, 5, 8, 12, 16, 24)
_HEADING = re.compile(r"^#{1,6}\s", re.M)


def plain_chunks(docs: Path) -> list[tuple[str, str]]:
    """(file, text) windows: every Markdown file cut at headings, then at WINDOW words."""
    out = []
    for path in sorted([*docs.rglob("*.md"), *docs.rglob("*.mdx")]):
        rel = path.relative_to(docs).as_posix()
        text = path.read_text(encoding="utf-8")
        starts = [m.start() for m in _HEADING.finditer(text)]
        for a, b in zip([0, *starts], [*starts, len(text)], strict=True):
            words = text[a:b].split()
            for i in range(0, len(words), WINDOW):
                if words[i:i + WINDOW]:
                    out.append((rel, " ".join(words[i:i + WINDOW])))
    return out


def first_files(order: list[int], chunks: list[tuple[str, str]]) -> list[str]:
    return [chunks[i][0] for i in order]


def metrics(ranked: list[list[str]], scores: list[float], cases: list[Any]) -> dict[str, Any]:
    rr, hits, pos, neg = [], [], [], []
    for files, score, case in zip(ranked, scores, cases, strict=True):
        if case.answerable:
            gold = set(case.question.gold_files)
            rr.append(reciprocal_rank(files, gold, 10))
            hits.append(any(f in gold for f in files[:5]))
            pos.append(score)
        else:
            neg.append(score)
    auc = roc_auc(pos, neg) if pos and neg else None
    return {"mrr@10": round(float(np.mean(rr)), 3), "hit@5": round(float(np.mean(hits)), 3),
            "refusal_auc": None if auc is None else round(auc, 3)}


def main(set_path: str, docs_path: str, out_path: str) -> int:
    import bm25s

    cases = load_answer_cases(Path(set_path))
    chunks = plain_chunks(Path(docs_path))
    settings = load_settings(embedding_provider="local", llm_provider="extractive")
    retriever = container_for(settings).retriever
    questions = [c.question.question for c in cases]

    index = bm25s.BM25()
    index.index(bm25s.tokenize([t for _, t in chunks], stopwords="en", show_progress=False), show_progress=False)
    ids, bm = index.retrieve(bm25s.tokenize(questions, stopwords="en", show_progress=False),
                             k=min(DEPTH, len(chunks)), show_progress=False)
    vectors = np.asarray(retriever.embed_documents([t for _, t in chunks]))
    queries = np.asarray([retriever.embed_query(q) for q in questions])
    cos = queries @ vectors.T

    bm25_ranked, dense_ranked, rrf_ranked, ours_ranked = [], [], [], []
    bm25_top, dense_top, ours_top = [], [], []
    no_logic = []
    reach: dict[int, list[tuple[bool, float]]] = {k: [] for k in REACH}
    for qi, q in enumerate(questions):
        b_order = [int(i) for i in ids[qi]]
        d_order = [int(i) for i in np.argsort(-cos[qi])[:DEPTH]]
        fused: dict[int, float] = {}
        for order in (b_order, d_order):
            for rank, i in enumerate(order):
                fused[i] = fused.get(i, 0.0) + 1.0 / (RRF_K + rank + 1)
        r_order = sorted(fused, key=lambda i: -fused[i])
        bm25_ranked.append(first_files(b_order, chunks))
        dense_ranked.append(first_files(d_order, chunks))
        rrf_ranked.append(first_files(r_order, chunks))
        bm25_top.append(float(bm[qi][0]))
        dense_top.append(float(cos[qi][d_order[0]]))
        hits = retriever.search(q, SearchOptions(top_k=10)).hits
        ours_ranked.append([h.source_file for h in hits])
        ours_top.append(hits[0].score if hits else 0.0)
        text = " ".join(h.text[:600] for h in hits[:3]).lower()
        kws = cases[qi].question.answer_keywords
        no_logic.append({"keyword_recall": keyword_recall(text, kws) if kws else None,
                         "with_keyword": any(k in text for k in kws) if kws else None})
        if cases[qi].answerable and kws:
            deep = retriever.search(searchable(q, retriever.vocabulary), SearchOptions(top_k=max(REACH))).hits
            for k in REACH:
                recall = keyword_recall(" ".join(" ".join([*h.payload.heading_path, h.text]) for h in deep[:k]), kws)
                reach[k].append((recall > 0, recall))
    answerable = [n for n, c in zip(no_logic, cases, strict=True) if c.answerable]
    data = {
        "set": set_path, "plain_chunks": len(chunks),
        "retrieval": {"bm25": metrics(bm25_ranked, bm25_top, cases), "dense": metrics(dense_ranked, dense_top, cases),
                      "rrf": {**metrics(rrf_ranked, dense_top, cases), "refusal_auc": None},
                      "ours": metrics(ours_ranked, ours_top, cases)},
        "no_logic_answer": {
            "keyword_recall": round(float(np.mean([n["keyword_recall"] for n in answerable])), 3),
            "with_keyword": round(float(np.mean([n["with_keyword"] for n in answerable])), 3)},
        "reach": {"k": list(REACH),
                  "with_fact": [round(float(np.mean([f for f, _ in reach[k]])), 3) for k in REACH],
                  "keyword_recall": [round(float(np.mean([r for _, r in reach[k]])), 3) for k in REACH]},
    }
    Path(out_path).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    sys.stdout.write(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
