""""What is this book about?" is answered from the page the book opens with, on a small book of our own (a home
bakery guide), through the agent with the default (extractive) answerer.

The question names no page: "this book", "the whole course", "the docs" are how a reader names the book itself.
Its words retrieved a chapter or two that mention a book or a course in passing, and the answer was a refusal
(or a chapter's stray sentences), while the book's own introduction, which says what it is about, was never
read. The book opens with its docs folder's own page (`intro.md`), else with its introduction folder."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.books import extractive_agent

PAGES = {
    "intro.md": """
        ---
        sidebar_position: 1
        ---

        # The Home Bakery

        This guide teaches a home cook to bake bread with wild yeast, from a spoonful of flour and water to a crusty
        loaf on the cooling rack.

        ## What the Guide Covers

        The first part raises a sourdough starter, the second mixes and shapes the dough, and the third bakes and
        stores the bread.
    """,
    "starter/raising.md": """
        # Raising a Starter

        A sourdough starter is flour and water left to ferment until wild yeast and bacteria settle in it. Feed the
        starter every day for a week, as this book's first course of practice, discarding half of it each time.
    """,
    "dough/shaping.md": """
        # Shaping the Dough

        Shape the dough by folding its edges into the middle and rolling it over so that the smooth side faces up.
        A well shaped loaf rises upwards in the oven instead of spreading sideways, as any course on baking teaches.
    """,
    "dough/mixing.md": """
        # Mixing the Dough

        Mix flour, water, salt and the ripe starter until no dry flour remains. Every recipe in this book uses
        about seventy five grams of water for every hundred grams of flour, so the dough feels sticky at first.
    """,
    "baking/oven.md": """
        # Baking in a Pot

        Bake the loaf in a cast iron pot preheated for an hour, with the lid on for the first twenty minutes. The
        book's other loaves bake the same way, and the course of the bake is the same whatever the flour.
    """,
    "baking/storing.md": """
        # Storing the Bread

        Store the bread cut side down on a wooden board for the first day, then wrap it in a cloth bag. This book
        recommends slicing and freezing a loaf you will not finish within three days.
    """,
}


@pytest.fixture(scope="module")
def bakery(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return extractive_agent(tmp_path_factory, "home-bakery", PAGES)


@pytest.mark.parametrize("question", ["what is this book about?", "can you summarize the whole course",
                                      "tldr of the docs pls", "whats this entire book about, quick overview"])
def test_a_question_about_the_whole_book_is_answered_from_its_opening_page(bakery: Any, question: str) -> None:
    response = bakery.run(question, None)

    assert not response.is_refusal, response.refusal_reason
    assert response.answer.startswith("This guide teaches a home cook to bake bread with wild yeast"), response.answer
    assert response.sources[0].source_file == "intro.md", response.sources
