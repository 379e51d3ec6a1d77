"""A summary quotes each of the book's sentences once, on a small book of our own (a beekeeping guide), through
the agent with the default (extractive) answerer.

A page that opens "This is the official rulebook ... It lists our recommended habits ..." gives two statements:
the first sentence, and the second with the sentence its "It" points back to. A summary took both and quoted
the first sentence twice. The paragraph after it opens with "Both", read as pointing back as well: its
statement quotes "It lists ..." again."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bookrag.text.markdown.inline import clean_inline
from bookrag.text.sentences import split_sentences
from tests.support.books import extractive_agent

PAGES = {
    "intro.md": """
        # Keeping Bees

        This guide teaches a beginner to keep a hive of honey bees through its first year.
    """,
    "hive/rules.md": """
        # The Hive Keeper's Rules

        ## Introduction

        This is the official rulebook for keeping a backyard beehive. **It lists our recommended habits, safe
        practices, and suggested routines for looking after a colony.**

        Both the old beekeeping manuals and most new guides are gentle about rules. There are many ways to keep
        bees, and much of the time there is no single right way.

        ## Inspections

        Inspect the hive every week in spring, on a warm afternoon when most foragers are out of the hive.

        ## Smoke

        Puff cool white smoke at the entrance before opening the hive, since smoke masks the alarm scent of the
        guards.
    """,
}


@pytest.fixture(scope="module")
def apiary(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return extractive_agent(tmp_path_factory, "apiary", PAGES)


def sentences(answer: str) -> list[str]:
    """The answer's sentences as a reader reads them: citation markers, markup and item labels left out."""
    text = clean_inline(re.sub(r"\s*\[\d+\]", "", answer))
    return [" ".join(s.split(" — ", 1)[-1].lower().split()) for s in split_sentences(text)]


@pytest.mark.parametrize("question", ["tldr of the hive keeper's rules?", "summarize the hive keeper's rules"])
def test_a_summary_quotes_a_sentence_and_the_one_pointing_back_to_it_once(apiary: Any, question: str) -> None:
    response = apiary.run(question, None)

    assert not response.is_refusal, response.refusal_reason
    said = sentences(response.answer)
    assert said.count("this is the official rulebook for keeping a backyard beehive.") == 1, response.answer
    assert any(s.startswith("it lists our recommended habits") for s in said), response.answer
    repeats = [(a, b) for i, a in enumerate(said) for j, b in enumerate(said) if i != j and a in b]
    assert not repeats, response.answer
