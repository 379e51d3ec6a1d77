"""What a quote's text fragment must be unique against: the page above the quote, read from the store."""

from __future__ import annotations

from bookrag.config.settings import Settings
from bookrag.services.container import container_for


def test_the_page_above_a_chunk_is_its_earlier_chunks_and_the_sidebar_s_titles(book_env: Settings) -> None:
    retriever = container_for(book_env).retriever
    hits = retriever.search("How do I create a ROS 2 workspace with colcon?").hits
    later = next(h for h in hits if h.chunk_index >= 2)
    earlier = retriever.store.fetch_chunks(later.source_file, [0])

    before = retriever.page_before(later)

    assert earlier[0].content_text.strip()[:80] in before  # the page's start is above it
    assert later.text.strip()[:200] not in before  # its own text is not, carried-over start included
    assert all(title in before for title in ("Installing ROS 2 Humble", "Introduction to Physical AI"))


def test_the_sidebar_s_titles_are_in_the_table_of_contents_order(book_env: Settings) -> None:
    # Retrieval reads the titles itself (it cannot import services): the two readings of the book's order
    # must not drift apart, or a quote's prefix is judged against a sidebar the reader does not see.
    from bookrag.services.book import table_of_contents

    container = container_for(book_env)
    toc = table_of_contents(container.store, container.settings.book_base_url)

    assert container.retriever.page_titles() == [entry.title for entry in toc]
