"""Retrieval evaluation: a question set (eval/*.jsonl) against the configured store, mode by mode.

Every mode runs on the same stored chunks in one process, so the figures compare ranking alone.
Metrics, per question kind and overall:

- hit@5: a gold file among the top 5 (for `multi` questions: every gold file).
- MRR@10: reciprocal rank of the first gold file in the top 10, in the order the service returns
  (the ranker's order, scores descending); `mrr@10_cosine` is the same with the top 10 re-sorted by
  cosine similarity, as the service did before (see `bookrag.retrieval.retriever`).
- evidence@5: share of the answer keywords found, case-insensitively, in the top-5 texts together.
- AUC: ROC AUC of the top-1 similarity score separating answerable (factual, multi) from unanswerable
  questions: the chance that an answerable question's first hit scores above an unanswerable one's.
- with `answers=True`, the agent's answers too (see "answers" below): answered, refused, keyword
  recall, answers holding a keyword, citation precision.
- seconds per query: retrieval time with the query embedding already cached (the embedding costs the
  same in every mode and is reported once, as `embed_seconds_per_query`).

The top 5 comes from its own `top_k=5` search, as a caller asking for 5 would get it, not from a
prefix of the top 10 (the candidate pool and the diversity caps depend on top_k).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from bookrag.errors import InvalidInputError

if TYPE_CHECKING:
    from bookrag.adapters.qdrant.store import Fusion
    from bookrag.answering.agent import BookRAGAgent
    from bookrag.config.settings import RetrievalMode, Settings
    from bookrag.domain.models import SearchHit
    from bookrag.retrieval.retriever import Order, Retriever

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


# -- metrics (pure) --------------------------------------------------------------------------------


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


# -- modes -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModeSpec:
    """How one evaluated mode calls the retriever. `None` fields mean: whatever the service does."""

    mode: RetrievalMode | None
    diversify: bool = True
    rerank: bool | None = False
    fusion: Fusion | None = None


MODES: dict[str, ModeSpec] = {
    "bm25": ModeSpec("sparse", diversify=False),
    "dense": ModeSpec("dense", diversify=False),
    "hybrid": ModeSpec("hybrid", diversify=False),
    "hybrid+diversity": ModeSpec("hybrid", diversify=True),
    "hybrid+dbsf": ModeSpec("hybrid", diversify=True, fusion="dbsf"),
    "hybrid+rerank": ModeSpec("hybrid", diversify=True, rerank=True),
    # Exactly what the service does with SearchOptions() defaults under the current settings.
    "default": ModeSpec(None, diversify=True, rerank=None),
}
DEFAULT_MODES = ("bm25", "dense", "hybrid", "hybrid+diversity", "default")


def parse_modes(text: str) -> list[str]:
    """Raises `InvalidInputError` naming an unknown mode."""
    names = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in names if m not in MODES]
    if unknown or not names:
        raise InvalidInputError(f"Unknown mode(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(MODES)}",
                                code="INVALID_MODE", field="modes")
    return names


# -- running ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class QuestionResult:
    question: Question
    files5: list[str]
    files10: list[str]
    files10_cosine: list[str]
    top1_score: float
    max_cosine: float
    gold_cosines: list[float]
    hit5: bool
    rr10: float
    rr10_cosine: float
    evidence5: float
    seconds: float


@dataclass(slots=True)
class ModeReport:
    name: str
    results: list[QuestionResult] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"overall": _summarise([r for r in self.results if r.question.kind in ANSWERABLE])}
        for kind in ANSWERABLE:
            rows = [r for r in self.results if r.question.kind == kind]
            if rows:
                out[kind] = _summarise(rows)
        top1 = {k: [r.top1_score for r in self.results if r.question.kind == k] for k in KINDS}
        best = {k: [r.max_cosine for r in self.results if r.question.kind == k] for k in KINDS}
        out["auc"] = {"overall": _round(roc_auc(top1["factual"] + top1["multi"], top1["unanswerable"])),
                      "factual": _round(roc_auc(top1["factual"], top1["unanswerable"])),
                      "multi": _round(roc_auc(top1["multi"], top1["unanswerable"])),
                      "max_cosine": _round(roc_auc(best["factual"] + best["multi"], best["unanswerable"]))}
        out["top1_score"] = {k: _quantiles(v) for k, v in top1.items() if v}
        out["max_cosine"] = {k: _quantiles(v) for k, v in best.items() if v}
        out["seconds_per_query"] = round(statistics.fmean(r.seconds for r in self.results), 5) \
            if self.results else 0.0
        return out


def _summarise(rows: list[QuestionResult]) -> dict[str, Any]:
    if not rows:
        return {"n": 0}
    return {
        "n": len(rows),
        "hit@5": round(statistics.fmean(r.hit5 for r in rows), 4),
        "mrr@10": round(statistics.fmean(r.rr10 for r in rows), 4),
        "mrr@10_cosine": round(statistics.fmean(r.rr10_cosine for r in rows), 4),
        "evidence@5": round(statistics.fmean(r.evidence5 for r in rows), 4),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)

    def q(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 4)

    return {"min": round(ordered[0], 4), "p10": q(0.10), "median": q(0.5), "p90": q(0.9),
            "max": round(ordered[-1], 4)}


def evaluate_question(retriever: Retriever, q: Question, spec: ModeSpec) -> QuestionResult:
    from bookrag.retrieval.retriever import SearchOptions

    def run(top_k: int, order: Order = "rank") -> list[SearchHit]:
        opts = SearchOptions(top_k=top_k, mode=spec.mode, diversify=spec.diversify, rerank=spec.rerank,
                             order=order, fusion=spec.fusion)
        return retriever.search(q.question, opts).hits

    started = time.perf_counter()
    top5 = run(5)
    seconds = time.perf_counter() - started
    files5 = [h.source_file for h in top5]
    files10 = [h.source_file for h in run(10)]
    files10_cosine = [h.source_file for h in run(10, "score")]
    # Sorted by cosine, each score is the chunk's own cosine: what `min_score` compares against.
    by_cosine = run(5, "score")
    gold = set(q.gold_files)
    return QuestionResult(
        question=q, files5=files5, files10=files10, files10_cosine=files10_cosine,
        top1_score=top5[0].score if top5 else 0.0, max_cosine=by_cosine[0].score if by_cosine else 0.0,
        gold_cosines=[h.score for h in by_cosine if h.source_file in gold],
        hit5=hit_at(files5, q), rr10=reciprocal_rank(files10, gold),
        rr10_cosine=reciprocal_rank(files10_cosine, gold),
        evidence5=evidence([h.text for h in top5], q.answer_keywords), seconds=seconds,
    )


@dataclass(slots=True)
class EvalReport:
    modes: dict[str, ModeReport]
    config: dict[str, Any]
    embed_seconds_per_query: float
    answers: AnswerReport | None = None

    def thresholds(self, mode: str) -> list[dict[str, float]]:
        """For candidate minimum scores, on the top 5: the share of gold chunks kept, of answerable
        questions keeping a gold chunk, and of unanswerable questions left with no result at all.

        A threshold compares each chunk's cosine, so a question gets no result exactly when its best
        cosine is below it (approximated by the best of the top 5).
        """
        rows = self.modes[mode].results
        answerable = [r for r in rows if r.question.kind in ANSWERABLE]
        unanswerable = [r for r in rows if r.question.kind == "unanswerable"]
        gold = [s for r in answerable for s in r.gold_cosines]
        out = []
        for step in range(10, 71):
            t = step / 100
            out.append({
                "threshold": t,
                "gold_chunks_kept": _share(sum(s >= t for s in gold), len(gold)),
                "answerable_keeping_a_gold_chunk": _share(
                    sum(any(s >= t for s in r.gold_cosines) for r in answerable), len(answerable)),
                "answerable_with_any_result": _share(sum(r.max_cosine >= t for r in answerable), len(answerable)),
                "unanswerable_refused": _share(sum(r.max_cosine < t for r in unanswerable), len(unanswerable)),
            })
        return out

    def as_dict(self, *, per_question: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "config": self.config,
            "embed_seconds_per_query": round(self.embed_seconds_per_query, 5),
            "modes": {name: report.summary() for name, report in self.modes.items()},
        }
        if "default" in self.modes:
            data["thresholds_default_mode"] = self.thresholds("default")
        if self.answers is not None:
            data["answers"] = self.answers.as_dict(per_question=per_question)
        if per_question:
            data["questions"] = [
                {"question": r.question.question, "kind": r.question.kind, "gold_files": list(r.question.gold_files),
                 "modes": {name: {"hit@5": self.modes[name].results[i].hit5,
                                  "rr@10": round(self.modes[name].results[i].rr10, 4),
                                  "evidence@5": round(self.modes[name].results[i].evidence5, 4),
                                  "top1_score": round(self.modes[name].results[i].top1_score, 4),
                                  "top5_files": self.modes[name].results[i].files5}
                           for name in self.modes}}
                for i, r in enumerate(next(iter(self.modes.values())).results)
            ]
        return data


def _share(n: int, total: int) -> float:
    return round(n / total, 4) if total else 0.0


def run_evaluation(retriever: Retriever, questions: Sequence[Question], modes: Sequence[str]) -> EvalReport:
    """Evaluate every mode on the same store. Raises what `Retriever.search` raises."""
    started = time.perf_counter()
    for q in questions:  # warm the query cache: the embedding is the same work in every mode
        retriever.embedder.embed_query(q.question)
    embed_seconds = (time.perf_counter() - started) / max(1, len(questions))
    reports = {}
    for name in modes:
        spec = MODES[name]
        reports[name] = ModeReport(name, [evaluate_question(retriever, q, spec) for q in questions])
    s = retriever.settings
    config = {
        "embedder": retriever.embedder.name, "chunks": retriever.store.count(),
        "questions": len(questions), "retrieval_mode": s.retrieval_mode, "rrf_k": s.rrf_k,
        "diversity_max_per_section": s.diversity_max_per_section, "rerank_model": s.cohere_rerank_model,
        "chunk_max_tokens": s.chunk_max_tokens, "chunk_overlap_tokens": s.chunk_overlap_tokens,
        **retriever.describe(),
    }
    return EvalReport(reports, config, embed_seconds)


def render_table(report: EvalReport) -> Any:
    """A rich Table of the summary (rich is a CLI dependency: imported here, not at module load)."""
    from rich.table import Table

    table = Table(title=f"retrieval eval: {report.config.get('questions')} questions, "
                        f"{report.config.get('chunks')} chunks, {report.config.get('embedder')}")
    for col in ("mode", "kind", "n", "hit@5", "MRR@10", "MRR@10 cos", "evidence@5", "AUC", "s/query"):
        table.add_column(col, justify="left" if col in ("mode", "kind") else "right")
    for name, mode in report.modes.items():
        summary = mode.summary()
        for kind in ("overall", *ANSWERABLE):
            row = summary.get(kind)
            if not row or not row.get("n"):
                continue
            auc = summary["auc"].get(kind)
            table.add_row(name if kind == "overall" else "", kind, str(row["n"]), f"{row['hit@5']:.3f}",
                          f"{row['mrr@10']:.3f}", f"{row['mrr@10_cosine']:.3f}", f"{row['evidence@5']:.3f}",
                          "-" if auc is None else f"{auc:.3f}",
                          f"{summary['seconds_per_query']:.4f}" if kind == "overall" else "")
    return table


def evaluate_files(settings: Settings, questions_path: Path, modes: Sequence[str],
                   docs: Path | None = None, *, answers: bool = False) -> EvalReport:
    """Load the questions, ingest `docs` into the configured store if given, and evaluate `modes`.

    Raises:
        InvalidInputError: a bad question set or mode.
        DocumentError, EmbeddingError, StoreError: from ingest or retrieval.
    """
    from bookrag.ingestion.ingestor import Ingestor
    from bookrag.services.container import container_for

    questions = load_questions(questions_path)
    container = container_for(settings)
    if docs is not None:
        Ingestor(settings, container.embedder, container.store).run(docs)
    report = run_evaluation(container.retriever, questions, modes)
    report.config["question_set"] = questions_path.name
    if answers:
        report.answers = run_answers(container.agent, questions)
        report.config["answerer"] = report.answers.answerer
    return report


# -- answers ---------------------------------------------------------------------------------------
#
# The agent answers every question as a caller would get it (its own retrieval, threshold and
# answerer). Per kind:
# - answered / refused: share of questions answered, or refused.
# - keyword_recall: mean share of a question's `answer_keywords` found (case-insensitively) in the
#   answer; a refusal scores 0. Over answerable questions only.
# - with_keyword: share of answerable questions whose answer holds at least one keyword.
# - citation_precision: share of citations whose evidence (the quoted spans, or the chunk's text when
#   an answerer gives no spans) contains a keyword, or that lie in a gold file.
# - citations_retrieved: share of citations naming a chunk that retrieval returned for the question.


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
    from bookrag.answering.context import book_context

    report = AnswerReport(agent.answerer.name)
    for q in questions:
        started = time.perf_counter()
        response = agent.run(q.question)
        seconds = time.perf_counter() - started
        retrieved = {h.chunk_id: h for h in book_context(agent.retriever, q.question)[1]}
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
