"""Answer evaluation (`bookrag eval --answers`): the agent answers every question as a caller would get
it (its own retrieval, threshold and answerer). Per kind:

- answered / refused: share of questions answered, or refused;
- keyword_recall: mean share of a question's `answer_keywords` found (case-insensitively) in the answer;
  a refusal scores 0. Over answerable questions only;
- with_keyword: share of answerable questions whose answer holds at least one keyword;
- citation_precision: share of citations whose evidence (the quoted spans, or the chunk's text when an
  answerer gives no spans) contains a keyword, or that lie in a gold file;
- citations_retrieved: share of citations naming a chunk that retrieval returned for the question.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bookrag.devtools.questions import ANSWERABLE, KINDS, Question

if TYPE_CHECKING:
    from bookrag.answering.agent import BookRAGAgent


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
        return out

    def as_dict(self, *, per_question: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {"answerer": self.answerer, "summary": self.summary()}
        if per_question:
            data["questions"] = [
                {"question": r.question.question, "kind": r.question.kind, "refused": r.refused,
                 "refusal_reason": r.refusal_reason, "keyword_recall": round(r.keyword_recall, 4),
                 "citations": r.citations, "precise_citations": r.precise, "answer": r.answer}
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



def run_answers(agent: BookRAGAgent, questions: Sequence[Question]) -> AnswerReport:
    """Ask the agent every question. Raises what `BookRAGAgent.run` raises."""
    from bookrag.answering.answerers.extractive import clause_hits
    from bookrag.answering.context import book_context

    report = AnswerReport(agent.answerer.name)
    for q in questions:
        started = time.perf_counter()
        response = agent.run(q.question)
        seconds = time.perf_counter() - started
        # What the agent retrieved: the question, and each clause the extractive answerer searches.
        retrieved = {h.chunk_id: h for h in book_context(agent.retriever, q.question)[1]}
        if agent.answerer.name == "extractive":
            for h in clause_hits(q.question, lambda text: book_context(agent.retriever, text)[1]):
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
        report.results.append(AnswerResult(
            question=q, answer=response.answer, refused=response.is_refusal, refusal_reason=response.refusal_reason,
            keyword_recall=recall, with_keyword=recall > 0, citations=len(cited), precise=precise,
            retrieved=in_retrieved, seconds=seconds))
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
