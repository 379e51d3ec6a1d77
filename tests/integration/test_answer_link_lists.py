"""A list item that is one link and nothing else is a pointer to another page, not a statement: an answer
never quotes it. On a small book of our own (a beekeeping guide) whose questions end, as a FAQ's often do, in
"Further information" lists of links whose titles repeat the question's words, through the agent with the
default (extractive) answerer.

Before, both questions were answered "Articles — Calming a colony without smoke [1]. Articles — "Why do bees
calm down with smoke?" [1]": the link titles, which share the question's words, outranked the section that
answers it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.books import extractive_agent

PAGES = {
    "intro.md": """
        # Keeping Bees

        This guide teaches a beginner to keep a hive of honey bees through its first year.
    """,
    "faq/calming.md": """
        # Calming the Colony

        ## How does smoke compare to sugar syrup for calming bees?

        Smoke masks the alarm scent the guards release, so the colony stays calm while the hive is open. A light
        spray of sugar syrup keeps the bees busy cleaning each other instead, and it works without any fire, but
        it wets the frames and should not be used in cold weather.

        #### Further information

        **Articles**

        - [Smoke versus sugar syrup](https://example.org/smoke-vs-syrup)
        - [Calming a colony without smoke](https://example.org/no-smoke)
        - ["Why do bees calm down with smoke?"](https://example.org/why-smoke)

        ## When is the colony most defensive?

        Colonies are most defensive on cold, wet days and late in the evening, when every forager is home.
    """,
}

LINK_TITLES = ("Smoke versus sugar syrup", "Calming a colony without smoke", "Why do bees calm down with smoke")


@pytest.fixture(scope="module")
def apiary(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return extractive_agent(tmp_path_factory, "apiary-links", PAGES)


@pytest.mark.parametrize("question", ["smoke vs sugar syrup - whats the difference?",
                                      "how do i calm a colony without smoke"])
def test_an_answer_quotes_no_list_item_that_is_only_a_link(apiary: Any, question: str) -> None:
    response = apiary.run(question, None)

    assert not response.is_refusal, response.refusal_reason
    assert "sugar syrup keeps the bees busy" in response.answer, response.answer
    assert not [t for t in LINK_TITLES if t in response.answer], response.answer
