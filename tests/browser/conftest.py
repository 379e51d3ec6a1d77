"""Browser fixtures: Debian's chromium driven by Playwright, and `bookrag serve` on the sample book."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import ARTIFACTS, Console, chromium_path
from tests.support.serve import Served, start


@pytest.fixture(scope="module")  # not session: its event loop must not outlive these tests
def browser() -> Iterator[Any]:
    executable = chromium_path()
    if executable is None:
        pytest.skip("chromium is not installed (make setup installs the Debian package as root)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        # Never `playwright install`: the system's chromium, headless.
        launched = playwright.chromium.launch(executable_path=executable, headless=True)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def served(indexed_book: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = start(indexed_book["QDRANT_PATH"], tmp_path_factory.mktemp("serve"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def own_server(indexed_book: dict[str, str], tmp_path: Path) -> Iterator[Served]:
    """A server of this test's own, which the test may stop."""
    server = start(indexed_book["QDRANT_PATH"], tmp_path)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def page(browser: Any) -> Iterator[tuple[Any, Console]]:
    """A fresh page (light theme) and what its console and network reported."""
    context = browser.new_context(viewport={"width": 1280, "height": 860}, color_scheme="light")
    tab = context.new_page()
    console = Console.watch(tab)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    yield tab, console
    context.close()
