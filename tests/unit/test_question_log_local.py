"""The local question log: records and votes round-trip, one vote per known query, a torn line or an
expired record is skipped."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bookrag.adapters.question_log.local import QUESTIONS, LocalQuestionLog
from bookrag.domain.question_log import FeedbackRecord, LoggedSection, QueryRecord
from bookrag.errors import FeedbackExistsError, UnknownQueryError


def _record(query_id: str, at: float) -> QueryRecord:
    return QueryRecord(query_id=query_id, at=at, route="answer", question="What is ZMP?", book_version="v1",
                       outcome="answered", refusal_reason=None,
                       sections=(LoggedSection(url="/docs/balance#zmp", title="Balance > ZMP", score=0.61),),
                       latency_ms=12.5, answerer="extractive", key_hash="anonymous", top_score=0.61)


def test_records_and_votes_round_trip(tmp_path: Path) -> None:
    log = LocalQuestionLog(tmp_path)
    now = time.time()
    log.write([_record("q1", now), _record("q2", now)])
    assert [r.query_id for r in log.records(0.0)] == ["q1", "q2"]
    assert next(log.records(0.0)) == _record("q1", now)
    log.add_feedback(FeedbackRecord(query_id="q2", rating="down", at=now, comment="wrong formula"))
    assert list(LocalQuestionLog(tmp_path).feedback(0.0)) == [
        FeedbackRecord(query_id="q2", rating="down", at=now, comment="wrong formula")]


def test_one_vote_per_known_query(tmp_path: Path) -> None:
    log = LocalQuestionLog(tmp_path)
    log.write([_record("q1", time.time())])
    with pytest.raises(UnknownQueryError):
        log.add_feedback(FeedbackRecord(query_id="nope", rating="up", at=time.time()))
    log.add_feedback(FeedbackRecord(query_id="q1", rating="up", at=time.time()))
    with pytest.raises(FeedbackExistsError):
        LocalQuestionLog(tmp_path).add_feedback(FeedbackRecord(query_id="q1", rating="down", at=time.time()))


def test_a_thumbs_down_takes_its_comment_later_once(tmp_path: Path) -> None:
    # The widget stores a "down" when it is clicked; a comment the reader sends afterwards joins that vote.
    log = LocalQuestionLog(tmp_path)
    log.write([_record("q1", time.time())])
    voted_at = time.time()
    log.add_feedback(FeedbackRecord(query_id="q1", rating="down", at=voted_at))
    LocalQuestionLog(tmp_path).add_feedback(FeedbackRecord(query_id="q1", rating="down", at=voted_at + 5,
                                                           comment="the QoS part is missing"))
    assert list(LocalQuestionLog(tmp_path).feedback(0.0)) == [
        FeedbackRecord(query_id="q1", rating="down", at=voted_at, comment="the QoS part is missing")]
    for again in (FeedbackRecord(query_id="q1", rating="down", at=time.time(), comment="another"),
                  FeedbackRecord(query_id="q1", rating="up", at=time.time())):
        with pytest.raises(FeedbackExistsError):
            LocalQuestionLog(tmp_path).add_feedback(again)


def test_a_comment_never_turns_a_vote_around(tmp_path: Path) -> None:
    log = LocalQuestionLog(tmp_path)
    log.write([_record("q1", time.time())])
    log.add_feedback(FeedbackRecord(query_id="q1", rating="up", at=time.time()))
    with pytest.raises(FeedbackExistsError):
        log.add_feedback(FeedbackRecord(query_id="q1", rating="down", at=time.time(), comment="actually bad"))
    assert [(f.rating, f.comment) for f in log.feedback(0.0)] == [("up", None)]


def test_a_record_written_after_the_first_vote_can_be_voted_on(tmp_path: Path) -> None:
    log = LocalQuestionLog(tmp_path)
    log.write([_record("q1", time.time())])
    log.add_feedback(FeedbackRecord(query_id="q1", rating="up", at=time.time()))
    log.write([_record("q2", time.time())])
    log.add_feedback(FeedbackRecord(query_id="q2", rating="up", at=time.time()))
    assert [f.query_id for f in log.feedback(0.0)] == ["q1", "q2"]


def test_torn_lines_and_expired_records_are_skipped(tmp_path: Path) -> None:
    log = LocalQuestionLog(tmp_path, retention_days=1)
    log.write([_record("old", time.time() - 2 * 86_400), _record("new", time.time())])
    with (tmp_path / QUESTIONS).open("a", encoding="utf-8") as f:
        f.write('{"query_id": "torn", "at": \n[1, 2]\n')
    assert [r.query_id for r in log.records(0.0)] == ["new"]
    assert [r.query_id for r in log.records(time.time() + 60)] == []
