"""`POST /api/feedback` through the agent's real Lambda entry point: an answer's `X-Query-Id` takes one vote,
an unknown id is a 404 and a bad rating a 400, each in the one error envelope."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bookrag.domain.question_log import QUERY_ID_PATTERN
from tests.support.events import body_of


@pytest.fixture(autouse=True)
def _on_sample_book(book_env: Any, use_env: Any, tmp_path: Path) -> None:
    use_env(QUESTION_LOG_PATH=str(tmp_path / "log"))


def _header(response: dict[str, Any], name: str) -> str | None:
    return next((v for k, v in (response.get("headers") or {}).items() if k.lower() == name.lower()), None)


def test_an_answer_takes_one_vote_and_the_record_is_written_before_the_invocation_ends(
        agent_handler: Any, invoke: Any, tmp_path: Path) -> None:
    answered = invoke(agent_handler, "answer-valid.json")
    query_id = _header(answered, "X-Query-Id")
    assert query_id and re.fullmatch(QUERY_ID_PATTERN, query_id)
    assert set(body_of(answered)) == {"answer", "sources", "is_refusal", "refusal_reason"}
    # The invocation has returned: Lambda may freeze the process now, so the record is already stored.
    records = [json.loads(line) for line in (tmp_path / "log" / "questions.jsonl").read_text().splitlines()]
    assert [r["query_id"] for r in records] == [query_id]
    assert records[0]["route"] == "answer" and records[0]["question"] == "How do I install ROS 2 Humble?"

    voted = invoke(agent_handler, "feedback-unknown.json", body={"query_id": query_id, "rating": "up"})
    assert voted["statusCode"] == 201 and body_of(voted) == {"query_id": query_id, "rating": "up"}
    again = invoke(agent_handler, "feedback-unknown.json", body={"query_id": query_id, "rating": "down"})
    assert again["statusCode"] == 409 and body_of(again)["code"] == "FEEDBACK_EXISTS"


def test_a_thumbs_down_is_kept_when_given_and_its_comment_joins_it_later(
        agent_handler: Any, invoke: Any, tmp_path: Path) -> None:
    query_id = _header(invoke(agent_handler, "answer-valid.json"), "X-Query-Id")
    down = invoke(agent_handler, "feedback-unknown.json", body={"query_id": query_id, "rating": "down"})
    assert down["statusCode"] == 201
    comment = invoke(agent_handler, "feedback-unknown.json",
                     body={"query_id": query_id, "rating": "down", "comment": "The QoS part is missing"})
    assert comment["statusCode"] == 201
    second = invoke(agent_handler, "feedback-unknown.json",
                    body={"query_id": query_id, "rating": "down", "comment": "And more"})
    assert second["statusCode"] == 409 and body_of(second)["code"] == "FEEDBACK_EXISTS"


def test_an_unknown_query_id_is_a_404_in_the_envelope(agent_handler: Any, invoke: Any) -> None:
    response = invoke(agent_handler, "feedback-unknown.json")
    assert response["statusCode"] == 404
    assert body_of(response) == {"error": "Unknown query id", "code": "QUERY_NOT_FOUND",
                                 "details": {"field": "query_id"}, "recoverable": False}


def test_a_bad_rating_is_a_400_in_the_envelope(agent_handler: Any, invoke: Any) -> None:
    response = invoke(agent_handler, "feedback-invalid-rating.json")
    assert response["statusCode"] == 400
    body = body_of(response)
    assert body["code"] == "INVALID_RATING" and body["details"] == {"field": "rating"}
