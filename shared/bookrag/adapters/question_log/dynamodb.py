"""The question log in DynamoDB (`QUESTION_LOG_TABLE`, template.yaml `QuestionLogTable`).

One item per query, partition key `query_id`: the record's fields (`sections` as JSON), `expires_at` (epoch
seconds, the table's TTL attribute: DynamoDB deletes an item within days of it, so reads check it too), and,
once a reader votes, `rating`, `feedback_at` and `comment` on the same item. A vote is one conditional
UpdateItem (`attribute_exists(query_id) AND attribute_not_exists(rating)`, or, for a comment attached to the
same rating later, `attribute_not_exists(comment)`): one vote per query with no read first and no race
between two votes (an item past its expiry that DynamoDB has not deleted yet counts as
gone); when the condition fails, the item DynamoDB returns with the failure
tells an unknown query (no item) from a second vote.

Records are written in BatchWriteItem calls of 25 (the API's maximum); items DynamoDB leaves unprocessed
(throttling) are retried once, then reported. Reading (`records`, `feedback`) is a paginated Scan with a
filter: the owner's report reads the whole retention window once, which a Scan does at the same cost as
any index would. The low-level client is the container's; botocore errors become `QuestionLogError`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from bookrag.adapters.question_log.local import feedback_from_dict, record_from_dict
from bookrag.domain.books import DEFAULT_BOOK
from bookrag.domain.question_log import FeedbackRecord, QueryRecord
from bookrag.errors import FeedbackExistsError, QuestionLogError, UnknownQueryError

BATCH = 25  # BatchWriteItem's limit


def record_item(record: QueryRecord, expires_at: int) -> dict[str, Any]:
    item: dict[str, Any] = {
        "query_id": {"S": record.query_id}, "at": {"N": repr(record.at)}, "route": {"S": record.route},
        "question": {"S": record.question}, "book_version": {"S": record.book_version},
        "outcome": {"S": record.outcome}, "latency_ms": {"N": repr(record.latency_ms)},
        "answerer": {"S": record.answerer}, "key_hash": {"S": record.key_hash},
        "sections": {"S": json.dumps([{"url": s.url, "title": s.title, "score": s.score} for s in record.sections],
                                     ensure_ascii=False, separators=(",", ":"))},
        "expires_at": {"N": str(expires_at)}}
    if record.refusal_reason is not None:
        item["refusal_reason"] = {"S": record.refusal_reason}
    if record.top_score is not None:
        item["top_score"] = {"N": repr(record.top_score)}
    if record.book != DEFAULT_BOOK:
        item["book"] = {"S": record.book}
    return item


def _plain(item: dict[str, Any]) -> dict[str, Any]:
    """An item's attributes as plain values (the local store's JSON shape, so one parser reads both)."""
    out: dict[str, Any] = {}
    for name, value in item.items():
        if "S" in value:
            out[name] = value["S"]
        elif "N" in value:
            out[name] = float(value["N"])
    if isinstance(out.get("sections"), str):
        out["sections"] = json.loads(out["sections"])
    return out


class DynamoDBQuestionLog:
    def __init__(self, client: Any, table: str, *, retention_days: int = 90) -> None:
        self._client = client
        self._table = table
        self.retention_s = retention_days * 86_400

    def write(self, records: list[QueryRecord]) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        for start in range(0, len(records), BATCH):
            requests = [{"PutRequest": {"Item": record_item(r, int(r.at) + self.retention_s)}}
                        for r in records[start:start + BATCH]]
            try:
                for _attempt in range(2):  # the first call, and one retry of what it left unprocessed
                    response = self._client.batch_write_item(RequestItems={self._table: requests})
                    requests = (response.get("UnprocessedItems") or {}).get(self._table) or []
                    if not requests:
                        break
            except (BotoCoreError, ClientError) as exc:
                raise QuestionLogError("the question log could not be written") from exc
            if requests:
                raise QuestionLogError(f"{len(requests)} question log records left unprocessed")

    def add_feedback(self, feedback: FeedbackRecord) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        now = time.time()
        values: dict[str, Any] = {":rating": {"S": feedback.rating}, ":at": {"N": repr(feedback.at)},
                                  ":now": {"N": str(int(now))}}
        # The vote's time is its first one: a comment attached later (`domain.question_log.comments_later`) keeps it.
        update = "SET rating = :rating, feedback_at = if_not_exists(feedback_at, :at)"
        unvoted = "attribute_not_exists(rating)"
        # A vote names a query of its own book only: another book's query fails the condition as unknown.
        if feedback.book == DEFAULT_BOOK:
            own_book = "attribute_not_exists(book)"
        else:
            own_book = "book = :book"
            values[":book"] = {"S": feedback.book}
        if feedback.comment is not None:
            values[":comment"] = {"S": feedback.comment}
            update += ", #c = :comment"
            unvoted = "(attribute_not_exists(rating) OR (rating = :rating AND attribute_not_exists(#c)))"
        try:
            self._client.update_item(
                TableName=self._table, Key={"query_id": {"S": feedback.query_id}}, UpdateExpression=update,
                ConditionExpression=f"attribute_exists(query_id) AND {own_book} AND {unvoted} AND expires_at > :now",
                ExpressionAttributeValues=values, ReturnValuesOnConditionCheckFailure="ALL_OLD",
                **({"ExpressionAttributeNames": {"#c": "comment"}} if feedback.comment is not None else {}))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise QuestionLogError("feedback could not be stored") from exc
            old = exc.response.get("Item")
            # No item: never logged, or expired and deleted. An item past its expiry DynamoDB has not deleted
            # yet is as unknown.
            if (not old or float(old.get("expires_at", {}).get("N", "0")) <= now
                    or old.get("book", {}).get("S", DEFAULT_BOOK) != feedback.book):
                raise UnknownQueryError() from None
            raise FeedbackExistsError() from None
        except BotoCoreError as exc:
            raise QuestionLogError("feedback could not be stored") from exc

    def records(self, since: float) -> Iterator[QueryRecord]:
        for item in self._scan("#at", since):
            try:
                yield record_from_dict(item)
            except (KeyError, TypeError, ValueError):
                continue  # a foreign or torn item must not hide the rest

    def feedback(self, since: float) -> Iterator[FeedbackRecord]:
        for item in self._scan("feedback_at", since):
            try:
                yield feedback_from_dict({**item, "at": item["feedback_at"]})
            except (KeyError, TypeError, ValueError):
                continue

    def _scan(self, attribute: str, since: float) -> Iterator[dict[str, Any]]:
        from botocore.exceptions import BotoCoreError, ClientError

        now = time.time()
        names = {"#at": "at"} if attribute == "#at" else {}
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "FilterExpression": f"{attribute} >= :since AND expires_at > :now",
            "ExpressionAttributeValues": {":since": {"N": repr(max(since, now - self.retention_s))},
                                          ":now": {"N": str(int(now))}},
            **({"ExpressionAttributeNames": names} if names else {})}
        while True:
            try:
                page = self._client.scan(**kwargs)
            except (BotoCoreError, ClientError) as exc:
                raise QuestionLogError("the question log could not be read") from exc
            for item in page.get("Items", []):
                yield _plain(item)
            last = page.get("LastEvaluatedKey")
            if not last:
                return
            kwargs["ExclusiveStartKey"] = last
