"""The DynamoDB question log on moto, with the table as template.yaml declares it: records in batches with
their TTL, one conditional vote per known query, paginated reads, and botocore failures as our error."""

from __future__ import annotations

import time
from typing import Any

import pytest

from bookrag.adapters.question_log.dynamodb import DynamoDBQuestionLog
from bookrag.domain.question_log import FeedbackRecord, LoggedSection, QueryRecord
from bookrag.errors import FeedbackExistsError, QuestionLogError, UnknownQueryError
from tests.support.aws import QUESTION_LOG_TABLE, create_question_log_table, moto_dynamodb


def _record(query_id: str, at: float | None = None, sections: int = 1) -> QueryRecord:
    return QueryRecord(query_id=query_id, at=time.time() if at is None else at, route="answer",
                       question="What is [email]'s ZMP?", book_version="v1", outcome="refused",
                       refusal_reason="weak_evidence",
                       sections=tuple(LoggedSection(url=f"/docs/balance#zmp-{i}", title="Balance > ZMP " + "x" * 60,
                                                    score=0.5) for i in range(sections)),
                       latency_ms=12.5, answerer="extractive", key_hash="ab" * 32, top_score=0.5)


def _unprocessed_first(client: Any, times: int) -> list[int]:
    """Make DynamoDB leave every item of the first `times` BatchWriteItem calls unprocessed (throttling), as
    the service does under load: botocore's before-call hook answers those calls without sending them."""
    from botocore.awsrequest import AWSResponse

    calls: list[int] = []

    def answer(params: dict[str, Any], **_: Any) -> Any:
        calls.append(len(params["body"]))
        if len(calls) > times:
            return None
        import json

        requested = json.loads(params["body"])["RequestItems"]
        return AWSResponse("https://dynamodb", 200, {}, None), {"UnprocessedItems": requested}

    client.meta.events.register("before-call.dynamodb.BatchWriteItem", answer)
    return calls


def test_records_round_trip_with_their_expiry(monkeypatch: pytest.MonkeyPatch) -> None:
    with moto_dynamodb(monkeypatch) as client:
        create_question_log_table(client)
        log = DynamoDBQuestionLog(client, QUESTION_LOG_TABLE, retention_days=30)
        record = _record("q_1")
        log.write([record])
        assert list(log.records(0.0)) == [record]
        item = client.get_item(TableName=QUESTION_LOG_TABLE, Key={"query_id": {"S": "q_1"}})["Item"]
        assert int(item["expires_at"]["N"]) == int(record.at) + 30 * 86_400
        assert "ip" not in item and "user_agent" not in item


def test_batches_of_twenty_five_and_pages_of_a_megabyte(monkeypatch: pytest.MonkeyPatch) -> None:
    with moto_dynamodb(monkeypatch) as client:
        create_question_log_table(client)
        log = DynamoDBQuestionLog(client, QUESTION_LOG_TABLE)
        records = [_record(f"q_{i}", sections=40) for i in range(400)]  # ~3 KB each: more than one Scan page
        log.write(records)
        assert client.scan(TableName=QUESTION_LOG_TABLE, Select="COUNT").get("LastEvaluatedKey")
        assert sorted(r.query_id for r in log.records(0.0)) == sorted(r.query_id for r in records)
        assert list(log.records(time.time() + 60)) == []


def test_unprocessed_items_are_retried_once(monkeypatch: pytest.MonkeyPatch) -> None:
    with moto_dynamodb(monkeypatch) as client:
        create_question_log_table(client)
        calls = _unprocessed_first(client, times=1)
        DynamoDBQuestionLog(client, QUESTION_LOG_TABLE).write([_record("q_a"), _record("q_b")])
        assert len(calls) == 2
        assert sorted(r.query_id for r in DynamoDBQuestionLog(client, QUESTION_LOG_TABLE).records(0.0)) == \
            ["q_a", "q_b"]


def test_items_left_unprocessed_twice_are_a_question_log_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with moto_dynamodb(monkeypatch) as client:
        create_question_log_table(client)
        calls = _unprocessed_first(client, times=5)
        with pytest.raises(QuestionLogError):
            DynamoDBQuestionLog(client, QUESTION_LOG_TABLE).write([_record("q_a")])
        assert len(calls) == 2


def test_one_vote_per_known_query(monkeypatch: pytest.MonkeyPatch) -> None:
    with moto_dynamodb(monkeypatch) as client:
        create_question_log_table(client)
        log = DynamoDBQuestionLog(client, QUESTION_LOG_TABLE)
        log.write([_record("q_1"), _record("q_2")])
        with pytest.raises(UnknownQueryError):
            log.add_feedback(FeedbackRecord("q_nope", "up", time.time()))
        assert client.get_item(TableName=QUESTION_LOG_TABLE, Key={"query_id": {"S": "q_nope"}}).get("Item") is None
        log.add_feedback(FeedbackRecord("q_1", "down", time.time(), comment="the formula is wrong"))
        log.add_feedback(FeedbackRecord("q_2", "up", time.time()))
        with pytest.raises(FeedbackExistsError):
            log.add_feedback(FeedbackRecord("q_1", "up", time.time()))
        votes = {f.query_id: f for f in log.feedback(0.0)}
        assert (votes["q_1"].rating, votes["q_1"].comment) == ("down", "the formula is wrong")
        assert (votes["q_2"].rating, votes["q_2"].comment) == ("up", None)
        # The vote did not change the record.
        assert next(r for r in log.records(0.0) if r.query_id == "q_1") == _record("q_1", next(
            r.at for r in log.records(0.0) if r.query_id == "q_1"))


def test_a_thumbs_down_takes_its_comment_later_once(monkeypatch: pytest.MonkeyPatch) -> None:
    with moto_dynamodb(monkeypatch) as client:
        create_question_log_table(client)
        log = DynamoDBQuestionLog(client, QUESTION_LOG_TABLE)
        log.write([_record("q_1")])
        voted_at = time.time()
        log.add_feedback(FeedbackRecord("q_1", "down", voted_at))
        log.add_feedback(FeedbackRecord("q_1", "down", voted_at + 5, comment="the QoS part is missing"))
        assert list(log.feedback(0.0)) == [FeedbackRecord("q_1", "down", voted_at, "the QoS part is missing")]
        for again in (FeedbackRecord("q_1", "down", time.time(), comment="another"),
                      FeedbackRecord("q_1", "up", time.time(), comment="turned around")):
            with pytest.raises(FeedbackExistsError):
                log.add_feedback(again)
        assert list(log.feedback(0.0)) == [FeedbackRecord("q_1", "down", voted_at, "the QoS part is missing")]


def test_an_expired_record_not_yet_deleted_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    with moto_dynamodb(monkeypatch) as client:
        create_question_log_table(client)
        log = DynamoDBQuestionLog(client, QUESTION_LOG_TABLE, retention_days=1)
        log.write([_record("q_old", at=time.time() - 2 * 86_400)])  # TTL passed; DynamoDB deletes lazily
        assert list(log.records(0.0)) == []
        with pytest.raises(UnknownQueryError):
            log.add_feedback(FeedbackRecord("q_old", "up", time.time()))


def test_botocore_failures_are_question_log_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with moto_dynamodb(monkeypatch) as client:  # no table
        log = DynamoDBQuestionLog(client, "bookrag-missing-table")
        with pytest.raises(QuestionLogError):
            log.write([_record("q_1")])
        with pytest.raises(QuestionLogError):
            log.add_feedback(FeedbackRecord("q_1", "up", time.time()))
        with pytest.raises(QuestionLogError):
            list(log.records(0.0))
