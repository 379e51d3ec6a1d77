"""The questions a page answers (issue 36): how many pages get one, whether POST /api/answer answers each with a
citation to its page, and how soon the widget shows them.

    QDRANT_PATH=<ingested store> python benchmarks/suggestions_bench.py answers NAME   # coverage, answers
    python benchmarks/suggestions_bench.py widget [--runs 20]                        # panel open -> buttons

`answers`: every page's questions as `bookrag ingest` stored them, each asked through the app's POST /api/answer
(in process, the local embedder and the extractive answerer). `widget`: the sample book ingested into a temporary
store and served by `bookrag serve` on 127.0.0.1; Debian's chromium opens /demo, clicks the launcher and records,
in the page, the time from the click to the suggestions' buttons being in the panel (`performance.now()`), and
whether the input box moved when they came. A fresh page each run (the questions are fetched on the panel's
first opening), the first run discarded. -> benchmarks/suggestions.json, suggestions.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "benchmarks" / "suggestions"

# Resolves with {ms, shifted}: the click on the launcher to the first suggestion button in the panel.
OPEN_AND_WAIT = """() => new Promise(done => {
  const launcher = document.querySelector('[data-testid=bookrag-open]');
  let t0 = 0, before = null;
  const seen = () => {
    const button = document.querySelector('[data-testid=bookrag-suggestion]');
    const input = document.querySelector('[data-testid=bookrag-input]');
    // Layout boxes (offset*): the panel's fade-in slides it by a transform, which is not a layout shift.
    const box = el => el && [el.offsetLeft, el.offsetTop, el.offsetWidth, el.offsetHeight];
    if (input && !before) before = box(input);
    if (!button) return false;
    const after = box(input);
    done({ms: performance.now() - t0, shifted: JSON.stringify(before) !== JSON.stringify(after)});
    return true;
  };
  new MutationObserver((_, observer) => { if (seen()) observer.disconnect(); })
    .observe(document.body, {childList: true, subtree: true});
  t0 = performance.now();
  launcher.click();
})"""


def answers(name: str) -> dict[str, Any]:
    from fastapi.testclient import TestClient

    from bookrag.adapters.store.port import SUGGESTIONS_FIELD
    from bookrag.services.container import current
    from bookrag.web.app import create_app

    client = TestClient(create_app("agent"))
    pages = {str(p["source_file"]): list(p.get(SUGGESTIONS_FIELD) or [])
             for p in current().store.scroll_payloads(["source_file", SUGGESTIONS_FIELD])}
    failed: list[dict[str, Any]] = []
    total = 0
    started = time.perf_counter()
    for source_file, questions in sorted(pages.items()):
        for question in questions:
            total += 1
            body = client.post("/api/answer", json={"query": question}).json()
            cited = [s["source_file"] for s in body["sources"]]
            if body["is_refusal"] or source_file not in cited:
                failed.append({"page": source_file, "question": question, "refused": body["is_refusal"],
                               "cited": cited[:3]})
    return {"book": name, "pages": len(pages), "pages_with_questions": sum(bool(q) for q in pages.values()),
            "coverage": round(sum(bool(q) for q in pages.values()) / max(len(pages), 1), 4),
            "questions": total, "answered_citing_page": total - len(failed),
            "answered_share": round((total - len(failed)) / max(total, 1), 4), "failed": failed,
            "seconds": round(time.perf_counter() - started, 1),
            "pages_without": sorted(p for p, q in pages.items() if not q)}


def widget(runs: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright
    from tests.support.browser import chromium_path
    from tests.support.serve import start

    work = Path(tempfile.mkdtemp(prefix="bookrag-suggestions-"))
    store = work / "store"
    env = {**os.environ, "QDRANT_PATH": str(store), "EMBEDDING_PROVIDER": "local", "QUESTION_LOG": "off"}
    subprocess.run([str(Path(sys.executable).parent / "bookrag"), "ingest", str(ROOT / "book" / "docs")], env=env,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    served = start(store, work, QUESTION_LOG="off")
    samples: list[float] = []
    shifted = 0
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path())
            for n in range(runs + 1):
                tab = browser.new_page(viewport={"width": 1280, "height": 860})
                tab.goto(f"{served.base}/demo")
                tab.get_by_test_id("bookrag-open").wait_for()
                result = tab.evaluate(OPEN_AND_WAIT)
                tab.close()
                if n:  # the first run warms the server's caches and the browser
                    samples.append(result["ms"])
                    shifted += bool(result["shifted"])
            browser.close()
    finally:
        served.stop()
        shutil.rmtree(work, ignore_errors=True)
    samples.sort()
    return {"runs": runs, "median_ms": round(statistics.median(samples), 1),
            "p95_ms": round(samples[max(0, int(len(samples) * 0.95) - 1)], 1), "max_ms": round(samples[-1], 1),
            "target_ms": 300, "input_moved_runs": shifted}


def write(data: dict[str, Any]) -> None:
    lines = ["# Suggested questions (issue 36)", "",
             f"{platform.machine()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} when written "
             "(`benchmarks/suggestions_bench.py`).", ""]
    for book in data.get("answers", {}).values():
        lines += [f"## {book['book']}: answered from their page", "",
                  f"- pages with at least one question: {book['pages_with_questions']} of {book['pages']} "
                  f"({book['coverage']:.1%})",
                  f"- questions answered by POST /api/answer with a citation to their page: "
                  f"{book['answered_citing_page']} of {book['questions']} ({book['answered_share']:.1%})",
                  f"- pages without one: {', '.join(book['pages_without']) or 'none'}", ""]
        lines += [f"  - not: \"{f['question']}\" ({f['page']}; {'refused' if f['refused'] else 'cited'} "
                  f"{', '.join(f['cited'])})" for f in book["failed"]]
        lines.append("")
    if "widget" in data:
        w = data["widget"]
        lines += ["## The widget: panel opened to suggestions shown (bookrag serve, chromium)", "",
                  f"{w['runs']} runs: median {w['median_ms']} ms, p95 {w['p95_ms']} ms, max {w['max_ms']} ms "
                  f"(target {w['target_ms']} ms); the input box moved in {w['input_moved_runs']} runs.", ""]
    OUT.with_suffix(".md").write_text("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["answers", "widget"])
    parser.add_argument("name", nargs="?", default="sample-book")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    path = OUT.with_suffix(".json")
    data: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    if args.mode == "answers":
        data.setdefault("answers", {})[args.name] = answers(args.name)
    else:
        data["widget"] = widget(args.runs)
    path.write_text(json.dumps(data, indent=1) + "\n")
    write(data)
    print(OUT.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
