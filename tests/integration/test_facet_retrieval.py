"""The retriever's BM25 query carries a facet's other words (`text.facets`): a reader's "downsides" finds
the book's "Disadvantages" in the embedded Qdrant engine. The encoder's unit test passes the stems by hand;
this one holds the retriever to adding them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from bookrag.config.settings import load_settings
from bookrag.ingestion.ingestor import Ingestor
from bookrag.retrieval.retriever import Retriever, SearchOptions
from bookrag.services.container import container_for

BOOK = {
    "hosting/strengths.md": """
        # Remote servers: what they offer

        ## Advantages

        Remote servers rent graphics cards by the hour. Remote servers reach every team member, and remote
        servers scale a training run to many machines.
        """,
    "hosting/weaknesses.md": """
        # Remote servers: what they cost you

        ## Disadvantages

        Every command to the robot crosses the internet, so a balance loop waits on the slowest packet.
        """,
}


@pytest.fixture(scope="module")
def retriever(tmp_path_factory: pytest.TempPathFactory) -> Retriever:
    root: Path = tmp_path_factory.mktemp("facet-book")
    for rel, text in BOOK.items():
        (root / "docs" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / rel).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    settings = load_settings(qdrant_path=root / "qdrant", embedding_provider="local")
    report = Ingestor(settings, container_for(settings).embedder, container_for(settings).store).run(root / "docs")
    assert report.chunks_total >= 2 and not report.skipped
    return container_for(settings).retriever


def test_downsides_find_the_disadvantages_by_their_word(retriever: Retriever) -> None:
    hits = retriever.search("What are the downsides of remote servers?",
                            SearchOptions(top_k=1, mode="sparse", diversify=False)).hits
    assert [h.source_file for h in hits] == ["hosting/weaknesses.md"]
