"""The widget on a translated, versioned Docusaurus site (issue 35): `tests/fixtures/site-book` built by the
pinned Docusaurus packages and served on 127.0.0.1, `bookrag serve` on that site ingested whole, Debian's
chromium. On an Urdu page the widget sends the page's `<html lang>`, on a 2.0 page Docusaurus's
`docs-version-2.0` class, and each answer's citations are pages of that locale and version."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from bookrag.config.settings import load_settings
from bookrag.ingestion.ingestor import Ingestor
from bookrag.services.container import container_for
from tests.support import docusaurus
from tests.support import docusaurus_site as sites
from tests.support.browser import ANSWER_TIMEOUT_MS, DONE, add_widget, screenshot
from tests.support.paths import FIXTURES
from tests.support.serve import Served, start

SITE = FIXTURES / "site-book"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    reason = docusaurus.unavailable()
    if reason is not None:
        pytest.skip(f"the Docusaurus site cannot be built: {reason}")
    with sites.served(docusaurus.build_site(SITE, tmp_path_factory.mktemp("site-book"))) as origin:
        yield origin


@pytest.fixture(scope="module")
def site_server(site: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    store = tmp_path_factory.mktemp("site-store") / "qdrant"
    settings = load_settings(qdrant_path=store, embedding_provider="local")
    container = container_for(settings)
    Ingestor(settings, container.embedder, container.store).run(SITE)
    # The site's origin is allowed, as a book owner lists their site (CORS_ALLOWED_ORIGINS).
    server = start(store, tmp_path_factory.mktemp("site-serve"), CORS_ALLOWED_ORIGINS=site)
    try:
        yield server
    finally:
        server.stop()


def _ask(site: str, server: Served, browser: Any, page: str, question: str) -> tuple[str, list[str], dict[str, Any]]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.goto(site + page)
    add_widget(tab, server.base)
    tab.get_by_test_id("bookrag-open").click()
    tab.get_by_test_id("bookrag-input").fill(question)
    with tab.expect_request(lambda r: r.url.endswith("/api/answer/stream")) as sent:
        tab.get_by_test_id("bookrag-send").click()
    answer = tab.locator(DONE).first
    answer.wait_for(timeout=ANSWER_TIMEOUT_MS)
    text = answer.inner_text()
    cited = [unquote(urlsplit(a.get_attribute("href") or "").path)
             for a in answer.locator("[data-testid=bookrag-citation]").all()]
    screenshot(tab, "site-edition-" + page.strip("/").replace("/", "-"))
    body = sent.value.post_data_json
    context.close()
    return text, cited, body


def test_on_an_urdu_page_the_answer_cites_the_urdu_pages(site: str, site_server: Served, browser: Any) -> None:
    text, cited, body = _ask(site, site_server, browser, "/ur/docs/flight/battery",
                             "پوری بیٹری کیسٹرل کو کتنے منٹ ہوا میں رکھتی ہے؟")
    assert (body["locale"], body["version"]) == ("ur", "current")
    assert cited and all(path.startswith("/ur/docs/") and "/2.0/" not in path for path in cited)
    assert "35 منٹ" in text


def test_on_a_version_2_page_the_answer_cites_version_2(site: str, site_server: Served, browser: Any) -> None:
    text, cited, body = _ask(site, site_server, browser, "/docs/2.0/flight/battery",
                             "How long does a full battery keep Kestrel in the air?")
    assert (body["locale"], body["version"]) == ("en", "2.0")
    assert cited and all(path.startswith("/docs/2.0/") for path in cited)
    assert "22 minutes" in text and "35 minutes" not in text
