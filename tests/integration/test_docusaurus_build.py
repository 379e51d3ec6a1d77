"""Our heading anchors equal the ids of a real Docusaurus build (npm packages, `tests/support/docusaurus.py`).

The fixture MDX book (JSX in headings, explicit ids, partials with headings of their own, the same partial
in two pages, an H1 followed by a heading of the same text) and the vendored Docusaurus template docs are
built as sites; every h2-h6 id each page renders must be, in order, the anchor of our section there, and
every anchor a chunk's URL carries must exist on its page. Skips when node or npm is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bookrag.ingestion.ingestor import Ingestor, IngestReport
from bookrag.ingestion.sections import Chunker
from bookrag.text.tokens import approx_token_count
from tests.support import docusaurus
from tests.support.paths import FIXTURES

BOOKS = {"mdx-book": FIXTURES / "mdx-book" / "docs", "template": FIXTURES / "docusaurus-template" / "docs"}


@pytest.fixture(scope="module", params=sorted(BOOKS))
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    reason = docusaurus.unavailable()
    if reason is not None:
        pytest.skip(f"a Docusaurus build needs node and npm: {reason}")
    docs = BOOKS[request.param]
    yield docs, docusaurus.build(docs, tmp_path_factory.mktemp(f"site-{request.param}"))


def test_every_heading_anchor_equals_the_real_builds_id(built: tuple[Path, Path], local_embedder: object) -> None:
    docs, build_dir = built
    from bookrag.config.settings import load_settings

    settings = load_settings(embedding_provider="local")
    ingestor = Ingestor(settings, local_embedder, None)  # type: ignore[arg-type]  # reads, never stores
    files = ingestor.load(docs, IngestReport())
    compared = 0
    for f in files:
        assert f.doc is not None
        rendered = [h.id for h in docusaurus.rendered_headings(build_dir, f.doc.route)]
        sections = Chunker(approx_token_count, 200, 32).sections(f.doc.body)
        assert [s.anchor for s in sections if s.level >= 2] == rendered, f.rel_path
        stored = {d.anchor for d in ingestor.build_chunks(f)} - {""}
        assert stored <= set(rendered), f.rel_path
        compared += len(rendered)
    assert compared >= 15
