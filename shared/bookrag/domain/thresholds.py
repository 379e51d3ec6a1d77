"""Default minimum similarity per embedder and interface (a leaf module: health imports it cheaply).

A threshold compares each chunk's cosine similarity to the query (see `bookrag.retrieval.retriever`): a chunk
is returned only if it is at least that similar, and a question gets no result at all when its best
chunk is below it. The Cohere column is the contracts' (calibrated for embed-english-v3.0).

all-MiniLM-L6-v2 scores lower for the same relevance, so its column is measured with `bookrag eval`
on both question sets, default mode (benchmarks/eval-textbook-2.md, eval-sample-book.md); "gold"
means a chunk of a gold file among the top 5:

    threshold                                   0.25   0.30   0.33   0.34   0.36   0.40
    textbook-2   gold chunks kept (of 96)       100%    99%    96%    96%    93%    92%
                 answerable keeping a gold      100%   100%   100%   100%    98%    98%
                 unanswerable refused (of 9)     22%    22%    22%    22%    33%    44%
    sample book  gold chunks kept (of 77)       100%    97%    96%    95%    92%    91%
                 answerable keeping a gold      100%   100%   100%   100%    92%    92%
                 unanswerable refused (of 6)     33%    33%    50%    83%    83%   100%

An answerable question's best chunk scores 0.34 to 0.82 (weakest 0.343 on the sample book, 0.381 on
textbook-2); an unanswerable one's 0.13 to 0.57, so no threshold separates them (ROC AUC 0.91 and
0.99): a threshold screens off-topic questions, and the answerer has to judge the rest.

- `tool_content` 0.25: its reader is an LLM; the highest value keeping every gold chunk on both books.
- `rest` 0.30: keeps 99% and 97% of gold chunks and drops the near-zero ones; above 0.31 textbook-2
  starts losing relevant chunks.
- `agent` 0.33: an empty result makes the agent refuse, so the highest value at least 0.01 below the
  weakest answerable question's best chunk on either book; it refuses 22% and 50% of the
  unanswerable questions before the answerer is asked. The agent's gate (`answering.gate`) compares
  the same value with a chunk's cosine plus the evidence of its headings and list labels, so a short
  labelled section under it is still answered; the retrieval interfaces' thresholds are unchanged.
"""

from __future__ import annotations

DEFAULT_THRESHOLDS: dict[str, dict[str, float]] = {
    "cohere": {"rest": 0.7, "tool_content": 0.5, "agent": 0.75, "python": 0.0, "perform_retrieval": 0.0},
    "local": {"rest": 0.30, "tool_content": 0.25, "agent": 0.33, "python": 0.0, "perform_retrieval": 0.0},
}
