"""The conversation and selection sets (eval/README.md): retrieval of follow-ups and answers of last turns.

A turn may carry a selection (`selected_text`, `source_file`): it is asked with its passage, and
answered (last turn) but not searched alone. Follow-ups (every other turn after the first): hit@5 of
the service's default search (`SearchOptions(top_k=5)`)
for the follow-up as written (`without`), for the standalone question the configured rewriter makes
from the earlier turns (`with_history`; the earlier answers are the agent's own), and for the
question written out in full (`full`). The last turn of each conversation is answered by the agent
with its history and, for comparison, written out in full; both get the `--answers` metrics
(keyword recall, answers holding a keyword, refused, citation precision).

Selections: whether the selection was recognised as the book's text (`in_book` agreement), whether
the gold file is among the cited (or nearest) sources, and the answer's keyword recall.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bookrag.devtools.answer_eval import citation_is_precise, keyword_recall
from bookrag.devtools.questions import Question, hit_at
from bookrag.errors import InvalidInputError

if TYPE_CHECKING:
    from bookrag.answering.agent import BookRAGAgent
    from bookrag.contracts.agent import Response
    from bookrag.devtools.book_sections import Book
    from bookrag.domain.conversation import Selection


@dataclass(frozen=True, slots=True)
class ConvTurn:
    question: str
    full_question: str
    gold_files: tuple[str, ...]
    answer_keywords: tuple[str, ...]
    gold_heading: str = ""  # the section of the first gold file that answers (set C): the reader's checks
    selection: Selection | None = None  # a passage the reader selected with this turn (set C)

    def as_question(self) -> Question:
        return Question(self.full_question, self.gold_files, self.answer_keywords, "factual")


@dataclass(frozen=True, slots=True)
class ConvCase:
    id: str
    pattern: str
    turns: tuple[ConvTurn, ...]


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError:
                raise InvalidInputError(f"{path.name} line {number}: not JSON", code="INVALID_QUESTION_SET",
                                        field="questions") from None
    return out


def _turn(t: dict[str, Any]) -> ConvTurn:
    from bookrag.domain.conversation import Selection

    selection = Selection(t["selected_text"], t.get("source_url"), t.get("source_file")) \
        if t.get("selected_text") else None
    return ConvTurn(t["question"], t.get("full_question") or t["question"], tuple(t["gold_files"]),
                    tuple(k.lower() for k in t["answer_keywords"]), str(t.get("gold_heading", "")), selection)


def load_conversations(path: Path) -> list[ConvCase]:
    try:
        return [ConvCase(str(raw["id"]), str(raw.get("pattern", "")), tuple(_turn(t) for t in raw["turns"]))
                for raw in _lines(path)]
    except (KeyError, TypeError) as exc:
        raise InvalidInputError(f"{path.name}: not a conversation set ({type(exc).__name__})",
                                code="INVALID_QUESTION_SET", field="questions") from None


def _answer_metrics(response: Response, q: Question) -> dict[str, Any]:
    cited = [] if response.is_refusal else response.sources
    precise = sum(citation_is_precise([x.text for x in s.quotes], s.source_file, q) for s in cited)
    recall = 0.0 if response.is_refusal else keyword_recall(response.answer, q.answer_keywords)
    return {"refused": response.is_refusal, "keyword_recall": recall, "with_keyword": recall > 0,
            "citations": len(cited), "precise": precise}


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    citations = sum(r["citations"] for r in rows)
    return {"n": len(rows), "keyword_recall": round(statistics.fmean(r["keyword_recall"] for r in rows), 4),
            "with_keyword": round(statistics.fmean(r["with_keyword"] for r in rows), 4),
            "refused": round(statistics.fmean(r["refused"] for r in rows), 4),
            "citation_precision": round(sum(r["precise"] for r in rows) / citations, 4) if citations else None}


def _reader_checks(book: Book | None, turn: ConvTurn, response: Response) -> dict[str, Any]:
    """The reader's checks (`answer_quality`) of a last turn with a gold heading, asked in full."""
    from bookrag.devtools.answer_quality import as_dict, score_answer

    if book is None or not turn.gold_heading or not turn.gold_files:
        return {}
    gold = book.gold(turn.gold_files[0], turn.gold_heading)
    return {"quality": as_dict(score_answer(book, response, gold, turn.full_question))}


