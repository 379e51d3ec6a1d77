"""Real Docusaurus MDX books through the real ingest (local embedder, embedded Qdrant Edge), issue 28.

Partials are set in place in every page that renders them and cited to that page; a missing or cyclic
import is a warning naming the file; a changed partial re-chunks exactly the pages that include it; no
chunk of the fixture book or of the vendored Docusaurus template holds MDX machinery; and an answer whose
text lives in a partial or a tab comes from it, cited to the including page's section.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bookrag.devtools.mdx_artefacts import artefacts
from bookrag.ingestion.ingestor import Ingestor, IngestReport
from bookrag.services.container import container_for
from tests.support.paths import CORPUS, FIXTURES

MDX_BOOK = FIXTURES / "mdx-book" / "docs"
TEMPLATE = FIXTURES / "docusaurus-template" / "docs"


def _ingest(settings: Any, docs: Path) -> IngestReport:
    container = container_for(settings)
    return Ingestor(settings, container.embedder, container.store).run(docs)


def _payloads(settings: Any) -> list[dict[str, Any]]:
    fields = ["source_file", "source_url", "content_text", "section_heading", "chunk_index"]
    return list(container_for(settings).store.scroll_payloads(fields))


def test_a_partial_is_indexed_in_each_page_that_renders_it(make_settings: Callable[..., Any]) -> None:
    settings = make_settings()
    report = _ingest(settings, MDX_BOOK)
    assert not report.skipped and not report.warnings
    payloads = _payloads(settings)
    files = {p["source_file"] for p in payloads}
    assert not any(Path(f).name.startswith("_") for f in files)  # a partial has no page of its own

    def texts(rel: str) -> str:
        return "\n".join(p["content_text"] for p in payloads if p["source_file"] == rel)

    # The macOS partial, its nested note partial, and the Linux partial, in the page that renders them.
    page = texts("guides/getting-started.mdx")
    assert "Temurin JDK version 21" in page and "Note: Shared runtime" in page and "udev rules" in page
    assert "Not a page" not in page  # the partial's front matter is not text
    # The Linux partial again in the second page that renders it, cited there, under its own ids.
    lab = [p for p in payloads if p["source_file"] == "guides/linux-lab.md" and "99-orbiter" in p["content_text"]]
    assert lab and all(p["source_url"].endswith("/guides/linux-lab#udev-rules") for p in lab)
    jdk = [p for p in payloads if "Temurin" in p["content_text"]]
    assert [p["source_url"].rsplit("/", 2)[-2:] for p in jdk] == [["guides", "getting-started#java-development-kit"]]


def test_no_chunk_holds_mdx_machinery(make_settings: Callable[..., Any]) -> None:
    settings = make_settings()
    for docs in (MDX_BOOK, TEMPLATE):
        container = container_for(settings)
        ingestor = Ingestor(settings, container.embedder, container.store)
        report = IngestReport()
        found = [(f.rel_path, d.text[:120], artefacts(d.text, d.section_heading))
                 for f in ingestor.load(docs, report) for d in ingestor.build_chunks(f)]
        assert [row for row in found if row[2]] == []
        assert len(found) > 10


REDUX = CORPUS / "redux-docs" / "docs"


@pytest.mark.skipif(not REDUX.is_dir(), reason="../shared/corpus/redux-docs is not beside this checkout")
def test_redux_docs_hold_no_mdx_artefact_and_each_partial_where_it_is_included(local_embedder: Any) -> None:
    """A real book of someone else's, never tuned on (issue 35): no chunk holds an import, a comment, raw
    JSX or a chunk of dashes, and every partial a page renders is in that page's chunks."""
    from bookrag.config.settings import load_settings

    ingestor = Ingestor(load_settings(embedding_provider="local"), local_embedder, None)  # type: ignore[arg-type]
    report = IngestReport()
    files = ingestor.load(REDUX, report)
    assert report.skipped == [] and report.warnings == [] and len(files) > 80
    chunks = {f.rel_path: ingestor.build_chunks(f) for f in files}
    found = [(rel, d.text[:120], kinds) for rel, drafts in chunks.items() for d in drafts
             if (kinds := artefacts(d.text, d.section_heading))]
    assert found == []
    included = [(f.rel_path, partial) for f in files if f.doc for partial in f.doc.includes]
    assert len(included) >= 5  # the fundamentals tutorial's warning, in each part that renders it
    for rel, partial in included:
        words = "intentionally shows older-style Redux logic patterns"
        assert "_FundamentalsWarning" in partial and words in " ".join(d.text for d in chunks[rel]), rel


