"""Render benchmarks/answers.md tables from benchmarks/answers/{before,after,after2,after3}-<set>.json.

`bookrag eval --answers` writes them; `after2` and `after3` are the second and third rounds;
a missing stage is left out.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "answers"
SETS = ("sample-book", "agent-sample-book", "textbook-2", "textbook-2-answers")
STAGES = {"before": "before", "after": "after", "after2": "after, round 2", "after3": "after, round 3"}


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def main() -> int:
    lines: list[str] = []
    for name in SETS:
        runs = {stage: HERE / f"{stage}-{name}.json" for stage in STAGES if (HERE / f"{stage}-{name}.json").exists()}
        if not runs:
            continue
        data = {stage: json.loads(p.read_text())["answers"]["summary"] for stage, p in runs.items()}
        lines += [f"### {name}", "",
                  "| kind | n | stage | answered | with keyword | keyword recall | refused | citation precision "
                  "| cited ∈ retrieved |",
                  "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for kind in ("answerable", "factual", "multi", "unanswerable"):
            for stage in runs:
                row = data[stage].get(kind)
                if not row or not row.get("n"):
                    continue
                lines.append(f"| {kind} | {row['n']} | {STAGES[stage]} | {pct(row['answered'])} "
                             f"| {pct(row.get('with_keyword'))} "
                             f"| {num(row.get('keyword_recall'))} | {pct(row['refused'])} "
                             f"| {pct(row['citation_precision'])} | {pct(row['citations_retrieved'])} |")
        lines.append("")
    sys.stdout.write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
