"""`GET /api/pages/suggestions` through the agent's real Lambda entry point, with the events/ files: a page's
questions, stamped with the book version; an empty `url` is a 400 in the one error envelope."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.events import body_of


@pytest.fixture(autouse=True)
def _on_sample_book(book_env: Any) -> None:
    """The session's indexed sample book, its pages' questions found as `bookrag ingest` finds them."""


def test_a_page_gets_its_questions_with_the_book_version(agent_handler: Any, invoke: Any) -> None:
    response = invoke(agent_handler, "pages-suggestions.json")
    body = body_of(response)
    assert response["statusCode"] == 200
    assert body["url"] == "http://localhost:3000/docs/module-1-ros2/nodes-topics"
    assert 1 <= len(body["suggestions"]) <= 3 and all(q.endswith("?") for q in body["suggestions"])
    headers = {k.lower(): v for k, v in response["headers"].items()}
    assert body["book_version"] and headers["x-book-version"] == body["book_version"]
    assert headers["cache-control"] == "public, max-age=300"


def test_an_empty_url_is_the_error_envelope(agent_handler: Any, invoke: Any) -> None:
    response = invoke(agent_handler, "pages-suggestions-empty.json")
    assert response["statusCode"] == 400
    assert body_of(response)["code"] == "INVALID_REQUEST" and "Traceback" not in str(response["body"])
