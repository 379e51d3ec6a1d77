"""A summary names each quoted statement's section before it, on a small book of our own (a beekeeping guide),
through the agent with the default (extractive) answerer.

Short sections are packed into one chunk ("Inspections" carried into the chunk of "Smoke", the section after
it), and a chunk's `section_heading` is its last section's: a summary labelled the sentence under
"Inspections" "Smoke — Inspect the hive every week ...". A list straight under its heading opens with that
heading as its lead-in: the label before it said the heading twice ("Key Terms — Key Terms:")."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.books import extractive_agent

PAGES = {
    "intro.md": """
        # Keeping Bees

        This guide teaches a beginner to keep a hive of honey bees through its first year.
    """,
    "hive/rules.md": """
        # The Hive Keeper's Rules

        ## Introduction

        This is the official rulebook for keeping a backyard beehive, written for a first season with one colony.

        ## Inspections

        Inspect the hive every week in spring, on a warm afternoon when most foragers are out of the hive.

        ## Smoke

        Puff cool white smoke at the entrance before opening the hive, since smoke masks the alarm scent of the
        guards.
    """,
    "hive/words.md": """
        # The Beekeeper's Words

        A new keeper meets many words in the first season, and this page explains the ones that matter most.

        ## Key Terms

        - **Brood**: the eggs, larvae and pupae of the colony, kept in the middle frames of the hive.
        - **Super**: a box set on top of the brood boxes where the bees store the honey you harvest.
        - **Queen excluder**: a grid that lets workers pass but keeps the larger queen out of the supers.
    """,
}


@pytest.fixture(scope="module")
def apiary(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return extractive_agent(tmp_path_factory, "apiary", PAGES)


def labels(answer: str) -> dict[str, str]:
    """The label shown before each statement ("Smoke — Puff cool ..."), by the statement's first two words."""
    parts = [p.split(" — ", 1) for p in re.split(r"\s*\[\d+\]\.?\s*", answer) if " — " in p]
    return {" ".join(text.lower().split()[:2]): label.strip() for label, text in parts}


@pytest.mark.parametrize("question", ["tldr of the hive keeper's rules?", "summarize the hive keeper's rules"])
def test_a_summary_labels_a_sentence_with_the_section_it_is_in(apiary: Any, question: str) -> None:
    response = apiary.run(question, None)

    assert not response.is_refusal, response.refusal_reason
    shown = labels(response.answer)
    assert shown.get("inspect the") == "Inspections", response.answer
    assert shown.get("puff cool", "Smoke") == "Smoke", response.answer


@pytest.mark.parametrize("question", ["tldr of the beekeeper's words?", "summarize the beekeeper's words"])
def test_a_summary_names_a_heading_that_leads_its_list_once(apiary: Any, question: str) -> None:
    response = apiary.run(question, None)

    assert not response.is_refusal, response.refusal_reason
    assert "Key Terms:" in response.answer, response.answer
    assert response.answer.count("Key Terms") == 1, response.answer
