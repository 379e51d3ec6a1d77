"""The widget in a real browser: Debian's chromium (headless, through Playwright) on `/demo`, served by
`bookrag serve` on 127.0.0.1 over the sample book. Each state is saved as a screenshot in
test-artifacts/browser/."""

from __future__ import annotations

from typing import Any

from tests.support.browser import ANSWER_TIMEOUT_MS, SELECT_SENTENCE, Console, screenshot
from tests.support.serve import Served

DONE = "[data-testid=bookrag-answer][data-refusal]"  # an answer the widget has finished rendering
PageAndConsole = tuple[Any, Console]


def _open(page: Any, server: Served) -> None:
    page.goto(f"{server.base}/demo")
    page.get_by_test_id("bookrag-open").click()
    page.get_by_test_id("bookrag-input").wait_for()


def _ask(page: Any, question: str, nth: int) -> Any:
    """Ask through the form; returns the request the widget sent and waits for answer `nth` (0-based)."""
    page.get_by_test_id("bookrag-input").fill(question)
    with page.expect_request(lambda r: r.url.endswith("/api/answer/stream")) as sent:
        page.get_by_test_id("bookrag-send").click()
    page.locator(DONE).nth(nth).wait_for(timeout=ANSWER_TIMEOUT_MS)
    return sent.value


def test_no_request_until_the_reader_opens_the_panel(served: Served, page: PageAndConsole) -> None:
    tab, console = page
    tab.goto(f"{served.base}/demo")
    tab.wait_for_load_state("networkidle")
    assert console.requests == [f"{served.base}/demo", f"{served.base}/widget/v1/bookrag.js"]
    tab.get_by_test_id("bookrag-open").click()
    tab.get_by_test_id("bookrag-input").wait_for()
    assert f"{served.base}/widget/v1/bookrag.css" in console.requests
    # Opening asks for this page's questions (issue 36), nothing else of the API.
    assert [url.split("?")[0] for url in console.requests if "/api/" in url] == [
        f"{served.base}/api/pages/suggestions"]
    assert console.errors == []


def test_an_in_book_question_streams_an_answer_with_fragment_citations(served: Served,
                                                                       page: PageAndConsole) -> None:
    tab, console = page
    _open(tab, served)
    with tab.expect_response(lambda r: r.url.endswith("/api/answer/stream")) as streamed:
        _ask(tab, "What is a topic in ROS 2?", 0)
    assert streamed.value.headers["content-type"].startswith("text/event-stream")
    answer = tab.locator(DONE).first
    assert answer.get_attribute("data-refusal") == "false"
    assert int(answer.get_attribute("data-deltas") or 0) >= 1  # text was shown before the final event
    assert "topic" in answer.inner_text().lower()
    links = [a.get_attribute("href") for a in tab.get_by_test_id("bookrag-citation").all()]
    assert links and any("#" in href and ":~:text=" in href for href in links), links
    screenshot(tab, "1-answer")
    assert console.errors == []


def test_an_off_book_question_is_refused_with_sections_to_read(served: Served, page: PageAndConsole) -> None:
    tab, console = page
    _open(tab, served)
    _ask(tab, "What is the capital of Australia?", 0)
    answer = tab.locator(DONE).first
    assert answer.get_attribute("data-refusal") == "true"
    assert "not answered in the book" in answer.inner_text()
    assert "You may want to read" in answer.inner_text()
    assert tab.get_by_test_id("bookrag-citation").count() == 0
    screenshot(tab, "2-refusal")
    assert console.errors == []


def test_ask_about_a_selected_sentence_cites_its_section(served: Served, page: PageAndConsole) -> None:
    tab, console = page
    tab.goto(f"{served.base}/demo")
    selected = tab.evaluate(SELECT_SENTENCE, ["qos_profile_sensor_data uses", "already on the way."])
    assert selected.startswith("qos_profile_sensor_data uses best effort")
    button = tab.get_by_test_id("bookrag-ask-selection")
    button.wait_for()
    screenshot(tab, "3-selection")
    button.click()
    tab.get_by_test_id("bookrag-input").wait_for()
    with tab.expect_request(lambda r: r.url.endswith("/api/answer/stream")) as sent:
        tab.get_by_test_id("bookrag-send").click()  # no question typed: "Explain this passage."
    tab.locator(DONE).first.wait_for(timeout=ANSWER_TIMEOUT_MS)
    body = sent.value.post_data_json
    assert body["selected_text"] == selected
    assert body["source_url"].endswith("/module-1-ros2/nodes-topics")
    links = [a.get_attribute("href") for a in tab.get_by_test_id("bookrag-citation").all()]
    assert any("/module-1-ros2/nodes-topics#predefined-profiles" in href for href in links), links
    screenshot(tab, "3-selection-answer")
    assert console.errors == []


