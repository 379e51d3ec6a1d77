"""A whole Docusaurus site through the real ingest and the real answerer (issue 35): `tests/fixtures/site-book`
(English and Urdu, versions 3.0 (current) and 2.0, partials) built by the pinned Docusaurus packages, ingested
into Qdrant Edge with the local embedder, asked through the extractive agent.

Every stored chunk is a page of the built site in its own locale and version (`<html lang>`, the
`docs-version-*` class, its anchor's id); every URL an answer cites answers HTTP 200 from the built site and
belongs to the locale and version asked. Skips when node or npm is missing.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from bookrag.config.settings import Settings, load_settings
from bookrag.ingestion.ingestor import Ingestor
from bookrag.services.container import container_for
from tests.support import docusaurus
from tests.support.paths import FIXTURES

SITE = FIXTURES / "site-book"
BASE = "http://localhost:3000/docs"  # BOOK_BASE_URL's default: the built site is served at another port


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reason = docusaurus.unavailable()
    if reason is not None:
        pytest.skip(f"a Docusaurus build needs node and npm: {reason}")
    return docusaurus.build_site(SITE, tmp_path_factory.mktemp("site-book"))


@pytest.fixture(scope="module")
def served(built: Path) -> Iterator[str]:
    """The built site over HTTP on 127.0.0.1, as a reader's browser would fetch a cited page."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(built)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    settings = load_settings(qdrant_path=tmp_path_factory.mktemp("site-store") / "qdrant", embedding_provider="local")
    container = container_for(settings)
    report = Ingestor(settings, container.embedder, container.store).run(SITE)
    assert report.skipped == [] and report.warnings == [] and report.files_seen == 16
    return settings


def _payloads(settings: Settings) -> list[dict[str, Any]]:
    fields = ["source_file", "source_url", "locale", "version", "content_locale", "content_text"]
    return list(container_for(settings).store.scroll_payloads(fields))


def _page(build: Path, url: str) -> str:
    path = unquote(urlsplit(url).path).strip("/")
    return (build / path / "index.html").read_text(encoding="utf-8")


def test_every_chunk_is_a_page_of_its_own_locale_and_version(built: Path, site_settings: Settings) -> None:
    payloads = _payloads(site_settings)
    editions = {(p["locale"], p["version"]) for p in payloads}
    assert editions == {("en", "current"), ("en", "2.0"), ("ur", "current"), ("ur", "2.0")}
    for p in payloads:
        html = _page(built, p["source_url"])
        tag = re.search(r"<html[^>]*>", html)
        assert tag is not None
        assert f'lang="{p["locale"]}"' in tag.group(0), p["source_url"]
        assert f"docs-version-{p['version']}" in tag.group(0), p["source_url"]
        anchor = unquote(urlsplit(p["source_url"]).fragment)
        assert not anchor or f'id="{anchor}"' in html, p["source_url"]
    # An untranslated page is the English page served at the Urdu URL, as the site builds it.
    fallback = [p for p in payloads if p["source_url"].endswith("/ur/docs/2.0/flight/sensors")]
    assert fallback and all(p["content_locale"] == "en" and "12 megapixel" in p["content_text"] for p in fallback)
    # The partials are in each page that renders them: the escaped path and the @site/ import.
    setup = " ".join(p["content_text"] for p in payloads if p["source_url"].split("#")[0].endswith("/ur/docs/setup"))
    assert "پندرہ میٹر" in setup and "support desk" in setup
