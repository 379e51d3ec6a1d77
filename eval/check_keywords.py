"""Check a question set against its book: every line parses, gold files exist, keywords occur verbatim.

Usage: .venv/bin/python eval/check_keywords.py eval/textbook-2-answers.jsonl /work/shared/corpus/physical-ai-textbook-2/docs
An answer set (lines with `gold_heading`, eval/README.md) is checked section by section: the heading is in
the gold file, the passage verbatim in its section, every keyword, label and term in it
(`bookrag.devtools.answer_sets.check_case`); the counts per shape are printed.
Exits 1 and names each problem; prints "ok: N questions" otherwise.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path


def check_files(row: dict, docs: Path) -> list[str]:
    problems, texts = [], []
    for gold in row["gold_files"]:
        path = docs / gold
        if not path.is_file():
            problems.append(f"gold file {gold} missing")
            continue
        texts.append(path.read_text(encoding="utf-8").lower())
    for keyword in row["answer_keywords"]:
        if keyword != keyword.lower() or not any(keyword in t for t in texts):
            problems.append(f"keyword {keyword!r} not found verbatim in a gold file")
    if row["kind"] == "multi" and len(row["gold_files"]) < 2:
        problems.append("multi needs two gold files")
    return problems


def check_turn(turn: dict, docs: Path, book: object) -> list[str]:
    """A conversation turn: its gold files and keywords, its gold heading's section, its selection."""
    from bookrag.devtools.book_sections import tokens

    problems = [p for p in check_files({**turn, "kind": "factual"}, docs) if turn["gold_files"]]
    if turn.get("gold_heading"):
        sections = book.gold(turn["gold_files"][0], turn["gold_heading"])  # type: ignore[attr-defined]
        text = " ".join(" ".join(s.text for s in sections).lower().split())
        problems += [f"heading {turn['gold_heading']!r} missing"] if not sections else \
            [f"keyword {k!r} not in {turn['gold_heading']!r}" for k in turn["answer_keywords"] if k not in text]
    if turn.get("selected_text"):
        page = " ".join(tokens((docs / turn["source_file"]).read_text(encoding="utf-8")))
        if turn.get("in_book") and " ".join(tokens(turn["selected_text"])) not in page:
            problems.append("selected text not in its source file")
    return problems


def main(questions: Path, docs: Path) -> int:
    problems: list[str] = []
    shapes: Counter[str] = Counter()
    lines = questions.read_text(encoding="utf-8").splitlines()
    answer_set = '"gold_heading"' in questions.read_text(encoding="utf-8")
    if answer_set or '"turns"' in lines[0]:
        from bookrag.devtools.answer_sets import check_case
        from bookrag.devtools.book_sections import Book

        book = Book(docs)
    for number, line in enumerate(lines, start=1):
        row = json.loads(line)
        if "turns" in row:  # a conversation set: every turn
            problems += [f"line {number} turn {n}: {p}" for n, turn in enumerate(row["turns"], start=1)
                         for p in check_turn(turn, docs, book)]
            shapes[row.get("pattern", "-")] += 1
            continue
        found = check_case(book, row) if answer_set else check_files(row, docs)
        problems += [f"line {number}: {p}" for p in found]
        shapes[row["kind"] if row["kind"] == "unanswerable" else row.get("shape", "-")] += 1
    for problem in problems:
        sys.stdout.write(problem + "\n")
    if not problems:
        sys.stdout.write(f"ok: {len(lines)} questions ({', '.join(f'{k} {v}' for k, v in sorted(shapes.items()))})\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