def _reader_summary(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    from bookrag.devtools.answer_quality import Quality, summarise

    scored = [r for r in rows if "quality" in r]
    if not scored:
        return None
    return summarise([(True, r["refused"], r["keyword_recall"], Quality(**r["quality"])) for r in scored])


def run_conversations(agent: BookRAGAgent, cases: list[ConvCase], book: Book | None = None) -> dict[str, Any]:
    from bookrag.domain.conversation import Conversation, Turn
    from bookrag.domain.deadline import Deadline
    from bookrag.retrieval.retriever import SearchOptions

    def files(text: str) -> list[str]:
        return [h.source_file for h in agent.retriever.search(text, SearchOptions(top_k=5)).hits]

    follow_ups: list[dict[str, Any]] = []
    last_with: list[dict[str, Any]] = []
    last_full: list[dict[str, Any]] = []
    for case in cases:
        history: list[Turn] = []
        for n, turn in enumerate(case.turns):
            q = turn.as_question()
            conversation = Conversation(history=tuple(history), selection=turn.selection) \
                if history or turn.selection else None
            response = agent.run(turn.question, conversation)
            if n and turn.selection is None:  # a selection's question is searched with its passage, not alone
                standalone = agent.rewriter.standalone(turn.question, history, Deadline(20.0))
                follow_ups.append({"id": case.id, "turn": n + 1, "pattern": case.pattern, "question": turn.question,
                                   "standalone": standalone, "full": turn.full_question,
                                   "hit@5": {"with_history": hit_at(files(standalone), q),
                                             "without": hit_at(files(turn.question), q),
                                             "full": hit_at(files(turn.full_question), q)}})
            if n == len(case.turns) - 1:
                last_with.append({**_answer_metrics(response, q), "id": case.id, "pattern": case.pattern,
                                  "question": turn.question, "answer": response.answer,
                                  "selection_in_book": response.selection_in_book,
                                  **_reader_checks(book, turn, response)})
                full = Conversation(selection=turn.selection) if turn.selection else None
                last_full.append(_answer_metrics(agent.run(turn.full_question, full), q))
            history.append(Turn(turn.question, response.answer, response.standalone_question or turn.question))
    hit5 = {name: round(statistics.fmean(f["hit@5"][name] for f in follow_ups), 4)
            for name in ("with_history", "without", "full")}
    patterns = {p: _reader_summary([r for r in last_with if r["pattern"] == p])
                for p in dict.fromkeys(c.pattern for c in cases)}
    return {"conversations": len(cases), "follow_ups": len(follow_ups), "rewriter": agent.rewriter.name,
            "hit@5": hit5, "last_turn_answers": {"with_history": _summary(last_with), "full": _summary(last_full)},
            "last_turn_reader_checks": {p: v for p, v in patterns.items() if v is not None},
            "per_follow_up": follow_ups, "per_last_turn": last_with}


def run_selections(agent: BookRAGAgent, path: Path) -> dict[str, Any]:
    from bookrag.domain.conversation import Conversation, Selection

    rows = []
    for raw in _lines(path):
        selection = Selection(raw["selected_text"], raw.get("source_url"), raw.get("source_file"))
        response = agent.run(raw["question"], Conversation(selection=selection))
        q = Question(raw["question"], tuple(raw.get("gold_files", ())), tuple(raw.get("answer_keywords", ())),
                     "factual")
        rows.append({"question": raw["question"], "in_book": bool(raw["in_book"]),
                     "recognised": response.selection_in_book,
                     "gold_cited": bool(q.gold_files) and any(s.source_file in q.gold_files for s in response.sources),
                     "first_source": response.sources[0].source_file if response.sources else None,
                     **_answer_metrics(response, q)})
    in_book = [r for r in rows if r["in_book"]]
    return {"n": len(rows), "in_book": len(in_book),
            "recognised_correctly": round(statistics.fmean(r["recognised"] == r["in_book"] for r in rows), 4),
            "gold_file_in_sources": round(statistics.fmean(r["gold_cited"] for r in in_book), 4) if in_book else None,
            "answers_in_book": _summary(in_book) if in_book else None,
            "off_book_cited": sum(1 for r in rows if not r["in_book"] and r["recognised"]),
            "per_selection": rows}


def render(report: dict[str, Any]) -> Any:
    from rich.table import Table

    table = Table(title=f"conversations: {report['conversations']} ({report['follow_ups']} follow-ups), "
                        f"rewriter {report['rewriter']}")
    for col in ("measure", "with history", "without history", "written in full"):
        table.add_column(col, justify="left" if col == "measure" else "right")
    h = report["hit@5"]
    table.add_row("follow-up hit@5", f"{h['with_history']:.3f}", f"{h['without']:.3f}", f"{h['full']:.3f}")
    a = report["last_turn_answers"]
    for key in ("keyword_recall", "with_keyword", "refused", "citation_precision"):
        w, f = a["with_history"][key], a["full"][key]
        table.add_row(f"last turn {key}", "-" if w is None else f"{w:.3f}", "", "-" if f is None else f"{f:.3f}")
    return table
