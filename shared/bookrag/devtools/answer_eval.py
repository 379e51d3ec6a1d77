"""Answer evaluation (`bookrag eval --answers`): the agent answers every question as a caller would get
it (its own retrieval, threshold and answerer). Per kind:

- answered / refused: share of questions answered, or refused;
- keyword_recall: mean share of a question's `answer_keywords` found (case-insensitively) in the answer;
  a refusal scores 0. Over answerable questions only;
- with_keyword: share of answerable questions whose answer holds at least one keyword;
- citation_precision: share of citations whose evidence (the quoted spans, or the chunk's text when an
  answerer gives no spans) contains a keyword, or that lie in a gold file;
- citations_retrieved: share of citations naming a chunk that retrieval returned for the question.

An answer set with gold passages (`answer_sets`) is also scored as a reader would (`answer_quality`):
lead from the gold section, off-topic sentences, label kept, markup in prose, definition lead, false
refusals and false answers, per shape and overall (`summary()["shapes"]`).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bookrag.devtools.answer_quality import Quality, as_dict, score_answer, summarise
from bookrag.devtools.questions import ANSWERABLE, KINDS, Question

if TYPE_CHECKING:
    from bookrag.answering.agent import BookRAGAgent
    from bookrag.contracts.agent import Response
    from bookrag.devtools.answer_sets import AnswerCase
    from bookrag.devtools.book_sections import Book
    from bookrag.domain.models import SearchHit


@dataclass(slots=True)
class AnswerResult:
    question: Question
    answer: str
    refused: bool
    refusal_reason: str
    keyword_recall: float
    with_keyword: bool
    citations: int
    precise: int
    retrieved: int
    seconds: float
    shape: str = ""
    quality: Quality | None = None



@dataclass(slots=True)
class AnswerReport:
    answerer: str
    results: list[AnswerResult] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"answerable": _answer_summary([r for r in self.results
                                                            if r.question.kind in ANSWERABLE])}
        for kind in KINDS:
            rows = [r for r in self.results if r.question.kind == kind]
            if rows:
                out[kind] = _answer_summary(rows)
        scored = [r for r in self.results if r.quality is not None]
        if scored:
            out["shapes"] = {"overall": _quality_summary(scored)}
            for shape in dict.fromkeys(r.shape for r in scored if r.question.kind in ANSWERABLE):
                out["shapes"][shape] = _quality_summary([r for r in scored if r.shape == shape and
                                                         r.question.kind in ANSWERABLE])
            out["shapes"]["unanswerable"] = _quality_summary([r for r in scored if r.question.kind not in ANSWERABLE])
        return out

    def as_dict(self, *, per_question: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {"answerer": self.answerer, "summary": self.summary()}
        if per_question:
            data["questions"] = [
                {"question": r.question.question, "kind": r.question.kind, "refused": r.refused,
                 "refusal_reason": r.refusal_reason, "keyword_recall": round(r.keyword_recall, 4),
                 "citations": r.citations, "precise_citations": r.precise, "answer": r.answer,
                 **({"shape": r.shape, **as_dict(r.quality)} if r.quality is not None else {})}
                for r in self.results]
        return data



def keyword_recall(answer: str, keywords: Sequence[str]) -> float:
    """Share of `keywords` found case-insensitively in `answer`; 0.0 when there are none."""
    if not keywords:
        return 0.0
    text = answer.lower()
    return sum(1 for k in keywords if k.lower() in text) / len(keywords)



def citation_is_precise(evidence_texts: Sequence[str], source_file: str, q: Question) -> bool:
    """A citation is precise when its evidence holds an answer keyword, or it lies in a gold file."""
    if source_file in q.gold_files:
        return True
    haystack = "\n".join(evidence_texts).lower()
    return any(k.lower() in haystack for k in q.answer_keywords)



def _answer_summary(rows: list[AnswerResult]) -> dict[str, Any]:
    if not rows:
        return {"n": 0}
    answerable = [r for r in rows if r.question.kind in ANSWERABLE]
    citations = sum(r.citations for r in rows)
    out: dict[str, Any] = {
        "n": len(rows),
        "answered": round(statistics.fmean(not r.refused for r in rows), 4),
        "refused": round(statistics.fmean(r.refused for r in rows), 4),
        "citations": citations,
        "citation_precision": round(sum(r.precise for r in rows) / citations, 4) if citations else None,
        "citations_retrieved": round(sum(r.retrieved for r in rows) / citations, 4) if citations else None,
        "seconds_per_question": round(statistics.fmean(r.seconds for r in rows), 4),
    }
    if answerable:
        out["keyword_recall"] = round(statistics.fmean(r.keyword_recall for r in answerable), 4)
        out["with_keyword"] = round(statistics.fmean(r.with_keyword for r in answerable), 4)
    return out



def _quality_summary(rows: list[AnswerResult]) -> dict[str, Any]:
    return summarise([(r.question.kind in ANSWERABLE, r.refused, r.keyword_recall, r.quality or Quality())
                      for r in rows])


def score_case(book: Book, case: AnswerCase, response: Response, question: str | None = None) -> Quality:
    """The reader's checks of `response` to `case` (asked as `question`, by default the case's own)."""
    from bookrag.devtools.answer_sets import LABELLED, gold_sections

    return score_answer(book, response, gold_sections(book, case), question or case.question.question,
                        label=case.label if case.shape in LABELLED else "",
                        term=case.term if case.shape == "definition" else "",
                        definitions=[g.passage for g in case.gold] if case.shape == "definition" else ())


def run_answers(agent: BookRAGAgent, questions: Sequence[Question], *,
                cases: Sequence[AnswerCase] = (), book: Book | None = None) -> AnswerReport:
    """Ask the agent every question; with `cases` (one per question) and the `book`, score each answer
    as a reader would too. Raises what `BookRAGAgent.run` raises."""
    from bookrag.answering.answerers.extractive import clause_hits
    from bookrag.answering.context import book_context

    report = AnswerReport(agent.answerer.name)
    for at, q in enumerate(questions):
        started = time.perf_counter()
        response = agent.run(q.question)
        seconds = time.perf_counter() - started
        # What the agent retrieved: the question, and each clause the extractive answerer searches.
        retrieved = {h.chunk_id: h for h in book_context(agent.retriever, q.question)[1]}
        if agent.answerer.name == "extractive":
            def search(text: str, page: str | None = None, opening: int = 0) -> list[SearchHit]:
                return book_context(agent.retriever, text)[1]

            for h in clause_hits(q.question, search):
                retrieved.setdefault(h.chunk_id, h)
        precise = in_retrieved = 0
        cited = [] if response.is_refusal else response.sources
        for source in cited:
            hit = retrieved.get(source.chunk_id)
            in_retrieved += hit is not None
            quotes = [quote.text for quote in getattr(source, "quotes", None) or []]
            if not quotes:
                quotes = [hit.text] if hit is not None else []
            precise += citation_is_precise(quotes, source.source_file, q)
        recall = 0.0 if response.is_refusal else keyword_recall(response.answer, q.answer_keywords)
        case = cases[at] if cases and book is not None else None
        report.results.append(AnswerResult(
            question=q, answer=response.answer, refused=response.is_refusal, refusal_reason=response.refusal_reason,
            keyword_recall=recall, with_keyword=recall > 0, citations=len(cited), precise=precise,
            retrieved=in_retrieved, seconds=seconds,
            shape="" if case is None else case.shape if case.answerable else "unanswerable",
            quality=None if case is None or book is None else score_case(book, case, response)))
    return report



def render_answer_table(report: AnswerReport) -> Any:
    from rich.table import Table

    table = Table(title=f"answer eval: {len(report.results)} questions, answerer {report.answerer}")
    for col in ("kind", "n", "answered", "refused", "with keyword", "keyword recall", "citation precision",
                "cited∈retrieved"):
        table.add_column(col, justify="left" if col == "kind" else "right")

    def fmt(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    for kind, row in report.summary().items():
        if not row.get("n"):
            continue
        table.add_row(kind, str(row["n"]), fmt(row["answered"]), fmt(row["refused"]), fmt(row.get("with_keyword")),
                      fmt(row.get("keyword_recall")), fmt(row["citation_precision"]), fmt(row["citations_retrieved"]))
    return table


QUALITY_COLUMNS = ("n", "keyword_recall", "false_refusals", "false_answers", "lead_from_gold", "with_off_topic",
                   "label_kept", "with_markup_in_prose", "definition_lead")


def render_quality_table(report: AnswerReport) -> Any:
    """Per shape: the reader's checks (`answer_quality`); None when the set has no gold passages."""
    from rich.table import Table

    shapes = report.summary().get("shapes")
    if not shapes:
        return None
    table = Table(title="answers as a reader checks them (shares of answered answers, except n and false_*)")
    for col in ("shape", *QUALITY_COLUMNS):
        table.add_column(col.replace("_", " "), justify="left" if col == "shape" else "right")
    for shape, row in shapes.items():
        table.add_row(shape, *("-" if row.get(c) is None else str(row[c]) if c == "n" else f"{row[c]:.2f}"
                               for c in QUALITY_COLUMNS))
    return table
