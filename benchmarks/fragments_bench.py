"""Do the answers' text-fragment links highlight the passage they cite, on the book as readers see it?

Textbook-2 is built as a real Docusaurus 3.10 site (tests/support/docusaurus_site.py, npm packages) and served
on 127.0.0.1; the book is ingested (local embedder) with BOOK_BASE_URL pointing at a placeholder host, and
every question of eval/textbook-2.jsonl and eval/answers-textbook-2.jsonl is answered by the extractive
answerer. Each quote's `fragment_url` is then opened in Debian's chromium, where `text_fragment.js` finds
the fragment's first match on the rendered page (sidebar, breadcrumbs, headings, table of contents and
all) the way the Text Fragments algorithm does. A fragment counts as right when that match starts inside
the cited section (between its heading and the next heading of its level); "starts on a heading" is
counted too (the quote should not begin with its heading's text).

Usage: python benchmarks/fragments_bench.py [--label before|after] -> benchmarks/fragments-results.json
(one entry per label), fragments-results.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TEXTBOOK_2 = ROOT.parent / "shared" / "corpus" / "physical-ai-textbook-2" / "docs"
STORE = ROOT / ".bookrag" / "bench-tb2"
PLACEHOLDER = "http://book.local/docs"
OUT = ROOT / "benchmarks"
QUESTION_SETS = ["textbook-2.jsonl", "answers-textbook-2.jsonl"]


def ingest() -> None:
    env = {**os.environ, "QDRANT_PATH": str(STORE), "EMBEDDING_PROVIDER": "local", "BOOK_BASE_URL": PLACEHOLDER}
    subprocess.run([sys.executable, "-m", "bookrag.devtools.cli", "ingest", str(TEXTBOOK_2)], env=env, check=True,
                   capture_output=True)


def quotes() -> list[dict[str, str]]:
    os.environ.update(QDRANT_PATH=str(STORE), EMBEDDING_PROVIDER="local", LLM_PROVIDER="extractive",
                      BOOK_BASE_URL=PLACEHOLDER, POWERTOOLS_METRICS_DISABLED="true")
    from bookrag.services.python_api import run_agent

    seen: dict[str, dict[str, str]] = {}
    for name in QUESTION_SETS:
        for line in (ROOT / "eval" / name).read_text().splitlines():
            if not line.strip():
                continue
            response = run_agent(json.loads(line)["question"])
            for source in response.sources:
                for quote in source.quotes or []:
                    seen.setdefault(quote.fragment_url, {"url": quote.fragment_url, "source_url": source.source_url,
                                                         "quote": quote.text})
    return list(seen.values())


def check(found: list[dict[str, str]], origin: str) -> list[dict[str, object]]:
    from playwright.sync_api import sync_playwright
    from tests.support.browser import chromium_path

    matcher = (OUT / "text_fragment.js").read_text()
    results = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        for q in found:
            page_url, _, directive = q["url"].partition(":~:")
            path, _, anchor = urlsplit(page_url).path, None, urlsplit(page_url).fragment.rstrip("#") or None
            local = origin + path
            if page.url.split("#")[0] != local:
                page.goto(local)
                page.wait_for_load_state("load")
            outcome = page.evaluate(matcher, [directive, anchor]) if directive else {"found": False,
                                                                                     "anchor_only": True}
            results.append({**q, **outcome})
        browser.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--label", default="now")
    parser.add_argument("--reuse-store", action="store_true")
    args = parser.parse_args()
    if not TEXTBOOK_2.is_dir():
        print("textbook-2 is absent: nothing to measure")
        return
    from tests.support import docusaurus_site as docusaurus

    if not args.reuse_store or not STORE.exists():
        shutil.rmtree(STORE, ignore_errors=True)
        ingest()
    found = quotes()
    site = docusaurus.build(TEXTBOOK_2)
    with docusaurus.served(site) as origin:
        results = check(found, origin)
    right = sum(1 for r in results if r.get("inSection"))
    anchor_only = sum(1 for r in results if r.get("anchor_only"))
    on_heading = sum(1 for r in results if r.get("startsOnHeading"))
    summary = {"fragments": len(results), "in_cited_section": right,
               "share": round(right / len(results), 4) if results else None, "start_on_a_heading": on_heading,
               "anchor_only": anchor_only,
               "share_of_fragments": round(right / (len(results) - anchor_only), 4) if results else None,
               "not_found": sum(1 for r in results if not r.get("found") and not r.get("anchor_only")),
               "wrong": [{k: r[k] for k in ("url", "where") if k in r} for r in results
                         if not r.get("inSection") and not r.get("anchor_only")]}
    path = OUT / "fragments-results.json"
    stored = json.loads(path.read_text()) if path.exists() else {}
    stored[args.label] = summary
    path.write_text(json.dumps(stored, indent=1, ensure_ascii=False) + "\n")
    lines = ["# Text fragments on textbook-2 as a Docusaurus 3.10 site", "",
             "`python benchmarks/fragments_bench.py --label L`: every quote of the extractive answers to "
             "eval/textbook-2.jsonl and eval/answers-textbook-2.jsonl, opened on the built site in chromium "
             "(benchmarks/text_fragment.js finds the fragment's first match).", "",
             "| run | quotes | first match in the cited section | share | of links with a fragment | "
             "anchor only (no highlight) | starting on a heading | wrong place or not found |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for label, s in stored.items():
        anchor = s.get("anchor_only", 0)
        of_fragments = s.get("share_of_fragments", s["share"])
        lines.append(f"| {label} | {s['fragments']} | {s['in_cited_section']} | {s['share']:.1%} | "
                     f"{of_fragments:.1%} | "
                     f"{anchor} | {s['start_on_a_heading']} | {s['fragments'] - s['in_cited_section'] - anchor} |")
    (OUT / "fragments-results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    for wrong in summary["wrong"][:20]:
        print(" ", wrong)


if __name__ == "__main__":
    main()
