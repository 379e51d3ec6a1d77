"""The owner's report's counts (volume per day, refusal rate, percentiles, votes per section) and its gap
clustering with the real local embedder: paraphrases in one cluster, topics apart."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from bookrag.domain.question_log import FeedbackRecord, LoggedSection, QueryRecord
from bookrag.services.insights import aggregate
from bookrag.services.insights.gaps import cluster_gaps, distinct_questions, is_gap, normalise

ZMP = LoggedSection(url="/docs/balance#zmp", title="Balance > ZMP", score=0.7)
PID = LoggedSection(url="/docs/control#pid", title="Control > PID", score=0.6)


def _at(day: str, hour: int = 12) -> float:
    return datetime.fromisoformat(f"{day}T{hour:02d}:00:00+00:00").timestamp()


def _record(n: int, *, at: float = 0.0, route: Any = "answer", outcome: Any = "answered", latency: float = 10.0,
            sections: tuple[LoggedSection, ...] = (ZMP,), question: str = "What is ZMP?",
            top: float | None = 0.6) -> QueryRecord:
    return QueryRecord(query_id=f"q{n}", at=at or _at("2025-03-01"), route=route, question=question,
                       book_version="v1", outcome=outcome,
                       refusal_reason="no_relevant_context" if outcome == "refused" else None, sections=sections,
                       latency_ms=latency, answerer="extractive", key_hash="anonymous", top_score=top)


def test_volume_per_day_fills_quiet_days_and_splits_outcomes() -> None:
    records = [_record(1, at=_at("2025-03-01", 0)), _record(2, at=_at("2025-03-01", 23), outcome="refused"),
               _record(3, at=_at("2025-03-04"), outcome="error")]
    days = aggregate.volume_per_day(records)
    assert [(d.day, d.questions, d.answered, d.refused, d.errors) for d in days] == [
        ("2025-03-01", 2, 1, 1, 0), ("2025-03-02", 0, 0, 0, 0), ("2025-03-03", 0, 0, 0, 0),
        ("2025-03-04", 1, 0, 0, 1)]


def test_refusal_rate_leaves_errors_out_and_is_per_route() -> None:
    records = [_record(1), _record(2, outcome="refused"), _record(3, outcome="refused"), _record(4, outcome="error"),
               _record(5, route="retrieve")]
    routes = {r.route: r for r in aggregate.route_stats(records)}
    assert routes["answer"].refusal_rate == pytest.approx(2 / 3, abs=1e-4)
    assert (routes["answer"].questions, routes["answer"].errors) == (4, 1)
    assert routes["retrieve"].refusal_rate == 0.0
    assert aggregate.refusal_rate(0, 0) is None


def test_latency_percentiles_interpolate_between_order_statistics() -> None:
    lat = aggregate.latency([float(v) for v in range(100, 0, -1)])  # 1..100 in any order
    assert (lat.count, lat.p50_ms, lat.p95_ms) == (100, 50.5, 95.05)
    per_route = {r.route: r.latency for r in aggregate.route_stats(
        [_record(1, latency=5), _record(2, latency=7), _record(3, route="retrieve", latency=1)])}
    assert (per_route["answer"].p50_ms, per_route["retrieve"].p95_ms) == (6.0, 1.0)
    assert aggregate.latency([]).p50_ms is None


def test_most_asked_sections_count_the_best_section_then_citations() -> None:
    records = [_record(1, sections=(PID, ZMP)), _record(2, sections=(PID,)), _record(3, sections=(ZMP, PID)),
               _record(4, sections=(PID, PID))]
    top = aggregate.top_sections(records, limit=5)
    assert [(s.url, s.asked, s.cited) for s in top] == [(PID.url, 3, 4), (ZMP.url, 1, 2)]


def test_down_votes_join_records_by_query_id_per_cited_section() -> None:
    records = [_record(1, sections=(ZMP, PID), question="Why does the robot fall?"), _record(2, sections=(ZMP,)),
               _record(3, sections=(PID,))]
    votes = [FeedbackRecord("q1", "down", 1.0, comment="wrong formula"), FeedbackRecord("q2", "down", 1.0),
             FeedbackRecord("q3", "up", 1.0), FeedbackRecord("gone", "down", 1.0)]
    voted = aggregate.voted_sections(records, votes, limit=5)
    assert [(v.url, v.down, v.up) for v in voted] == [(ZMP.url, 2, 0), (PID.url, 1, 1)]
    assert voted[0].questions == ("Why does the robot fall?", "What is ZMP?")
    assert voted[0].comments == ("wrong formula",) and voted[1].comments == ("wrong formula",)


def test_a_gap_is_a_refusal_or_an_answer_on_little() -> None:
    assert is_gap(_record(1, outcome="refused", top=0.9), 0.38)
    assert is_gap(_record(2, top=0.35), 0.38)
    assert not is_gap(_record(3, top=0.5), 0.38)
    assert not is_gap(_record(4, outcome="error", top=0.1), 0.38)
    assert not is_gap(_record(5, top=None), 0.38)


def test_distinct_questions_fold_case_spaces_and_end_punctuation() -> None:
    records = [_record(1, question="How do I install Isaac Sim on Windows?"),
               _record(2, question="how do I  install isaac sim on windows", outcome="refused"),
               _record(3, question="How do I install Isaac Sim on Windows?")]
    [question] = distinct_questions(records)
    assert normalise("  Hi there?! ") == "hi there"
    assert (question.text, question.records, question.refused) == ("How do I install Isaac Sim on Windows?", 3, 1)


TOPICS = {
    "isaac": ["How do I install Isaac Sim on Windows?", "Can Isaac Sim run on Windows 11?",
              "isaac sim windows installation steps", "Is there a Windows installer for Isaac Sim?"],
    "gpu": ["What GPU do I need for this course?", "minimum GPU requirements for the labs",
            "Which GPU is required for this course?"],
    "price": ["How much does a humanoid robot cost?", "how expensive are humanoid robots"],
    "worldcup": ["Who won the 2018 FIFA World Cup?", "Who won the 2022 FIFA World Cup?"],
}


def test_clustering_groups_paraphrases_and_separates_topics(local_embedder: Any) -> None:
    records = [_record(i, question=q, outcome="refused")
               for i, q in enumerate(q for qs in TOPICS.values() for q in qs for _ in range(1 + len(qs) % 2))]
    clusters = cluster_gaps(distinct_questions(records), local_embedder.embed_documents, similarity=0.6)
    topic_of = {q: topic for topic, qs in TOPICS.items() for q in qs}
    grouped = sorted(sorted(topic_of[m.text] for m in c.members) for c in clusters)
    assert grouped == sorted([t] * len(qs) for t, qs in TOPICS.items())
    largest = clusters[0]  # the GPU questions were each asked twice: 6 records
    assert largest.count == 6 and largest.centre.text in TOPICS["gpu"] and len(largest.examples()) == 3
