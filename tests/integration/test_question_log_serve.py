"""The question log end to end on a real `bookrag serve`: what a reader asks lands in the log folder
scrubbed, their vote is taken once, and bad or unknown votes get the envelope; QUESTION_LOG=off keeps
nothing."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bookrag.domain.question_log import COMMENT_MAX_CHARS, QUERY_ID_PATTERN
from tests.support.serve import Served, start
from tests.support.sse import parse

PERSONAL = "I'm jane.doe@example.com, call +44 20 7946 0958"
RECORD_FIELDS = {"query_id", "at", "route", "question", "book_version", "outcome", "refusal_reason", "sections",
                 "latency_ms", "answerer", "key_hash", "top_score"}


@pytest.fixture
def served(indexed_book: dict[str, str], tmp_path: Path) -> Iterator[Served]:
    server = start(indexed_book["QDRANT_PATH"], tmp_path, QUESTION_LOG_PATH=str(tmp_path / "log"))
    try:
        yield server
    finally:
        server.stop()


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_questions_are_logged_scrubbed_and_voted_on_once(served: Served, tmp_path: Path) -> None:
    folder = tmp_path / "log"
    with httpx.Client(base_url=served.base, timeout=60) as client:
        answered = client.post("/api/answer", json={"query": f"{PERSONAL}. How do I install ROS 2 Humble?"})
        assert answered.status_code == 200
        assert set(answered.json()) == {"answer", "sources", "is_refusal", "refusal_reason"}
        query_id = answered.headers["x-query-id"]
        assert re.fullmatch(QUERY_ID_PATTERN, query_id)

        streamed = client.post("/api/answer/stream", json={"query": "What is the capital of Australia?"})
        stream_id = streamed.headers["x-query-id"]
        assert parse(streamed.text)[-1][0] == "final" and stream_id != query_id

        retrieved = client.post("/api/retrieve", json={"query": "ROS 2 nodes, mail me at bob@example.org"})
        retrieve_id = retrieved.json()["query_id"]

        vote = client.post("/api/feedback", json={"query_id": query_id, "rating": "up"})
        assert vote.status_code == 201 and vote.json() == {"query_id": query_id, "rating": "up"}
        down = client.post("/api/feedback", json={"query_id": stream_id, "rating": "down",
                                                  "comment": "Wrong! Reach me on 555-123-4567"})
        assert down.status_code == 201
        again = client.post("/api/feedback", json={"query_id": query_id, "rating": "down"})
        assert again.status_code == 409 and again.json()["code"] == "FEEDBACK_EXISTS"
        unknown = client.post("/api/feedback", json={"query_id": "query_" + "0" * 32, "rating": "up"})
        assert unknown.status_code == 404
        assert unknown.json() == {"error": "Unknown query id", "code": "QUERY_NOT_FOUND",
                                  "details": {"field": "query_id"}, "recoverable": False}

    # The votes flushed the writer: every record is on disk by now.
    records = {r["query_id"]: r for r in _lines(folder / "questions.jsonl")}
    assert set(records) >= {query_id, stream_id, retrieve_id}
    assert all(set(r) == RECORD_FIELDS for r in records.values())
    answer = records[query_id]
    assert answer["question"] == "I'm [email], call [phone]. How do I install ROS 2 Humble?"
    assert (answer["route"], answer["outcome"], answer["answerer"]) == ("answer", "answered", "extractive")
    assert answer["sections"] and answer["sections"][0]["url"].startswith("http")
    assert answer["key_hash"] == "anonymous" and answer["latency_ms"] > 0 and answer["book_version"]
    assert (records[stream_id]["route"], records[stream_id]["outcome"]) == ("answer_stream", "refused")
    assert records[stream_id]["refusal_reason"] == "no_relevant_context"
    assert records[retrieve_id]["route"] == "retrieve"
    assert records[retrieve_id]["question"] == "ROS 2 nodes, mail me at [email]"
    votes = _lines(folder / "feedback.jsonl")
    assert [(v["query_id"], v["rating"], v["comment"]) for v in votes] == [
        (query_id, "up", None), (stream_id, "down", "Wrong! Reach me on [phone]")]
    stored = (folder / "questions.jsonl").read_text() + (folder / "feedback.jsonl").read_text()
    for leak in ("jane.doe", "example.com", "7946", "bob@", "555-123", "127.0.0.1", "python-httpx"):
        assert leak not in stored


@pytest.mark.parametrize(("body", "status", "code"), [
    ({"query_id": "query_" + "0" * 32, "rating": "meh"}, 400, "INVALID_RATING"),
    ({"query_id": "q1", "rating": "up"}, 400, "INVALID_QUERY_ID"),
    ({"rating": "up"}, 400, "INVALID_QUERY_ID"),
    ({"query_id": "query_" + "0" * 32, "rating": "up", "comment": "x" * (COMMENT_MAX_CHARS + 1)}, 400,
     "COMMENT_TOO_LONG"),
    ({"query_id": "query_" + "0" * 32, "rating": "up", "comment": 5}, 400, "INVALID_COMMENT"),
    ({"query_id": "query_" + "0" * 32, "rating": "up", "ip": "1.2.3.4"}, 400, "INVALID_REQUEST"),
])
def test_bad_votes_get_the_envelope(book_env: Any, body: dict[str, Any], status: int, code: str) -> None:
    from fastapi.testclient import TestClient

    from bookrag.web.app import create_app

    response = TestClient(create_app("agent")).post("/api/feedback", json=body)
    assert response.status_code == status
    assert response.json()["code"] == code and set(response.json()) == {"error", "code", "details", "recoverable"}


def test_question_log_off_keeps_nothing_and_gives_no_id(book_env: Any, use_env: Callable[..., None],
                                                         tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from bookrag.services.container import current
    from bookrag.web.app import create_app

    use_env(QUESTION_LOG="off", QUESTION_LOG_PATH=str(tmp_path / "off"))
    client = TestClient(create_app("all"))
    answered = client.post("/api/answer", json={"query": "How do I install ROS 2 Humble?"})
    assert answered.status_code == 200 and "x-query-id" not in answered.headers
    assert client.post("/api/retrieve", json={"query": "ROS 2 nodes"}).status_code == 200
    vote = client.post("/api/feedback", json={"query_id": "query_" + "0" * 32, "rating": "up"})
    assert vote.status_code == 404 and vote.json()["code"] == "QUERY_NOT_FOUND"
    assert current().question_log_writer is None and not (tmp_path / "off").exists()


def test_a_failing_store_never_fails_the_answer(book_env: Any, use_env: Callable[..., None], tmp_path: Path,
                                                caplog: pytest.LogCaptureFixture) -> None:
    from fastapi.testclient import TestClient

    from bookrag.services.container import current
    from bookrag.web.app import create_app

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the log's folder should be")
    use_env(QUESTION_LOG_PATH=str(blocker / "log"))
    question = "How do I install ROS 2 Humble? secret question text"
    response = TestClient(create_app("all")).post("/api/answer", json={"query": question})
    assert response.status_code == 200 and response.headers["x-query-id"]
    writer = current().question_log_writer
    assert writer is not None and writer.flush(5.0)
    failures = [r for r in caplog.records if r.getMessage() == "question log write failed"]
    assert failures and all("secret question" not in json.dumps(r.__dict__, default=str) for r in caplog.records)


def test_cors_exposes_the_query_id_to_the_widget(book_env: Any, use_env: Callable[..., None]) -> None:
    from fastapi.testclient import TestClient

    from bookrag.web.app import create_app

    use_env(CORS_ALLOWED_ORIGINS="https://book.example")
    response = TestClient(create_app("all")).post("/api/answer", json={"query": "How do I install ROS 2 Humble?"},
                                                  headers={"Origin": "https://book.example"})
    assert "X-Query-Id" in response.headers["access-control-expose-headers"].split(", ")
    assert response.headers["x-query-id"]
