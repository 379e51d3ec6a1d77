"""The retriever's BM25 query carries a facet's other words (`text.facets`): a reader's "downsides" finds
the book's "Disadvantages" in the embedded Qdrant engine. The encoder's unit test passes the stems by hand;
this one holds the retriever to adding them."""

from __future__ import annotations

import pytest

from bookrag.retrieval.retriever import Retriever, SearchOptions
from bookrag.services.container import container_for
from tests.support.books import ingest_pages

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
    settings, report = ingest_pages(tmp_path_factory.mktemp("facet-book"), BOOK)
    assert report.chunks_total >= 2 and not report.skipped
    return container_for(settings).retriever


def test_downsides_find_the_disadvantages_by_their_word(retriever: Retriever) -> None:
    hits = retriever.search("What are the downsides of remote servers?",
                            SearchOptions(top_k=1, mode="sparse", diversify=False)).hits
    assert [h.source_file for h in hits] == ["hosting/weaknesses.md"]
