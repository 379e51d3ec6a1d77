"""Check a question set against its book: every line parses, gold files exist, keywords occur verbatim.

Usage: python eval/check_keywords.py eval/textbook-2-answers.jsonl /work/shared/corpus/physical-ai-textbook-2/docs
Exits 1 and names each problem; prints "ok: N questions" otherwise.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(questions: Path, docs: Path) -> int:
    problems: list[str] = []
    lines = questions.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        row = json.loads(line)
        texts = []
        for gold in row["gold_files"]:
            path = docs / gold
            if not path.is_file():
                problems.append(f"line {number}: gold file {gold} missing")
                continue
            texts.append(path.read_text(encoding="utf-8").lower())
        for keyword in row["answer_keywords"]:
            if keyword != keyword.lower() or not any(keyword in t for t in texts):
                problems.append(f"line {number}: keyword {keyword!r} not found verbatim in a gold file")
        if row["kind"] == "multi" and len(row["gold_files"]) < 2:
            problems.append(f"line {number}: multi needs two gold files")
    for problem in problems:
        sys.stdout.write(problem + "\n")
    if not problems:
        sys.stdout.write(f"ok: {len(lines)} questions\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
