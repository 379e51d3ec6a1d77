"""The widget on a real Docusaurus 3.10 site (tests/support/docusaurus_site.py: the sample book built with the
npm registry's packages), in Debian's chromium: it keeps clear of the theme's fixed controls, offers "Ask
about this" for a touch selection, and renders an answer's Markdown safely and inside its panel."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import docusaurus_site as docusaurus
from tests.support.browser import ANSWER_TIMEOUT_MS, DONE, Console, add_widget, drawn_pixels, screenshot
from tests.support.paths import SAMPLE_DOCS
from tests.support.serve import Served, start

PAGE = "/docs/module-1-ros2/installation"  # a long page: a table of contents, a back-to-top button


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with docusaurus.served(docusaurus.build(SAMPLE_DOCS)) as origin:
        yield origin


BOXES = """() => {
  const box = el => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const launcher = document.querySelector('[data-testid=bookrag-open]');
  const toc = document.querySelector('.theme-doc-toc-desktop');
  const top = document.querySelector('.theme-back-to-top-button');
  const links = [...document.querySelectorAll('.table-of-contents a')];
  const last = links[links.length - 1];
  const r = last.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return {launcher: box(launcher), toc: box(toc), top: box(top), topShown: getComputedStyle(top).opacity,
          lastTocReachable: last.contains(hit) || hit === last};
}"""


def _overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


# Scrolls the page to `top` at once and resolves with scrollY when the scroll event has fired (the theme
# has seen it then: its listener was added first).
SCROLL = """top => new Promise(done => {
    addEventListener('scroll', () => done(scrollY), {once: true});
    scrollTo({top, behavior: 'instant'});
})"""


@pytest.mark.parametrize("corner", ["bottom-right", "bottom-left"])
def test_the_launcher_covers_neither_back_to_top_nor_the_table_of_contents(site: str, served: Served,
                                                                          browser: Any, corner: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.goto(site + PAGE)
    add_widget(tab, served.base, position=corner)
    # Down to the bottom, then a little up: the theme shows back-to-top when the page scrolls up. Only once
    # React has hydrated: the theme's scroll listener is added then, and one that starts after both scrolls
    # sees no move up and keeps the button hidden (failed twice in full runs, when hydration came late).
    tab.wait_for_function("document.documentElement.dataset.hasHydrated === 'true'")
    bottom = tab.evaluate(SCROLL, tab.evaluate("document.documentElement.scrollHeight"))
    assert bottom > 300
    tab.evaluate(SCROLL, bottom - 200)
    tab.wait_for_function("document.querySelector('.theme-back-to-top-button').className.includes('Show')")
    tab.wait_for_function("getComputedStyle(document.querySelector('.theme-back-to-top-button')).opacity === '1'")

    boxes = tab.evaluate(BOXES)
    screenshot(tab, f"docusaurus-launcher-{corner}")
    context.close()

    assert not _overlap(boxes["launcher"], boxes["top"]), boxes
    assert not _overlap(boxes["launcher"], boxes["toc"]), boxes
    assert boxes["lastTocReachable"], "the table of contents' last entry is under something"
    if corner == "bottom-left":
        assert boxes["launcher"][0] < 640


def test_a_touch_selection_offers_ask_about_this(site: str, served: Served, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    tab = context.new_page()
    tab.goto(site + PAGE)
    add_widget(tab, served.base)

    # A long-press selects a word and its handles extend it: selectionchange only, no mouseup or keyup.
    selected = tab.evaluate("""() => {
        const p = [...document.querySelectorAll('article p')].find(x => x.textContent.length > 80);
        const range = document.createRange();
        range.selectNodeContents(p);
        getSelection().removeAllRanges();
        getSelection().addRange(range);
        return getSelection().toString().replace(/\\s+/g, ' ').trim();
    }""")
    ask = tab.get_by_test_id("bookrag-ask-selection")
    ask.wait_for(state="visible")
    ask.tap()
    chip = tab.locator(".bookrag-chip")
    chip.wait_for(state="visible")
    screenshot(tab, "docusaurus-touch-selection")
    text = chip.inner_text()
    context.close()

    assert selected[:40] in text.replace("…", "")


MARKDOWN = ("Install it with these steps [1]:\n\n"
            "- Add the **ROS 2** apt repository\n- Run `sudo apt install ros-humble-desktop`\n\n"
            "1. Source the setup file\n2. Check it: `ros2 --help`\n\n"
            "```yaml\nmy_node:\n  ros__parameters:\n    "
            + "a_very_long_parameter_name_that_never_wraps: " + "x" * 160 + "\n```\n\n"
            "<img src=x onerror=\"window.__injected=1\"> and <script>window.__injected=2</script> stay text.")


QUERY_ID = "query_" + "0" * 32


def _stream_stub(tab: Any, stream_url: str, answer: str) -> None:
    """The service's stream, as a stub on the stream URL the owner configured (data-stream-api); its
    X-Query-Id gives the answer its thumbs."""
    tab.route(stream_url, lambda route: route.fulfill(status=200, body=_sse(answer), headers={
        "content-type": "text/event-stream", "access-control-allow-origin": "*", "x-query-id": QUERY_ID,
        "access-control-expose-headers": "X-Query-Id"}))


def _sse(answer: str) -> str:
    final = {"answer": answer, "is_refusal": False, "refusal_reason": "",
             "sources": [{"chapter": "Installing ROS 2 Humble", "section": "Installing", "chunk_id": "c1",
                          "source_url": "http://127.0.0.1/docs/module-1-ros2/installation", "score": 0.9,
                          "source_file": "module-1-ros2/installation.md", "quotes": []}]}
    head = answer[: len(answer) // 2]
    return "".join(f"event: {kind}\ndata: {json.dumps(data)}\n\n" for kind, data in [
        ("sources", {"sources": final["sources"]}), ("delta", {"text": head}),
        ("delta", {"text": answer[len(head):]}), ("final", final)])


def test_markdown_answers_render_as_lists_and_code_without_html_or_overflow(site: str, served: Served,
                                                                            browser: Any) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    # The service's stream, as a stub on the stream URL the owner configured (data-stream-api).
    stream_url = f"{served.base}/stream-fn/api/answer/stream"
    _stream_stub(tab, stream_url, MARKDOWN)
    tab.goto(site + PAGE)
    add_widget(tab, served.base, stream_api=f"{served.base}/stream-fn")
    tab.get_by_test_id("bookrag-open").click()
    tab.get_by_test_id("bookrag-input").fill("How do I install ROS 2?")
    with tab.expect_request(lambda r: r.url == stream_url):
        tab.get_by_test_id("bookrag-send").click()
    answer = tab.locator(DONE).first
    answer.wait_for(timeout=ANSWER_TIMEOUT_MS)

    shape = answer.evaluate("""a => {
        const pre = a.querySelector('pre'), panel = document.querySelector('#bookrag-panel');
        return {ul: [...a.querySelectorAll('ul > li')].map(li => li.textContent),
                ol: [...a.querySelectorAll('ol:not(.bookrag-sources) > li')].map(li => li.textContent),
                strong: [...a.querySelectorAll('strong')].map(x => x.textContent),
                code: [...a.querySelectorAll(':not(pre) > code')].map(x => x.textContent),
                pre: pre && pre.textContent, preScrolls: pre && pre.scrollWidth > pre.clientWidth,
                preInside: pre && pre.getBoundingClientRect().right <= panel.getBoundingClientRect().right,
                panelScrollsSideways: document.querySelector('.bookrag-log').scrollWidth
                    > document.querySelector('.bookrag-log').clientWidth,
                imgs: a.querySelectorAll('img, script').length, injected: window.__injected || 0,
                text: a.textContent};
    }""")
    screenshot(tab, "docusaurus-markdown-answer")
    context.close()

    assert shape["ul"] == ["Add the ROS 2 apt repository", "Run sudo apt install ros-humble-desktop"]
    assert shape["ol"] == ["Source the setup file", "Check it: ros2 --help"]
    assert shape["strong"] == ["ROS 2"] and "ros2 --help" in shape["code"]
    assert shape["pre"].startswith("my_node:\n  ros__parameters:\n")  # its lines and indentation kept
    assert shape["preScrolls"] and shape["preInside"] and not shape["panelScrollsSideways"]
    assert shape["imgs"] == 0 and shape["injected"] == 0
    assert '<img src=x onerror="window.__injected=1">' in shape["text"]


ICONS = {"launcher": "[data-testid=bookrag-open] svg", "close": ".bookrag-close svg",
         "thumbs up": "[data-testid=bookrag-vote-up] svg", "thumbs down": "[data-testid=bookrag-vote-down] svg"}


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_icons_are_drawn_svgs_with_accessible_names_in_both_themes(site: str, served: Served, browser: Any,
                                                                       theme: str) -> None:
    # GIVEN the widget on a Docusaurus page in the site's light or dark theme, in Debian's chromium (which has
    # no colour-emoji font: the emoji thumbs drew as empty boxes)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    stream_url = f"{served.base}/stream-fn/api/answer/stream"
    _stream_stub(tab, stream_url, "ROS 2 is installed from its apt repository [1].")
    tab.goto(site + PAGE)
    tab.evaluate(f"document.documentElement.setAttribute('data-theme', '{theme}')")
    add_widget(tab, served.base, stream_api=f"{served.base}/stream-fn")
    drawn = {"launcher": drawn_pixels(tab.locator(ICONS["launcher"]))}
    # WHEN an answer with its thumbs is on screen
    tab.get_by_test_id("bookrag-open").click()
    tab.get_by_test_id("bookrag-input").fill("How do I install ROS 2?")
    tab.get_by_test_id("bookrag-send").click()
    tab.locator(DONE).first.wait_for(timeout=ANSWER_TIMEOUT_MS)
    drawn |= {name: drawn_pixels(tab.locator(selector)) for name, selector in ICONS.items() if name != "launcher"}
    names = tab.evaluate("""() => [...document.querySelectorAll(
        '[data-testid=bookrag-open], .bookrag-close, .bookrag-vote')].map(b => ({
            label: b.getAttribute('aria-label') || b.textContent.trim(), glyphs: b.textContent.trim(),
            icon: b.querySelector('svg') && b.querySelector('svg').getAttribute('aria-hidden')}))""")
    panel = tab.evaluate("getComputedStyle(document.querySelector('.bookrag-panel')).backgroundColor")
    screenshot(tab, f"docusaurus-icons-{theme}")
    context.close()

    # THEN each icon is an SVG that put pixels on screen, hidden from assistive technology, on a button whose
    # name says what it does, and no button leans on a font glyph (an emoji) for its picture
    assert all(count >= 20 for count in drawn.values()), drawn
    assert [n["label"] for n in names] == ["Ask the book", "Close the book assistant", "This answer helped",
                                           "This answer did not help"]
    assert all(n["icon"] == "true" for n in names)
    assert [n["glyphs"] for n in names] == ["Ask the book", "", "", ""]
    assert (panel == "rgb(27, 27, 29)") == (theme == "dark")


# Resolves with {ms, moved}: from the click on the launcher to the page's suggestions in the panel, and whether
# the input box moved when they came (benchmarks/suggestions_bench.py times the same on `bookrag serve`).
OPEN_UNTIL_SUGGESTED = """() => new Promise(done => {
  let before = null;
  const seen = () => {
    const input = document.querySelector('[data-testid=bookrag-input]');
    // Layout boxes (offset*): the panel's fade-in slides it by a transform, which is not a layout shift.
    const box = el => JSON.stringify([el.offsetLeft, el.offsetTop, el.offsetWidth, el.offsetHeight]);
    if (input && !before) before = box(input);
    if (!document.querySelector('[data-testid=bookrag-suggestion]')) return false;
    done({moved: before !== box(input)});
    return true;
  };
  new MutationObserver((_, observer) => { if (seen()) observer.disconnect(); })
    .observe(document.body, {childList: true, subtree: true, attributes: true});
  document.querySelector('[data-testid=bookrag-open]').click();
  setTimeout(() => done({moved: null}), 60000);  // a bound, so a missing button fails instead of hanging
})"""


@pytest.fixture
def site_server(site: str, indexed_book: dict[str, str], tmp_path: Path) -> Iterator[Served]:
    """`bookrag serve` that lets the Docusaurus site call it (CORS), as a book owner configures it."""
    server = start(indexed_book["QDRANT_PATH"], tmp_path, CORS_ALLOWED_ORIGINS=site)
    try:
        yield server
    finally:
        server.stop()


def test_the_panel_opens_on_the_questions_its_page_answers_and_a_click_asks_one(site: str, site_server: Served,
                                                                                browser: Any) -> None:
    # GIVEN the widget on a page of the real Docusaurus build, whose questions were found at ingest
    served, page = site_server, "/docs/module-1-ros2/nodes-topics"  # a page that defines its terms
    expected = httpx.get(f"{served.base}/api/pages/suggestions",
                         params={"url": f"http://localhost:3000{page}"}).json()["suggestions"]
    assert expected
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    console = Console.watch(tab)
    tab.goto(site + page)
    add_widget(tab, served.base)
    # WHEN the reader opens it THEN the page's questions are offered as buttons, and nothing moved for them
    with tab.expect_response(lambda r: "/api/pages/suggestions?url=" in r.url) as fetched:
        opened = tab.evaluate(OPEN_UNTIL_SUGGESTED)
    status = fetched.value.status
    buttons = tab.get_by_test_id("bookrag-suggestion")
    shown = buttons.all_inner_texts()
    named = tab.get_by_role("group", name="Questions this page answers").count()
    tab.wait_for_function("!document.getAnimations().some(a => a.playState === 'running')")  # the panel's fade-in
    screenshot(tab, "docusaurus-suggestions")  # the README's picture (docs/widget-suggestions.png)
    # WHEN one is clicked THEN it is asked, answered, and the answer cites this page
    with tab.expect_request(lambda r: r.url.endswith("/api/answer/stream")):
        buttons.first.click()
    answer = tab.locator(DONE).first
    answer.wait_for(timeout=ANSWER_TIMEOUT_MS)
    refused = answer.get_attribute("data-refusal")
    cited = [a.get_attribute("href") or "" for a in tab.get_by_test_id("bookrag-citation").all()]
    asked = tab.locator(".bookrag-question").first.inner_text()
    left = tab.get_by_test_id("bookrag-suggestion").count()
    context.close()

    assert shown == expected and named == 1
    assert opened["moved"] is False
    assert asked == expected[0] and refused == "false"
    assert any("/module-1-ros2/nodes-topics" in href for href in cited), cited
    assert left == 0 and status == 200  # the conversation took the log
    # The static server of the built site answers a 404 of its own (not the widget's); ours answered.
    assert not [e for e in console.errors if "bookrag" in e or served.base in e]
