"""Question sets (eval/*.jsonl) and the pure metrics every evaluation shares.

hit@5, reciprocal rank and evidence are computed from file paths and texts only, so retrieval,
answer and conversation evaluations score alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bookrag.errors import InvalidInputError

Kind = Literal["factual", "multi", "unanswerable"]



KINDS: tuple[Kind, ...] = ("factual", "multi", "unanswerable")



ANSWERABLE: tuple[Kind, ...] = ("factual", "multi")



@dataclass(frozen=True, slots=True)
class Question:
    question: str
    gold_files: tuple[str, ...]
    answer_keywords: tuple[str, ...]
    kind: Kind



def load_questions(path: Path) -> list[Question]:
    """Read a question set (format: eval/README.md); an agent set's `in_book` reads as factual/unanswerable.

    Raises:
        InvalidInputError: a line is not valid JSON, or lacks a field, or has an unknown kind.
    """
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            if "kind" not in raw and "in_book" in raw:  # the agent set: in-book or not, no gold files
                raw = {**raw, "kind": "factual" if raw["in_book"] else "unanswerable", "gold_files": []}
            kind = raw["kind"]
            if kind not in KINDS:
                raise ValueError(kind)
            questions.append(Question(question=str(raw["question"]), gold_files=tuple(raw["gold_files"]),
                                      answer_keywords=tuple(k.lower() for k in raw["answer_keywords"]),
                                      kind=kind))
        except (ValueError, KeyError, TypeError) as exc:
            raise InvalidInputError(f"{path.name} line {number}: not a question ({type(exc).__name__})",
                                    code="INVALID_QUESTION_SET", field="questions") from None
    return questions



def hit_at(files: Sequence[str], q: Question, k: int = 5) -> bool:
    """Any gold file in the first `k` (every gold file, for a multi-part question)."""
    top = set(files[:k])
    if q.kind == "multi":
        return all(g in top for g in q.gold_files)
    return any(g in top for g in q.gold_files)



def reciprocal_rank(files: Sequence[str], gold: Iterable[str], k: int = 10) -> float:
    wanted = set(gold)
    for rank, f in enumerate(files[:k], start=1):
        if f in wanted:
            return 1.0 / rank
    return 0.0



def evidence(texts: Sequence[str], keywords: Sequence[str]) -> float:
    """Share of `keywords` found (case-insensitively) anywhere in `texts`; 1.0 when there are none."""
    if not keywords:
        return 1.0
    haystack = "\n".join(texts).lower()
    return sum(1 for kw in keywords if kw.lower() in haystack) / len(keywords)



def roc_auc(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """P(random positive scores above random negative), ties counting half; None if a side is empty."""
    if not positives or not negatives:
        return None
    wins = 0.0
    for p in positives:
        for n in negatives:
            wins += 1.0 if p > n else 0.5 if p == n else 0.0
    return wins / (len(positives) * len(negatives))
