"""The report's HTML page in Debian's chromium: every chart is an image that decodes, nothing on the page
fails, and a reader's `<script>` question is text, not a script."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.integration.test_report_cli import SCRIPT, _run, _write_log
from tests.support.browser import Console, screenshot


def test_the_report_page_renders_its_charts(book_env: Any, use_env: Callable[..., None], tmp_path: Path,
                                             page: tuple[Any, Console]) -> None:
    _write_log(tmp_path / "log", time.time())
    use_env(QUESTION_LOG_PATH=str(tmp_path / "log"))
    report = tmp_path / "report.html"
    assert _run("--html", str(report)).exit_code == 0
    tab, console = page
    tab.on("dialog", lambda d: console.errors.append(f"a dialog opened: {d.message}"))
    tab.goto(report.as_uri())
    tab.wait_for_load_state("load")
    charts = tab.locator("img.chart")
    assert charts.count() >= 4
    sizes = tab.eval_on_selector_all("img.chart", "imgs => imgs.map(i => [i.complete, i.naturalWidth, i.width])")
    assert all(done and natural >= 600 and shown > 0 for done, natural, shown in sizes), sizes
    assert tab.get_by_text(SCRIPT).count() == 1  # shown as the reader typed it
    assert tab.evaluate("document.scripts.length") == 0
    screenshot(tab, "report")
    assert console.errors == []
