"""Answer sets (eval/answers-*.jsonl): questions with the book section and passage that answer them.

Format: eval/README.md ("Answer sets with gold passages"). `check_case` verifies a line against the
book (the heading exists, the passage, keywords, label and term are in its section), for
`eval/check_keywords.py` and the tests.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from bookrag.devtools.book_sections import Book, Section
from bookrag.devtools.questions import KINDS, Kind, Question
from bookrag.errors import InvalidInputError

Shape = str
# "summary": "summarize X" / "what is this chapter about", answered from X's own pages (issue 37).
SHAPES: tuple[Shape, ...] = ("definition", "list", "table", "short-section", "code", "multi-part", "plain", "summary")
LABELLED: tuple[Shape, ...] = ("list", "table")
MAX_PASSAGE = 300


@dataclass(frozen=True, slots=True)
class Gold:
    """One section that answers (a part of) the question: its file, heading and an excerpt."""

    file: str
    heading: str
    passage: str


@dataclass(frozen=True, slots=True)
class AnswerCase:
    question: Question
    shape: Shape
    gold: tuple[Gold, ...]  # empty for an unanswerable question; the first is the main part
    label: str = ""  # list/table gold: the item's label a good answer keeps ("simbody")
    term: str = ""  # definition: the X of "What is X?"

    @property
    def answerable(self) -> bool:
        return self.question.kind != "unanswerable"


def has_gold_passages(path: Path) -> bool:
    """Whether a question set is an answer set of this format (a line names a gold heading)."""
    return '"gold_heading"' in path.read_text(encoding="utf-8")


def parse_case(raw: dict[str, Any]) -> AnswerCase:
    """One line as an AnswerCase. Raises KeyError, TypeError or ValueError on a malformed line."""
    kind: Kind = raw["kind"]
    if kind not in get_args(Kind):
        raise ValueError(kind)
    shape = raw.get("shape") or "plain"
    if shape not in SHAPES:
        raise ValueError(shape)
    gold: tuple[Gold, ...] = ()
    if kind != "unanswerable":
        more = (Gold(g["gold_file"], g["gold_heading"], g["gold_passage"]) for g in raw.get("more_gold", ()))
        gold = (Gold(raw["gold_file"], raw["gold_heading"], raw["gold_passage"]), *more)
    files = tuple(dict.fromkeys(g.file for g in gold))
    question = Question(str(raw["question"]), files, tuple(k.lower() for k in raw["answer_keywords"]), kind)
    return AnswerCase(question, shape, gold, str(raw.get("label", "")).lower(), str(raw.get("term", "")).lower())


def load_answer_cases(path: Path) -> list[AnswerCase]:
    """Raises InvalidInputError naming the first malformed line."""
    cases = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            cases.append(parse_case(json.loads(line)))
        except (ValueError, KeyError, TypeError) as exc:
            raise InvalidInputError(f"{path.name} line {number}: not an answer case ({type(exc).__name__})",
                                    code="INVALID_QUESTION_SET", field="questions") from None
    return cases


def gold_sections(book: Book, case: AnswerCase) -> list[Section]:
    """Every section (subsections included) of every gold part of `case`."""
    return [s for g in case.gold for s in book.gold(g.file, g.heading, g.passage)]


def _squash(text: str) -> str:
    return " ".join(text.split()).lower()


def check_case(book: Book, raw: dict[str, Any]) -> list[str]:
    """What is wrong with one line against the book ([] when nothing)."""
    try:
        case = parse_case(raw)
    except (ValueError, KeyError, TypeError) as exc:
        return [f"malformed ({type(exc).__name__}: {exc})"]
    problems = []
    if not case.answerable:
        return ["an unanswerable question has gold"] if case.gold or case.question.answer_keywords else []
    if case.shape in LABELLED and not case.label:
        problems.append(f"a {case.shape} question needs a label")
    if case.shape == "definition" and not case.term:
        problems.append("a definition question needs a term")
    texts: list[str] = []
    paths: list[str] = []
    for g in case.gold:
        if not book.file(g.file):
            problems.append(f"gold file {g.file} missing")
            continue
        sections = book.gold(g.file, g.heading, g.passage)
        if not sections:
            problems.append(f"heading {g.heading!r} not in {g.file}")
            continue
        text = _squash("\n".join(s.text for s in sections))
        texts.append(text)
        paths.append(_squash(" ".join(h for s in sections for h in s.path)))
        if len(g.passage) > MAX_PASSAGE or _squash(g.passage) not in text:
            problems.append(f"passage not verbatim in {g.heading!r} (or over {MAX_PASSAGE} chars): {g.passage[:60]!r}")
    # A label or term may be a heading above the gold section ("#### Simbody" over "- **Pros**: ...").
    for word, what, where in [(k, "keyword", texts) for k in case.question.answer_keywords] + \
                             [(w, "label", texts + paths) for w in [case.label] if w] + \
                             [(w, "term", texts + paths) for w in [case.term] if w]:
        if word != word.lower() or not any(word in t for t in where):
            problems.append(f"{what} {word!r} not verbatim, lower-case, in a gold section")
    if case.question.kind == "multi" and len(case.gold) < 2:
        problems.append("multi needs two gold sections")
    return problems


__all__ = ["KINDS", "LABELLED", "SHAPES", "AnswerCase", "Gold", "check_case", "gold_sections", "has_gold_passages",
           "load_answer_cases", "parse_case"]
