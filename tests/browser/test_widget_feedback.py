"""Thumbs up/down under each answer in a real browser (Debian's chromium through Playwright) on `bookrag
serve`'s `/demo`: a click or the keyboard casts the vote, it reaches the server's question log, and
nothing on screen moves when it does."""

from __future__ import annotations

import json
from typing import Any

from tests.support.browser import ANSWER_TIMEOUT_MS, Console, screenshot
from tests.support.serve import Served

DONE = "[data-testid=bookrag-answer][data-refusal]"
PageAndConsole = tuple[Any, Console]


def _answered(tab: Any, server: Served, question: str) -> str:
    """Open the panel, ask, wait for the answer; returns the answer's X-Query-Id."""
    tab.goto(f"{server.base}/demo")
    tab.get_by_test_id("bookrag-open").click()
    tab.get_by_test_id("bookrag-input").fill(question)
    with tab.expect_response(lambda r: r.url.endswith("/api/answer/stream")) as streamed:
        tab.get_by_test_id("bookrag-send").click()
    tab.locator(DONE).first.wait_for(timeout=ANSWER_TIMEOUT_MS)
    query_id: str = streamed.value.headers["x-query-id"]
    return query_id


def _boxes(tab: Any) -> list[dict[str, float]]:
    """Where the answer's text, the vote row and its two buttons are on screen."""
    return [tab.locator(selector).first.bounding_box() for selector in (
        "[data-testid=bookrag-answer] .bookrag-text", ".bookrag-feedback", "[data-testid=bookrag-vote-up]",
        "[data-testid=bookrag-vote-down]", "[data-testid=bookrag-input]")]


def _votes(server: Served) -> dict[str, dict[str, Any]]:
    path = server.question_log / "feedback.jsonl"
    return {v["query_id"]: v for v in map(json.loads, path.read_text().splitlines())} if path.exists() else {}


def test_a_click_on_thumbs_up_reaches_the_log_without_moving_anything(served: Served, page: PageAndConsole) -> None:
    tab, console = page
    query_id = _answered(tab, served, "What is a topic in ROS 2?")
    up = tab.get_by_test_id("bookrag-vote-up")
    assert up.get_attribute("aria-label") == "This answer helped" and up.evaluate("b => b.tagName") == "BUTTON"
    before = _boxes(tab)

    with tab.expect_response(lambda r: r.url.endswith("/api/feedback")) as voted:
        up.click()
    assert voted.value.status == 201
    tab.get_by_text("Thanks for your feedback.").wait_for()

    assert _boxes(tab) == before  # no layout shift
    assert up.get_attribute("aria-pressed") == "true"
    assert up.is_disabled() and tab.get_by_test_id("bookrag-vote-down").is_disabled()
    assert _votes(served)[query_id]["rating"] == "up"
    screenshot(tab, "feedback-up")
    assert console.errors == []


def test_the_keyboard_reaches_thumbs_down_and_its_comment(served: Served, page: PageAndConsole) -> None:
    tab, console = page
    query_id = _answered(tab, served, "What is a node in ROS 2?")
    tab.get_by_test_id("bookrag-citation").last.focus()
    tab.keyboard.press("Tab")
    assert tab.evaluate("document.activeElement.dataset.testid") == "bookrag-vote-up"
    tab.keyboard.press("Tab")
    assert tab.evaluate("document.activeElement.dataset.testid") == "bookrag-vote-down"
    before = _boxes(tab)

    with tab.expect_response(lambda r: r.url.endswith("/api/feedback")) as given:
        tab.keyboard.press("Space")  # "down" is sent at once and opens the optional comment, focused
    assert given.value.status == 201
    # Kept before any comment: a reader who closes the box unsent still counts.
    assert (_votes(served)[query_id]["rating"], _votes(served)[query_id]["comment"]) == ("down", None)
    assert tab.evaluate("document.activeElement.dataset.testid") == "bookrag-comment-input"
    assert tab.get_by_test_id("bookrag-comment-input").get_attribute("maxlength") == "500"
    tab.keyboard.type("The QoS part is missing; write to me at jane@example.com")
    tab.keyboard.press("Tab")
    with tab.expect_response(lambda r: r.url.endswith("/api/feedback")) as voted:
        tab.keyboard.press("Enter")
    assert voted.value.status == 201
    tab.get_by_text("Thanks for your feedback.").wait_for()

    # The answer, the row and its buttons keep their layout; the comment opened below them. A panel already
    # full scrolls to show the focused comment box: everything above it moves up together, nothing shifts.
    after = _boxes(tab)[:4]
    moved = {a["y"] - b["y"] for a, b in zip(after, before[:4], strict=True)}
    assert len(moved) == 1 and max(moved) <= 0
    assert [{**a, "y": 0} for a in after] == [{**b, "y": 0} for b in before[:4]]
    vote = _votes(served)[query_id]
    assert (vote["rating"], vote["comment"]) == ("down", "The QoS part is missing; write to me at [email]")
    assert tab.get_by_test_id("bookrag-vote-up").is_disabled()
    screenshot(tab, "feedback-down")
    assert console.errors == []
