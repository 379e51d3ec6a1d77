"""Each hand-written answering step on both books' blind sets (issue 37): does it help on the book we never
tuned on too?

`run`: the answer eval of one book (`bookrag eval ... --answers`, in this process) with one step switched off
by replacing the function or pattern that decides it; `none` switches nothing off (the reference run). A step
stays only if switching it off makes some book's answers worse; every switch is listed in `STEPS`.

`report`: the runs in a folder (`<book>-<step>.json`) as one table, both books side by side, each step's
figures against the reference run's, with the questions whose answers changed.

Usage:
  QDRANT_PATH=<store> EMBEDDING_PROVIDER=local LLM_PROVIDER=extractive \\
    python benchmarks/answering_steps.py run STEP OUT.json -- eval/answers-redux.jsonl --docs <docs> \\
    --conversations eval/conversations-redux.jsonl
  python benchmarks/answering_steps.py report FOLDER benchmarks/answering-steps.md
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

BOOKS = ("textbook-2-blind", "redux")


def _scaffolding_off() -> None:
    from bookrag.answering.answerers import candidates
    candidates.is_scaffolding = lambda *_a, **_k: False  # type: ignore[attr-defined]


def _folder_page_off() -> None:
    from bookrag.answering.answerers import summary
    summary._FOLDER_PAGE = frozenset()  # type: ignore[misc]


def _interrogative_off() -> None:
    from bookrag.answering.answerers import questions
    questions._INTERROGATIVE = re.compile(r"(?!)")  # type: ignore[misc]


def _answer_type_off() -> None:
    from bookrag.answering.answerers import questions
    questions.answer_type = lambda _q: ""  # type: ignore[assignment]


def _list_question_off() -> None:
    from bookrag.answering.answerers import questions
    questions._LIST_QUESTION = re.compile(r"(?!)")  # type: ignore[misc]


def _code_always() -> None:
    from bookrag.answering.answerers import questions
    questions._CODE_QUESTION = re.compile(r"")  # type: ignore[misc]


def _answer_focus_off() -> None:
    from bookrag.answering import conversation
    conversation.answer_focus = lambda _q, _a: ""  # type: ignore[assignment]


# step -> (what it decides, how it is switched off)
STEPS: dict[str, tuple[str, Callable[[], None]]] = {
    "none": ("(reference: every step on)", lambda: None),
    "scaffolding": ("course scaffolding (objectives, exercises, quiz items, references) never leads "
                    "(answerers.scaffolding)", _scaffolding_off),
    "folder-page": ("a summary's page: a folder's own page (index, README, overview) among equals "
                    "(summary._FOLDER_PAGE)", _folder_page_off),
    "interrogative": ("the question's opening when/why/how/where meets a heading phrased as that question "
                      "(questions._INTERROGATIVE)", _interrogative_off),
    "answer-type": ("\"what materials should I ...\": the kind asked for by name, met by a heading "
                    "(questions._ANSWER_TYPE)", _answer_type_off),
    "list-question": ("a question for a list keeps a list with its definition and little else "
                      "(questions._LIST_QUESTION)", _list_question_off),
    "code-question": ("code blocks only for a question that asks for code (questions._CODE_QUESTION); off = "
                      "always shown", _code_always),
    "answer-focus": ("a follow-up's \"it\" after \"which engine ...?\" is the engine the answer picked "
                     "(conversation.answer_focus)", _answer_focus_off),
}


def run(step: str, out: Path, eval_args: list[str]) -> None:
    STEPS[step][1]()
    from bookrag.devtools.cli import app
    app(["eval", *eval_args, "--modes", "default", "--answers", "--json", str(out)], standalone_mode=False)


def _figures(data: dict[str, Any]) -> dict[str, float | None]:
    s = data["answers"]["summary"]
    o = s["shapes"]["overall"]
    conv = ((data.get("conversations") or {}).get("last_turn_answers") or {}).get("with_history") or {}
    return {"fact": s["answerable"]["with_keyword"], "recall": s["answerable"]["keyword_recall"],
            "lead": o["lead_from_gold"], "false refusals": o["false_refusals"],
            "off-book refused": s["unanswerable"]["refused"], "follow-ups' fact": conv.get("with_keyword")}


def _changed(ref: dict[str, Any], other: dict[str, Any]) -> int:
    before = {q["question"]: q.get("answer") for q in ref["answers"]["questions"]}
    n: int = sum(before.get(q["question"]) != q.get("answer") for q in other["answers"]["questions"])
    turns = {c["id"]: c.get("answer") for c in (ref.get("conversations") or {}).get("per_last_turn", [])}
    n += sum(turns.get(c["id"]) != c.get("answer")
             for c in (other.get("conversations") or {}).get("per_last_turn", []))
    return n


def _cell(ref: float | None, now: float | None) -> str:
    if now is None:
        return "-"
    if ref is None or abs(now - ref) < 0.0005:
        return f"{now:.2f}"
    return f"{now:.2f} ({now - ref:+.2f})"


def report(folder: Path, out: Path) -> None:
    runs = {(book, step): json.loads((folder / f"{book}-{step}.json").read_text(encoding="utf-8"))
            for book in BOOKS for step in STEPS if (folder / f"{book}-{step}.json").exists()}
    names = list(_figures(runs[(BOOKS[0], "none")]))
    lines = ["| step off | " + " | ".join(f"{b}: {n}" for b in BOOKS for n in names) + " | answers changed |",
             "| --- |" + " ---: |" * (len(names) * len(BOOKS) + 1)]
    for step, (what, _) in STEPS.items():
        if not all((b, step) in runs for b in BOOKS):
            continue
        cells = []
        for b in BOOKS:
            ref, now = _figures(runs[(b, "none")]), _figures(runs[(b, step)])
            cells += [_cell(ref[n], now[n]) for n in names]
        changed = " / ".join(str(_changed(runs[(b, "none")], runs[(b, step)])) for b in BOOKS)
        lines.append(f"| {step}: {what} | " + " | ".join(cells) + f" | {changed} |")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2], Path(sys.argv[3]), sys.argv[5:] if sys.argv[4] == "--" else sys.argv[4:])
    else:
        report(Path(sys.argv[2]), Path(sys.argv[3]))