def test_missing_and_cyclic_imports_are_warnings_naming_the_file(
    make_settings: Callable[..., Any], tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    body = "The page goes on after its includes, and this sentence is still indexed for readers."
    (docs / "page.mdx").write_text(
        "import Missing from './_missing.mdx';\nimport CycleA from './_cycle-a.mdx';\n\n"
        f"# Page\n\n<Missing />\n\n<CycleA />\n\n{body}\n"
    )
    for name, other in (("a", "b"), ("b", "a")):
        (docs / f"_cycle-{name}.mdx").write_text(
            f"import Cycle{other.upper()} from './_cycle-{other}.mdx';\n\n"
            f"Cycle {name.upper()} text is shown once.\n\n<Cycle{other.upper()}/>\n")
    settings = make_settings()
    report = _ingest(settings, docs)
    assert report.skipped == []
    warnings = [w for _, w in report.warnings]
    assert any("_missing.mdx" in w and "does not exist" in w and w.startswith("page.mdx") for w in warnings)
    assert any("_cycle-a.mdx" in w and "cycle" in w for w in warnings)
    assert report.as_dict()["warnings"]
    text = "\n".join(p["content_text"] for p in _payloads(settings))
    assert body in text and text.count("Cycle A text") == 1 and text.count("Cycle B text") == 1


def test_a_changed_partial_rechunks_the_pages_that_include_it(
    make_settings: Callable[..., Any], tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(MDX_BOOK, docs)
    settings = make_settings()
    first = _ingest(settings, docs)
    assert first.files_changed == first.files_seen == 5
    assert _ingest(settings, docs).files_changed == 0  # nothing changed: nothing re-chunked

    partial = docs / "_setup-linux.md"
    partial.write_text(partial.read_text().replace("/etc/udev/rules.d/", "/usr/lib/udev/rules.d/"))
    second = _ingest(settings, docs)
    assert second.files_changed == 2  # getting-started and linux-lab render it; nothing else changed
    text = "\n".join(p["content_text"] for p in _payloads(settings))
    assert "/usr/lib/udev/rules.d/" in text and "/etc/udev/rules.d/" not in text

    # A partial that was missing is read once it appears: the page that imports it is re-chunked.
    page = docs / "guides" / "telemetry.md"
    page.write_text(page.read_text().replace("## Troubleshooting", "import Later from '../_later.md';\n\n"
                                                                   "<Later />\n\n## Troubleshooting"))
    assert any("_later.md" in w for _, w in _ingest(settings, docs).warnings)
    (docs / "_later.md").write_text("The later partial explains the calibration wizard's three steps.\n")
    third = _ingest(settings, docs)
    assert third.files_changed == 1 and not third.warnings
    assert "calibration wizard" in "\n".join(p["content_text"] for p in _payloads(settings))


@pytest.mark.parametrize(
    ("question", "words", "cited"),
    [
        ("Which JDK version should I install for Orbiter development on macOS?", "JDK version 21",
         "/guides/getting-started#java-development-kit"),
        ("Where do I copy the udev rules for the lidar mast?", "/etc/udev/rules.d/", "#udev-rules"),
        ("How do I install the orbiter command line tool with Yarn?", "Yarn:", "/#install-the-command-line-tool"),
    ],
)
def test_an_answer_from_a_partial_or_a_tab_cites_the_including_page(
    make_settings: Callable[..., Any], question: str, words: str, cited: str
) -> None:
    settings = make_settings()
    _ingest(settings, MDX_BOOK)
    response = container_for(settings).agent.run(question)
    assert not response.is_refusal
    assert words in response.answer
    if words == "Yarn:":
        assert "yarn global add orbiter-cli" in response.answer
    assert response.sources[0].source_url.endswith(cited)
