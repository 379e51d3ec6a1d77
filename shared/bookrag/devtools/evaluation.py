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
  `auc.gate` is the same for the agent's answerable-or-refuse gate (`answering.gate`): the best
  evidence score of the top 5 (cosine plus the question's words their headings and labels carry).
- with `answers=True`, the agent's answers too (see "answers" below): answered, refused, keyword
  recall, answers holding a keyword, citation precision.
- seconds per query: retrieval time with the query embedding already cached (the embedding costs the
  same in every mode and is reported once, as `embed_seconds_per_query`).

The top 5 comes from its own `top_k=5` search, as a caller asking for 5 would get it, not from a
prefix of the top 10 (the candidate pool and the diversity caps depend on top_k).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bookrag.devtools.answer_eval import AnswerReport, run_answers
from bookrag.devtools.questions import (
    ANSWERABLE,
    KINDS,
    Question,
    evidence,
    hit_at,
    load_questions,
    reciprocal_rank,
    roc_auc,
)
from bookrag.errors import InvalidInputError

if TYPE_CHECKING:
    from bookrag.adapters.store.port import Fusion
    from bookrag.config.settings import RetrievalMode, Settings
    from bookrag.domain.models import SearchHit
    from bookrag.retrieval.retriever import Order, Retriever







# -- metrics (pure) --------------------------------------------------------------------------------










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
    gate_score: float
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
        gate = {k: [r.gate_score for r in self.results if r.question.kind == k] for k in KINDS}
        out["auc"] = {"overall": _round(roc_auc(top1["factual"] + top1["multi"], top1["unanswerable"])),
                      "factual": _round(roc_auc(top1["factual"], top1["unanswerable"])),
                      "multi": _round(roc_auc(top1["multi"], top1["unanswerable"])),
                      "max_cosine": _round(roc_auc(best["factual"] + best["multi"], best["unanswerable"])),
                      "gate": _round(roc_auc(gate["factual"] + gate["multi"], gate["unanswerable"]))}
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
    from bookrag.answering.gate import weigh
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
        gate_score=max((e.score for e in weigh(q.question, top5)), default=0.0),
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
                                  "gate_score": round(self.modes[name].results[i].gate_score, 4),
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
    from bookrag.devtools.answer_sets import has_gold_passages, load_answer_cases
    from bookrag.devtools.book_sections import Book
    from bookrag.ingestion.ingestor import Ingestor
    from bookrag.services.container import container_for

    cases = load_answer_cases(questions_path) if has_gold_passages(questions_path) else []
    if cases and answers and docs is None:
        raise InvalidInputError(f"{questions_path.name} scores answers against the book's sections: give --docs",
                                code="INVALID_QUESTION_SET", field="docs")
    questions = [c.question for c in cases] if cases else load_questions(questions_path)
    container = container_for(settings)
    if docs is not None:
        Ingestor(settings, container.embedder, container.store).run(docs)
    report = run_evaluation(container.retriever, questions, modes)
    report.config["question_set"] = questions_path.name
    if answers:
        book = Book(docs) if cases and docs is not None else None
        report.answers = run_answers(container.agent, questions, cases=cases, book=book)
        report.config["answerer"] = report.answers.answerer
    return report