def test_a_follow_up_is_asked_in_the_same_panel_with_the_earlier_turn(served: Served,
                                                                     page: PageAndConsole) -> None:
    tab, console = page
    _open(tab, served)
    first = _ask(tab, "What is a topic in ROS 2?", 0)
    assert "history" not in first.post_data_json
    second = _ask(tab, "Which QoS profile should a camera subscriber use?", 1)
    history = second.post_data_json["history"]
    assert [turn["question"] for turn in history] == ["What is a topic in ROS 2?"]
    assert history[0]["answer"]
    assert tab.locator(DONE).count() == 2
    assert tab.locator(DONE).nth(1).get_attribute("data-refusal") == "false"
    screenshot(tab, "4-follow-up")
    assert console.errors == []


def test_a_stopped_server_gives_a_friendly_error(own_server: Served, page: PageAndConsole) -> None:
    tab, console = page
    _open(tab, own_server)
    own_server.stop()
    tab.get_by_test_id("bookrag-input").fill("What is a node?")
    tab.get_by_test_id("bookrag-send").click()
    error = tab.get_by_test_id("bookrag-error")
    error.wait_for(timeout=ANSWER_TIMEOUT_MS)
    assert error.get_attribute("role") == "alert"
    assert "can't be reached" in error.inner_text()
    assert "Error" not in error.inner_text() and "fetch" not in error.inner_text().lower()
    screenshot(tab, "5-server-stopped")
    # The browser itself logs the refused connection; the widget adds nothing of its own.
    assert [e for e in console.errors if "ERR_CONNECTION_REFUSED" not in e] == []


def test_the_panel_works_from_the_keyboard(served: Served, page: PageAndConsole) -> None:
    tab, console = page
    tab.goto(f"{served.base}/demo")
    for _ in range(80):  # Tab through the page's links until the launcher has the focus
        tab.keyboard.press("Tab")
        if tab.evaluate("document.activeElement.dataset.testid") == "bookrag-open":
            break
    else:
        raise AssertionError("the launcher is not reachable with Tab")
    launcher = tab.get_by_test_id("bookrag-open")
    assert launcher.get_attribute("aria-expanded") == "false"
    tab.keyboard.press("Enter")
    tab.get_by_test_id("bookrag-input").wait_for()
    assert tab.evaluate("document.activeElement.dataset.testid") == "bookrag-input"
    dialog = tab.get_by_role("dialog", name="Ask the book")
    assert dialog.is_visible()
    assert tab.get_by_label("Your question about the book").count() == 1
    tab.keyboard.type("What is a node?")
    tab.keyboard.press("Enter")
    tab.locator(DONE).first.wait_for(timeout=ANSWER_TIMEOUT_MS)
    assert tab.evaluate("document.activeElement.dataset.testid") == "bookrag-input"
    screenshot(tab, "6-keyboard")
    tab.keyboard.press("Escape")
    assert not dialog.is_visible()
    assert tab.evaluate("document.activeElement.dataset.testid") == "bookrag-open"
    assert console.errors == []


def test_the_panel_follows_a_dark_site(served: Served, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 860}, color_scheme="dark")
    tab = context.new_page()
    console = Console.watch(tab)
    try:
        _open(tab, served)
        _ask(tab, "How do I inspect topics from the command line?", 0)
        background = tab.evaluate(
            "getComputedStyle(document.querySelector('.bookrag-panel')).backgroundColor")
        assert background == "rgb(27, 27, 29)"
        # A Docusaurus site that switches to light overrides the system preference.
        tab.evaluate("document.documentElement.setAttribute('data-theme', 'light')")
        tab.wait_for_function("!document.querySelector('.bookrag-root').classList.contains('bookrag-dark')")
        screenshot(tab, "7-light-after-toggle")
        tab.evaluate("document.documentElement.setAttribute('data-theme', 'dark')")
        tab.wait_for_function("document.querySelector('.bookrag-root').classList.contains('bookrag-dark')")
        screenshot(tab, "7-dark")
        assert console.errors == []
    finally:
        context.close()
