"""An answer names the section a statement opening with "These ..." is in, on a small book of our own (a
beekeeping guide), through the agent with the default (extractive) answerer.

A short section is carried into the next one's chunk ("Inspections" into the chunk of "Smoke"), whose
`section_heading` is the later section's: the answer said "Smoke — These are done once a week ...", naming
the wrong section for what "These" points back to."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.books import extractive_agent

PAGES = {
    "intro.md": """
        # Keeping Bees

        This guide teaches a beginner to keep a hive of honey bees through its first year.
    """,
    "hive/visits.md": """
        # Visiting the Hive

        A visit to the hive is the keeper's main way of learning how the colony is doing, and each visit follows
        the same steps so that the bees are disturbed as little as possible and the keeper misses nothing
        important about the brood, the stores and the health of the queen.

        ## Inspections

        These are done once a week from April to September, looking for eggs, queen cells and signs of disease.

        ## Smoke

        Puff cool white smoke at the entrance before opening the hive, since smoke masks the alarm scent of the
        guards.
    """,
}


@pytest.fixture(scope="module")
def apiary(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return extractive_agent(tmp_path_factory, "apiary", PAGES)


@pytest.mark.parametrize("question", ["how often are hive inspections done?", "when should I look for queen cells?"])
def test_an_answer_names_the_section_a_pointing_back_sentence_is_in(apiary: Any, question: str) -> None:
    response = apiary.run(question, None)

    assert not response.is_refusal, response.refusal_reason
    assert "Inspections — These are done once a week" in response.answer, response.answer
    assert "Smoke — These" not in response.answer, response.answer
