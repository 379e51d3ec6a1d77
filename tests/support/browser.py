"""Helpers for the browser tests: where chromium is, what a page logged, where screenshots go."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.paths import ROOT

ARTIFACTS = ROOT / "test-artifacts" / "browser"  # gitignored; CI keeps it as the run's artifacts
ANSWER_TIMEOUT_MS = 90_000  # a generous bound on a loaded CI machine, not a speed target


def chromium_path() -> str | None:
    """Debian's chromium (`apt-get install chromium`), or None."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class Console:
    """Console errors, uncaught exceptions and requests of one page."""

    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    @classmethod
    def watch(cls, page: Any) -> Console:
        seen = cls()
        page.on("console", lambda m: seen.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: seen.errors.append(str(e)))
        page.on("request", lambda r: seen.requests.append(r.url))
        return seen


def screenshot(page: Any, name: str) -> Path:
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def drawn_pixels(locator: Any) -> int:
    """How many pixels of an element's box differ clearly from its most common colour (its background): an
    icon that did not draw (a missing glyph's blank, a colour equal to its background) has next to none."""
    from io import BytesIO

    from PIL import Image

    image = Image.open(BytesIO(locator.screenshot(animations="disabled"))).convert("RGB")
    data = image.tobytes()
    pixels = [data[i:i + 3] for i in range(0, len(data), 3)]
    background = max(set(pixels), key=pixels.count)
    return sum(1 for p in pixels if sum(abs(a - b) for a, b in zip(p, background, strict=True)) > 96)


# Selects the sentence of a chapter paragraph that ends with `end`, from the paragraph's start, as a
# reader's mouse would (a Range over the paragraph's text nodes), then releases the mouse.
SELECT_SENTENCE = """([start, end]) => {
  const p = [...document.querySelectorAll('#chapter p')].find(x => x.textContent.includes(start));
  const from = p.textContent.indexOf(start), to = p.textContent.indexOf(end) + end.length;
  const walker = document.createTreeWalker(p, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  let pos = 0, node, started = false;
  while ((node = walker.nextNode())) {
    const len = node.textContent.length;
    if (!started && pos + len > from) { range.setStart(node, from - pos); started = true; }
    if (started && pos + len >= to) { range.setEnd(node, to - pos); break; }
    pos += len;
  }
  const selection = getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  p.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
  return selection.toString();
}"""


DONE = "[data-testid=bookrag-answer][data-refusal]"  # an answer the widget has finished rendering


def add_widget(tab: Any, api: str, **data: str) -> None:
    """The two lines a book owner adds (docusaurus.config.js `scripts`), as the page runs them."""
    attrs = {"data-book": "Physical AI", "data-api": api, **{f"data-{k.replace('_', '-')}": v for k, v in data.items()}}
    tab.evaluate("""([src, attrs]) => new Promise((ok, fail) => {
        const s = document.createElement('script');
        s.src = src; s.defer = true; s.onload = ok; s.onerror = fail;
        for (const [k, v] of Object.entries(attrs)) s.setAttribute(k, v);
        document.body.appendChild(s);
    })""", [f"{api}/widget/v1/bookrag.js", attrs])
    tab.get_by_test_id("bookrag-open").wait_for()
