"""Where "near the book" ends (issue 36): the threshold `bookrag report` splits its content gaps by.

    QDRANT_PATH=<store> python benchmarks/gap_topicality.py NAME QUESTIONS.jsonl [...] --off OTHER.jsonl [...]
        [--out benchmarks/gap-topicality]   # adds NAME's rows to OUT.json, rewrites OUT.md

A gap question's evidence is the cosine of its nearest chunk of the book (`Retriever.best_cosines`, the
vectors the report clusters with). Labels come from the question sets, never from a word list: "near" is
every question of the book's own sets (answerable or not: the book's topics), "off" every question of
another book's sets (a robotics book's questions asked of the Redux docs and back) plus the general
questions of the sets' unanswerable rows (`TRIVIA`, the ones no technical book covers). For each
threshold the table gives the share of near questions kept and of off questions dropped; the report's
`OFF_TOPIC_BELOW` is read from it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "shared"))

# The unanswerable rows of eval/*.jsonl that are about no technical subject at all, labelled by hand once.
TRIVIA = ["Can you give me a good recipe for banana bread?", "What is a good recipe for chocolate chip cookies?",
          "What is the capital of Australia?", "What's a good recipe for sourdough bread?",
          "Who won the 2022 FIFA World Cup?", "can you suggest a beginner workout routine for the gym",
          "how many moons does jupiter have", "whats a good hydration ratio for a sourdough starter",
          "who won the 2018 world cup", "Write me a poem about the ocean.", "Who won the 2018 FIFA World Cup?",
          "What is the current price of Bitcoin?"]
THRESHOLDS = [0.15, 0.18, 0.20, 0.22, 0.24, 0.25, 0.26, 0.28, 0.30, 0.33]


def questions(files: list[Path], *, drop: frozenset[str] = frozenset()) -> list[str]:
    seen: dict[str, None] = {}
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and (q := json.loads(line).get("question")) and q not in drop:
                seen.setdefault(str(q), None)
    return list(seen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name")
    parser.add_argument("near", nargs="+", type=Path)
    parser.add_argument("--off", nargs="+", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "gap-topicality")
    args = parser.parse_args()

    from bookrag.config.settings import get_settings
    from bookrag.services.container import container_for

    retriever = container_for(get_settings()).retriever
    near = questions(args.near, drop=frozenset(TRIVIA))
    off = questions(args.off, drop=frozenset(near)) + TRIVIA
    cos = {label: np.asarray(retriever.best_cosines(retriever.embed_documents(qs)))
           for label, qs in (("near", near), ("off", off), ("general", TRIVIA))}
    rows = [{"threshold": t, "near_kept": float((cos["near"] >= t).mean()),
             "off_dropped": float((cos["off"] < t).mean()), "general_dropped": float((cos["general"] < t).mean())}
            for t in THRESHOLDS]
    result = {"near": len(near), "off": len(off),
              "near_cosine": [round(float(x), 3) for x in np.percentile(cos["near"], [0, 5, 50])],
              "off_cosine": [round(float(x), 3) for x in np.percentile(cos["off"], [50, 95, 100])],
              "general_cosine_max": round(float(cos["general"].max()), 3),
              "lowest_near": sorted(zip(cos["near"].round(3).tolist(), near, strict=True))[:5],
              "highest_off": sorted(zip(cos["off"].round(3).tolist(), off, strict=True))[-5:], "rows": rows}
    out_json = args.out.with_suffix(".json")
    data = json.loads(out_json.read_text()) if out_json.exists() else {}
    data[args.name] = result
    out_json.write_text(json.dumps(data, indent=1) + "\n")
    lines = ["# Gap topicality: a gap question's nearest chunk, near the book or off-topic",
             "", "`benchmarks/gap_topicality.py` (local embedder). Near: the book's own question sets; off: another "
             "book's sets and the sets' general questions. Cosine percentiles: near (min, p5, median), off "
             "(median, p95, max).", ""]
    for name, r in data.items():
        lines += [f"## {name}: {r['near']} near, {r['off']} off", "",
                  f"near cosine {r['near_cosine']}, off cosine {r['off_cosine']}, general questions' highest "
                  f"{r['general_cosine_max']}", "",
                  "| threshold | near kept | off dropped | of which general dropped |", "| --- | --- | --- | --- |"]
        lines += [f"| {x['threshold']:.2f} | {x['near_kept']:.1%} | {x['off_dropped']:.1%} | "
                  f"{x['general_dropped']:.1%} |" for x in r["rows"]]
        lines += ["", "lowest near: " + "; ".join(f"{c} {q}" for c, q in r["lowest_near"]),
                  "", "highest off: " + "; ".join(f"{c} {q}" for c, q in r["highest_off"]), ""]
    out_json.with_suffix(".md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
