"""A page's heading path runs from its title down, whether the page opens with an H1 or takes its title from
front matter and starts at an H2 (most pages of Markdown sites other than ours: a third of redux's, three in
five of Starlette's). Answering reads `heading_path[1:]` as the page's own sections; a path that started at the
first H2 lost that section's heading to it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from bookrag.config.settings import load_settings
from bookrag.ingestion.ingestor import Ingestor
from bookrag.services.container import container_for

TITLED = """
    # Kiln Care

    ## Cooling

    Let the kiln cool for a full day before you open its door.
"""
UNTITLED = """
    ---
    title: Glazes
    ---

    ## Mixing Glaze

    Sieve every glaze twice through an 80-mesh screen before it touches a pot. Weigh the dry materials on a
    scale that reads to a tenth of a gram, add them to the water rather than the water to them, and let the
    slurry slake for an hour before you stir it, so that no dry lumps are left to pinhole the fired surface.

    ## Testing Glaze

    Fire a test tile of each new batch on the top shelf first. Label the tile with the batch number and the
    cone it reached, and keep it beside the bucket: a glaze that crawls or runs on the tile will do the same on
    a pot, and a tile costs an afternoon where a ruined shelf of pots costs a week of work.
"""


def test_the_heading_path_starts_at_the_title_with_or_without_an_h1(tmp_path: Path) -> None:
    # GIVEN a page with an H1 and a page whose title is in its front matter only
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "kiln.md").write_text(textwrap.dedent(TITLED).lstrip(), encoding="utf-8")
    (docs / "glazes.md").write_text(textwrap.dedent(UNTITLED).lstrip(), encoding="utf-8")
    settings = load_settings(qdrant_path=tmp_path / "qdrant", embedding_provider="local")
    container = container_for(settings)

    # WHEN the book is ingested
    Ingestor(settings, container.embedder, container.store).run(docs)

    # THEN every stored path starts at its page's title, the H1's or the front matter's
    paths = {(p["source_file"], tuple(p["heading_path"]))
             for p in container.store.scroll_payloads(["source_file", "heading_path"])}
    assert ("kiln.md", ("Kiln Care", "Cooling")) in paths
    assert ("glazes.md", ("Glazes", "Mixing Glaze")) in paths
    assert ("glazes.md", ("Glazes", "Testing Glaze")) in paths
