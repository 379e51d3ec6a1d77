"""The README's picture of `bookrag report --html` (docs/report.png): a synthetic log on textbook-2 reported, the
page opened in Debian's chromium through Playwright (never a browser download), its top screenshotted.

    QDRANT_PATH=<textbook-2 store> python benchmarks/report_screenshot.py [--records 3000] [--out docs/report.png]

The log comes from `question_log_synth.py` with the agent's answers kept in
benchmarks/report-asked-textbook-2.json (textbook-2's eval questions and the off-book ones, asked once
through the extractive agent; delete it to ask again).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "shared"))

import question_log_synth as synth  # noqa: E402

ASKED = HERE / "report-asked-textbook-2.json"
QUESTIONS = ["textbook-2.jsonl", "answers-textbook-2.jsonl", "short-sections-textbook-2.jsonl",
             "textbook-2-answers.jsonl", "grounding-textbook-2.jsonl"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=3000)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "report.png")
    parser.add_argument("--height", type=int, default=1500, help="Pixels of the page's top to keep")
    args = parser.parse_args()
    if ASKED.exists():
        asked = json.loads(ASKED.read_text(encoding="utf-8"))
    else:
        asked = synth.ask_all(synth.base_questions([ROOT / "eval" / name for name in QUESTIONS]))
        ASKED.write_text(json.dumps(asked, separators=(",", ":")) + "\n", encoding="utf-8")
    work = Path(tempfile.mkdtemp(prefix="report-shot-"))
    try:
        records, votes = synth.synthesise(asked, args.records, 30, 0.3, seed=7, now=time.time())
        synth.write_log(work / "log", records, votes)
        page = work / "report.html"
        env = {**os.environ, "QUESTION_LOG_PATH": str(work / "log"), "EMBEDDING_PROVIDER": "local"}
        subprocess.run([str(Path(sys.executable).parent / "bookrag"), "report", "--html", str(page)], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        shoot(page, args.out, args.height)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"-> {args.out}")


def shoot(page: Path, out: Path, height: int) -> None:
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        raise SystemExit("chromium is not installed (apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True)
        tab = browser.new_page(viewport={"width": 1100, "height": height}, device_scale_factor=1)
        tab.goto(page.as_uri())
        tab.wait_for_load_state("load")
        tab.screenshot(path=str(out))
        browser.close()


if __name__ == "__main__":
    main()
