"""MDX books as the site renders them (issue 28): artefact chunks, anchors against a real Docusaurus build,
answers whose text lives in a partial or a tab.

    python benchmarks/mdx/measure.py --label after [--out benchmarks/mdx/after.json] [--no-build]

Books: tests/fixtures/mdx-book (ours, every shape) and tests/fixtures/docusaurus-template (the vendored
Docusaurus template docs), plus physical-ai-textbook-2 for artefacts when ../shared is present. The same
script measured the code before the change (run with PYTHONPATH at that tree's `shared/`): it reads the
code through `Ingestor.load`, `build_chunks` and `Chunker.sections`, which both have. Answers go through
the real pipeline (`container_for(settings).agent.run`, the extractive answerer, the local embedder, an
embedded store in a temporary folder), as `bookrag ask` does.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))  # tests.support.docusaurus: the one Docusaurus build helper

BOOKS = {
    "mdx-book": ROOT / "tests" / "fixtures" / "mdx-book" / "docs",
    "docusaurus-template": ROOT / "tests" / "fixtures" / "docusaurus-template" / "docs",
    "textbook-2": ROOT.parent / "shared" / "corpus" / "physical-ai-textbook-2" / "docs",
}
BUILT = ("mdx-book", "docusaurus-template")
# (question, words the answer must hold, the page (and anchor) it must cite); answers in a partial or a tab.
QUESTIONS = [
    ("Which JDK version should I install for Orbiter development on macOS?", ["21"],
     "/guides/getting-started#java-development-kit"),
    ("Which version of the Zephyr toolkit compiles the wheel controller firmware?", ["4.2"],
     "/guides/getting-started#zephyr-toolkit"),
    ("Where do I copy the udev rules for the lidar mast?", ["/etc/udev/rules.d/"], "#udev-rules"),
    ("How do I install the orbiter command line tool with Yarn?", ["yarn global add orbiter-cli"],
     "/#install-the-command-line-tool"),
    ("Why does the odometer drift?", ["wheel ticks"], "/guides/telemetry#troubleshooting"),
]


def _artefact_checker() -> Any:
    """This tree's checker, loaded by path, so the same check reads the older code's chunks."""
    path = ROOT / "shared" / "bookrag" / "devtools" / "mdx_artefacts.py"
    spec = importlib.util.spec_from_file_location("mdx_artefacts_check", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.artefacts


def _settings(qdrant: Path) -> Any:
    from bookrag.config.settings import load_settings

    return load_settings(qdrant_path=qdrant, embedding_provider="local")


def chunks_of(docs: Path) -> tuple[list[Any], dict[str, list[Any]], list[Any]]:
    """(files, drafts per file, the report's skipped and warnings) through the ingest's own reading."""
    from bookrag.ingestion.ingestor import Ingestor, IngestReport
    from bookrag.services.container import container_for

    with tempfile.TemporaryDirectory() as tmp:
        settings = _settings(Path(tmp) / "q")
        ingestor = Ingestor(settings, container_for(settings).embedder, None)  # type: ignore[arg-type]
        report = IngestReport()
        files = ingestor.load(docs, report)
        drafts = {f.rel_path: ingestor.build_chunks(f) for f in files}
    notes = list(report.skipped) + list(getattr(report, "warnings", []))
    return files, drafts, notes


def artefact_figures(name: str, docs: Path) -> dict[str, Any]:
    check = _artefact_checker()
    files, drafts, notes = chunks_of(docs)
    kinds: dict[str, int] = {}
    examples: list[dict[str, Any]] = []
    total = with_any = 0
    for rel, chunk_list in drafts.items():
        for d in chunk_list:
            total += 1
            found = check(d.text, d.section_heading)
            if found:
                with_any += 1
                for kind in found:
                    kinds[kind] = kinds.get(kind, 0) + 1
                if len(examples) < 6:
                    examples.append({"file": rel, "kinds": found, "text": d.text[:240]})
    return {"book": name, "pages": len(files), "chunks": total, "chunks_with_artefacts": with_any,
            "by_kind": kinds, "examples": examples, "notes": [list(n) for n in notes]}


def our_headings(docs: Path) -> dict[str, dict[str, Any]]:
    """Per route: the section anchors (h2-h6, in order) and the anchors stored in chunk URLs."""
    from bookrag.ingestion.sections import Chunker
    from bookrag.text.tokens import approx_token_count

    files, drafts, _ = chunks_of(docs)
    out: dict[str, dict[str, Any]] = {}
    for f in files:
        sections = Chunker(approx_token_count, 200, 32).sections(f.doc.body)
        out[f.doc.route] = {
            "file": f.rel_path,
            "sections": [(s.level, s.anchor) for s in sections if s.level >= 2],
            "stored": sorted({d.anchor for d in drafts[f.rel_path] if d.anchor}),
        }
    return out


def anchor_figures(name: str, docs: Path, build_dir: Path) -> dict[str, Any]:
    from tests.support.docusaurus import rendered_headings

    ours = our_headings(docs)
    rendered_total = matched = stored_total = stored_ok = 0
    mismatches: list[dict[str, Any]] = []
    for route, mine in sorted(ours.items()):
        rendered = [h.id for h in rendered_headings(build_dir, route)]
        mine_ids = [a for _, a in mine["sections"]]
        rendered_total += len(rendered)
        matched += sum(1 for a, b in zip(rendered, mine_ids, strict=False) if a == b)  # equal, in place
        stored_total += len(mine["stored"])
        stored_ok += sum(1 for a in mine["stored"] if a in rendered)
        if rendered != mine_ids:
            mismatches.append({"route": route, "rendered": rendered, "ours": mine_ids})
    return {"book": name, "rendered_headings": rendered_total, "equal_in_place": matched,
            "stored_anchors": stored_total, "stored_anchors_in_build": stored_ok, "mismatches": mismatches}


def _page_and_anchor(url: str) -> str:
    parts = urlsplit(url)
    return (parts.path or "/") + (f"#{parts.fragment}" if parts.fragment else "")


def answer_figures(docs: Path) -> list[dict[str, Any]]:
    from bookrag.ingestion.ingestor import Ingestor
    from bookrag.services.container import container_for

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = _settings(Path(tmp) / "q")
        container = container_for(settings)
        Ingestor(settings, container.embedder, container.store).run(docs)
        for question, words, cite in QUESTIONS:
            response = container.agent.run(question)
            urls = [s.source_url for s in response.sources]
            holds = all(w.lower() in response.answer.lower() for w in words)
            cited = any(_page_and_anchor(u).endswith(cite) for u in urls)
            out.append({"question": question, "answer": response.answer[:400], "refused": response.is_refusal,
                        "sources": urls, "holds_answer": holds, "cites_expected": cited, "expected_cite": cite,
                        "ok": holds and cited and not response.is_refusal})
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--label", required=True)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--no-build", action="store_true", help="skip the Docusaurus builds (anchors)")
    args = parser.parse_args()
    started = time.perf_counter()
    result: dict[str, Any] = {"label": args.label, "artefacts": [], "anchors": [], "answers": []}
    for name, docs in BOOKS.items():
        if docs.is_dir():
            result["artefacts"].append(artefact_figures(name, docs))
    if not args.no_build:
        from tests.support.docusaurus import build, unavailable

        if unavailable() is None:
            for name in BUILT:
                with tempfile.TemporaryDirectory() as tmp:
                    result["anchors"].append(anchor_figures(name, BOOKS[name], build(BOOKS[name], Path(tmp))))
    result["answers"] = answer_figures(BOOKS["mdx-book"])
    result["seconds"] = round(time.perf_counter() - started, 1)
    text = json.dumps(result, indent=2, ensure_ascii=False)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
