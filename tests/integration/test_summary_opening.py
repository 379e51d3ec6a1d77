"""A summary opens with its page's introduction, on a small book of our own (a baking guide), through the agent
with the default (extractive) answerer.

A long page opens, under the title its front matter gives, with two admonition boxes (what the reader will learn,
what they need) whose lists are scaffolding, then its "## Introduction", then many sections that each name the
page's subject. A summary searched the page's chunks by its title and read only the ones found: the sections,
which name the title's words over and over, and not the introduction, which hardly names them. It opened with a
section ("Feeding the Starter — ..."), not with what the page is about."""

from __future__ import annotations

import re
import textwrap
from typing import Any

import pytest

from tests.support.books import extractive_agent

_OPENING = textwrap.dedent("""
    ---
    title: Baking a Sourdough Loaf
    ---

    :::tip What You'll Learn

    - How to feed a sourdough starter so that it is lively and bubbling on the morning of baking day
    - How to mix, fold and shape a sourdough dough so that it holds its shape in a hot oven
    - How to bake a sourdough loaf with a crisp, blistered crust and an open, glossy crumb

    :::

    :::info Prerequisites

    - A healthy sourdough starter that doubles within eight hours of a feeding, kept as the starter page shows
    - A kitchen scale that weighs to the gram, a large mixing bowl, a bench scraper and a lidded cast iron pot
    - An oven that reaches two hundred and fifty degrees Celsius and holds that heat for an hour

    :::

    ## Introduction

    Now that the kitchen is ready, it is time to put those tools to work. Two days pass between the first feeding
    and the first slice, though most of that time nothing needs doing. We follow one batch through every step, from
    a spoonful in a jar to a cooled slice on the rack, and explain why each step matters.
""")

# Each section names the page's subject, as a long tutorial's sections do: a search by the title finds them first.
_SECTIONS = {
    "Feeding the Starter": "Feed the sourdough starter the evening before baking a sourdough loaf: equal weights of "
    "flour and water stirred into a spoonful of the old starter. By morning the sourdough starter should have doubled, "
    "smell pleasantly sour and be full of bubbles; a sourdough loaf baked from a sluggish starter rises poorly.",
    "Mixing the Dough": "Mix the sourdough dough from flour, water, salt and the ripe starter until no dry flour "
    "remains. A sourdough loaf needs a wet dough, about seventy five grams of water for every hundred grams of flour, "
    "so the sourdough dough feels sticky at first and smooths out as the gluten develops.",
    "Resting the Dough": "Let the mixed sourdough dough rest for half an hour before adding the salt, a rest bakers "
    "call the autolyse. During this rest the flour absorbs the water and the gluten begins to form without kneading, "
    "so the sourdough loaf later bakes with a more open crumb.",
    "Stretching and Folding": "Instead of kneading a sourdough dough, stretch one side of it up and fold it over the "
    "rest, turn the bowl and repeat four times. Four sets of folds half an hour apart build the strength a sourdough "
    "loaf needs to hold its shape, while the dough keeps the large bubbles of a good sourdough crumb.",
    "Bulk Fermentation": "Bulk fermentation is the long rise of the whole sourdough dough before shaping, usually five "
    "to seven hours at room temperature. The sourdough dough is ready when it has grown by about half and jiggles "
    "when the bowl is shaken; cutting bulk fermentation short gives a dense sourdough loaf.",
    "Shaping the Loaf": "Shape the sourdough loaf by tipping the dough onto an unfloured counter, folding its edges "
    "into the middle and rolling it over so that the smooth side faces up. Drag the sourdough loaf towards you with a "
    "bench scraper to tighten its skin, so that the sourdough loaf rises upwards rather than spreads.",
    "Proofing in the Fridge": "Proof the shaped sourdough loaf overnight in a floured basket in the fridge, seam side "
    "up and covered. The cold slows the yeast while the bacteria keep working, which deepens the sour flavour of the "
    "sourdough loaf and makes the cold dough much easier to score.",
    "Preheating the Oven": "Preheat the oven with the cast iron pot inside for a full hour before baking the sourdough "
    "loaf. A pot that is thoroughly hot gives the sourdough loaf a strong burst of oven spring, and its lid traps the "
    "steam that keeps the sourdough crust soft while the loaf expands.",
    "Scoring the Loaf": "Score the cold sourdough loaf with a razor blade just before it goes into the pot, one "
    "confident cut about a centimetre deep. The score gives the sourdough loaf a place to open as it springs in the "
    "oven, so the sourdough crust tears where the baker chose rather than bursting at the side.",
    "Baking with the Lid On": "Bake the sourdough loaf with the lid on for twenty minutes, so that the steam from the "
    "dough stays in the pot. Steam keeps the surface of the sourdough loaf moist and stretchy while it rises, so a "
    "sourdough loaf baked in a covered pot rises higher than one baked on an open tray.",
    "Baking with the Lid Off": "Remove the lid and bake the sourdough loaf for another twenty minutes, until the crust "
    "is a deep brown. A pale sourdough loaf tastes of raw flour, so bake the sourdough crust darker than seems right: "
    "its sugars caramelise and give the sourdough loaf its flavour.",
    "Choosing the Flour": "Choose a strong white bread flour for most of a sourdough loaf, with a tenth of whole "
    "wheat or rye flour for flavour. Whole grain flour feeds the sourdough starter well and darkens the crumb, but a "
    "sourdough loaf made only of whole grain flour rises less and needs more water.",
    "Salting the Dough": "Add two grams of fine salt for every hundred grams of flour once the sourdough dough has "
    "rested. Salt tightens the gluten and slows the starter a little, and a sourdough loaf baked without salt tastes "
    "bland however good its crust and crumb.",
    "Cooling the Loaf": "Cool the baked sourdough loaf on a wire rack for at least two hours before cutting it. The "
    "inside of a sourdough loaf is still cooking as it cools, and a sourdough loaf cut while hot has a gummy crumb "
    "because its starches have not yet set.",
    "Storing the Bread": "Store the sourdough bread cut side down on a wooden board for the first day, then wrap the "
    "sourdough loaf in a cloth bag. A sourdough loaf keeps for several days because its acidity slows staling and "
    "mould, and slices of sourdough bread freeze well for toasting later.",
}

PAGES = {
    "intro.md": """
        # The Home Bakery

        This guide teaches a home cook to bake bread with wild yeast, one loaf at a time.
    """,
    "bread/sourdough-loaf.md": _OPENING + "".join(f"\n## {heading}\n\n{text}\n" for heading, text in _SECTIONS.items()),
}


@pytest.fixture(scope="module")
def bakery(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return extractive_agent(tmp_path_factory, "bakery", PAGES)


@pytest.mark.parametrize("question", ["tldr of baking a sourdough loaf", "summarize baking a sourdough loaf"])
def test_a_summary_opens_with_the_pages_introduction(bakery: Any, question: str) -> None:
    response = bakery.run(question, None)

    assert not response.is_refusal, response.refusal_reason
    first = re.split(r"\s*\[\d+\]", response.answer, maxsplit=1)[0]  # its first statement, after its label
    assert first.split(" — ", 1)[-1].startswith("Now that the kitchen is ready"), response.answer
    # The introduction's chunk is cited like any retrieved one, at its section.
    assert response.sources[0].section == "Introduction", response.sources
