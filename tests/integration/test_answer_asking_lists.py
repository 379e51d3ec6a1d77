"""A list of questions is the book asking, not telling: an answer may quote it, but never opens with it. On a
small book of our own (a beekeeping guide) whose chapter ends in questions for the reader under a heading no
word list names ("Think It Over"), through the agent with the default (extractive) answerer.

Before, "any downside to opening the hive in the rain?" opened with "Think It Over — What are the downsides of
opening the hive in the rain [1]?", which shares every word of the question, ahead of the section that answers
it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.books import extractive_agent

PAGES = {
    "intro.md": """
        # Keeping Bees

        This guide teaches a beginner to keep a hive of honey bees through its first year.
    """,
    "hive/weather.md": """
        # Weather and the Hive

        ## Opening the Hive in the Rain

        Opening the hive in the rain chills the brood, and the foragers kept at home by the weather are
        more defensive, so stings are more likely. Wait for a dry, warm afternoon when most foragers are out.

        ## Think It Over

        - What are the downsides of opening the hive in the rain?
        - Why are bees more defensive when the weather keeps them at home?
        - How does a chilled brood affect the colony in spring?
        - When is the best time of day to open the hive?
    """,
}


@pytest.fixture(scope="module")
def apiary(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return extractive_agent(tmp_path_factory, "apiary-asking", PAGES)


def test_an_answer_never_opens_with_the_book_s_questions(apiary: Any) -> None:
    response = apiary.run("any downside to opening the hive in the rain?", None)

    assert not response.is_refusal, response.refusal_reason
    assert response.answer.startswith("Opening the hive in the rain chills the brood"), response.answer
    assert "What are the downsides" not in response.answer.split("\n")[0], response.answer
