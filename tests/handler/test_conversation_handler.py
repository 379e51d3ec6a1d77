"""Conversations and selections through the agent's real Lambda entry point, with events from events/.

Follow-ups (client history and server sessions), sessions owned by their API key (DynamoDB in moto,
keys verified by the real middleware), selections that are and are not the book's text, and every bad
input of the new fields. The sample book is indexed once per session; the answerer is extractive.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

import pytest

from bookrag.contracts.agent import REFUSAL
from bookrag.services.container import current
from tests.support.aws import SESSIONS_TABLE, AuthTables, create_sessions_table
from tests.support.events import body_of, load_event

INSTALL_FILE = "module-1-ros2/installation.md"
CONTRACT_FIELDS = {"answer", "sources", "is_refusal", "refusal_reason"}


@pytest.fixture(autouse=True)
def _on_sample_book(book_env: Any) -> None:
    """Every test here runs against the session's indexed sample book, with the extractive answerer."""


def invoke_body(handler: Any, lambda_context: Any, event: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    response = handler.lambda_handler(event, lambda_context)
    return response["statusCode"], body_of(response)


def with_session(event_name: str, session_id: str, key: str | None = None) -> dict[str, Any]:
    """A copy of an events/ file whose body names `session_id` (and which carries `key`)."""
    import base64
    import json

    event = copy.deepcopy(load_event(event_name))
    body = json.loads(base64.b64decode(event["body"]))
    body["session_id"] = session_id
    event["body"] = base64.b64encode(json.dumps(body).encode()).decode()
    if key is not None:
        event["headers"]["x-api-key"] = key
    return event


def keyed(event_name: str, key: str) -> dict[str, Any]:
    event = copy.deepcopy(load_event(event_name))
    event["headers"]["x-api-key"] = key
    return event


def test_without_a_conversation_the_body_is_the_contracts(agent_handler: Any, lambda_context: Any) -> None:
    status, body = invoke_body(agent_handler, lambda_context, load_event("answer-valid.json"))

    assert status == 200 and set(body) == CONTRACT_FIELDS


def test_a_follow_up_with_history_searches_the_standalone_question(agent_handler: Any, lambda_context: Any) -> None:
    status, body = invoke_body(agent_handler, lambda_context, load_event("answer-follow-up.json"))

    assert status == 200 and body["is_refusal"] is False
    assert body["standalone_question"] == "Which Ubuntu version does ROS 2 Humble need?"
    assert set(body) == CONTRACT_FIELDS | {"standalone_question"}
    assert "22.04" in body["answer"]
    assert INSTALL_FILE in {s["source_file"] for s in body["sources"]}


def test_a_session_round_trip_in_memory(agent_handler: Any, lambda_context: Any) -> None:
    status, first = invoke_body(agent_handler, lambda_context, load_event("answer-session-start.json"))
    assert status == 200 and first["session_id"].startswith("ses_") and "standalone_question" not in first

    status, second = invoke_body(agent_handler, lambda_context,
                                 with_session("answer-session-follow-up.json", first["session_id"]))

    assert status == 200 and second["session_id"] == first["session_id"]
    assert second["standalone_question"] == "Which Ubuntu version does ROS 2 Humble need?"
    assert "22.04" in second["answer"]
    stored = current().sessions.get(first["session_id"], int(time.time()))
    assert stored is not None and stored.owner == "anonymous"
    assert [t.question for t in stored.turns] == ["How do I install ROS 2 Humble?",
                                                 "Which Ubuntu version does it need?"]
    assert stored.turns[1].standalone == second["standalone_question"]


def test_an_unknown_session_is_a_404(agent_handler: Any, lambda_context: Any) -> None:
    status, body = invoke_body(agent_handler, lambda_context, load_event("answer-session-follow-up.json"))

    assert status == 404 and body["code"] == "SESSION_NOT_FOUND" and body["details"] == {"field": "session_id"}
    assert body["error_type"] == "InvalidQueryError" and body["recoverable"] is False


@pytest.fixture
def keyed_sessions(auth_tables: AuthTables, indexed_book: dict[str, str],
                   use_env: Callable[..., None]) -> AuthTables:
    """Auth on (keys in DynamoDB), sessions in DynamoDB: both in moto, as template.yaml deploys them."""
    create_sessions_table(auth_tables.client)
    use_env(**indexed_book, **auth_tables.env(rate_limit=100), sessions_table=SESSIONS_TABLE)
    return auth_tables


def test_a_session_in_dynamodb_belongs_to_the_key_that_started_it(agent_handler: Any, lambda_context: Any,
                                                                   keyed_sessions: AuthTables) -> None:
    alice, mallory = keyed_sessions.mint("alice"), keyed_sessions.mint("mallory")
    status, first = invoke_body(agent_handler, lambda_context, keyed("answer-session-start.json", alice))
    assert status == 200
    session_id = first["session_id"]

    status, refused = invoke_body(agent_handler, lambda_context,
                                  with_session("answer-session-follow-up.json", session_id, mallory))
    assert status == 404 and refused["code"] == "SESSION_NOT_FOUND"
    assert "ROS" not in str(refused) and session_id not in str(refused)

    status, second = invoke_body(agent_handler, lambda_context,
                                 with_session("answer-session-follow-up.json", session_id, alice))
    assert status == 200 and second["standalone_question"] == "Which Ubuntu version does ROS 2 Humble need?"
    (item,) = keyed_sessions.items(SESSIONS_TABLE)
    assert item["session_id"]["S"] == session_id and item["owner"]["S"] == alice.split("_")[1]
    assert int(item["expires_at"]["N"]) > time.time()
    # Mallory's attempt changed nothing: two turns, both Alice's.
    assert item["turns"]["S"].count('"question"') == 2


def test_an_expired_session_in_dynamodb_is_a_404(agent_handler: Any, lambda_context: Any,
                                                 keyed_sessions: AuthTables) -> None:
    alice = keyed_sessions.mint("alice")
    session_id = "ses_" + "E" * 32
    keyed_sessions.client.put_item(TableName=SESSIONS_TABLE, Item={
        "session_id": {"S": session_id}, "owner": {"S": alice.split("_")[1]},
        "turns": {"S": '[{"question": "How do I install ROS 2 Humble?"}]'},
        "expires_at": {"N": str(int(time.time()) - 1)}})  # past: DynamoDB's TTL has not deleted it yet

    status, body = invoke_body(agent_handler, lambda_context,
                               with_session("answer-session-follow-up.json", session_id, alice))

    assert status == 404 and body["code"] == "SESSION_NOT_FOUND"


def test_a_selection_that_matches_the_book_is_searched_and_cited(agent_handler: Any, lambda_context: Any) -> None:
    status, body = invoke_body(agent_handler, lambda_context, load_event("answer-selection-in-book.json"))

    assert status == 200 and body["is_refusal"] is False and body["selection_in_book"] is True
    assert set(body) == CONTRACT_FIELDS | {"selection_in_book"}
    assert body["sources"][0]["source_file"] == INSTALL_FILE
    quoted = " ".join(q["text"] for s in body["sources"] for q in s["quotes"])
    assert "source" in quoted.lower() and "/opt/ros/humble" in quoted


def test_a_selection_that_is_not_the_book_is_never_cited(agent_handler: Any, lambda_context: Any) -> None:
    status, body = invoke_body(agent_handler, lambda_context, load_event("answer-selection-not-in-book.json"))

    assert status == 200 and body["selection_in_book"] is False
    cited = " ".join(q["text"] for s in body["sources"] for q in s["quotes"]).lower()
    assert "ignore all previous" not in cited and "dan" not in cited.split()
    assert "ignore all previous" not in body["answer"].lower()
    assert body["is_refusal"] or body["sources"]
    assert body["answer"] == REFUSAL or "[1]" in body["answer"]


@pytest.mark.parametrize(("event", "status", "code", "field"), [
    ("answer-history-too-long.json", 400, "HISTORY_TOO_LONG", "history"),
    ("answer-history-invalid.json", 400, "INVALID_HISTORY", "history"),
    ("answer-session-id-invalid.json", 400, "INVALID_SESSION_ID", "session_id"),
    ("answer-selection-too-long.json", 400, "SELECTION_TOO_LONG", "selected_text"),
    ("answer-selection-empty.json", 400, "INVALID_SELECTION", "selected_text"),
    ("answer-conversation-conflict.json", 400, "CONFLICTING_CONVERSATION", "session_id"),
])
def test_bad_conversation_input_gets_the_envelope(agent_handler: Any, lambda_context: Any, event: str, status: int,
                                                  code: str, field: str) -> None:
    got, body = invoke_body(agent_handler, lambda_context, load_event(event))

    assert got == status
    assert body["code"] == code and body["details"] == {"field": field}
    assert body["error_type"] == "InvalidQueryError" and body["recoverable"] is False
    assert set(body) == {"error", "code", "details", "recoverable", "message", "error_type"}
