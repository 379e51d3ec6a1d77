"""Issue 37's reader shapes on a small book of our own (a baking guide, nothing like the books we tune on),
through the agent with the default (extractive) answerer: typos answered, a product the book never names
refused though typed in lower case, "summarize part N" answered from part N's own page, a selected list
given back whole."""

from __future__ import annotations

from typing import Any

import pytest

from bookrag.contracts.agent import Response
from bookrag.domain.conversation import Conversation, Selection
from tests.support.books import extractive_agent

PAGES = {
    "intro.md": """
        # Baking Bread at Home

        This guide teaches home bakers to bake sourdough bread with simple tools. Work through the parts in order.
        Proceed to Part 3 once your starter is active and your oven is ready; Part 3 assumes both.
    """,
    "part-1/tools.md": """
        # Part 1: Tools of the Home Bakery

        A home bakery needs a scale, a bowl, a bench scraper and an oven that holds its heat.

        ## Mixers

        A stand mixer kneads stiff dough without tiring, and saves the baker's wrists on large batches.

        ### Spiral mixers

        - **Pros**: Spiral mixers knead gently and keep the dough cool, which protects its gluten.
        - **Cons**: Spiral mixers are expensive, heavy and take up a large part of a small kitchen counter.

        ## Scales

        Weigh flour and water in grams on a digital scale: cups measure flour too loosely for bread.
    """,
    "part-2/starter.md": """
        # Part 2: The Sourdough Starter

        A sourdough starter is a culture of wild yeast and lactic acid bacteria living in flour and water.

        ## Feeding the starter

        Feed the starter once a day at room temperature: discard half of it, then stir in equal weights of
        fresh flour and water. A starter kept in the fridge needs feeding only once a week.

        ## What a starter needs

        The starter needs four things to stay active:

        - fresh flour to feed the wild yeast every day
        - clean water without too much chlorine in it
        - warmth around twenty-five degrees for steady rising
        - time between feedings for the bacteria to sour it
    """,
    "part-3/baking.md": """
        # Part 3: Shaping and Baking

        This part takes an active starter to a baked loaf: the dough is mixed, shaped into a tight ball,
        proofed overnight in the fridge and baked in a very hot covered pot.

        ## Shaping the loaf

        Shaping builds surface tension: fold the dough's edges to its centre, flip it, and drag it towards you
        on the bench until its skin is taut.

        ## Baking in a covered pot

        Bake the loaf in a preheated covered pot at 250 degrees for twenty minutes, then uncover it so the crust
        browns for another twenty-five minutes. The lid traps steam, which lets the loaf rise before the crust sets.
    """,
    "glossary.md": """
        # Glossary

        ## Co-fermentation

        Co-fermentation ferments a rye sponge and a wheat dough side by side, then joins them for a deeper sourness.
    """,
}


@pytest.fixture(scope="module")
def bakery(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return extractive_agent(tmp_path_factory, "bakery", PAGES)


def ask(agent: Any, question: str, conversation: Conversation | None = None) -> Response:
    return agent.run(question, conversation)


def test_a_question_with_typos_is_answered_from_the_section_it_means(bakery: Any) -> None:
    # "shoud" and "startr" are words no page uses: typed, not asked about.
    response = ask(bakery, "how often shoud i feed my sourdough startr")

    assert not response.is_refusal, response.refusal_reason
    assert "once a day" in response.answer


def test_a_typo_inside_a_hyphenated_word_is_searched_as_the_book_spells_it(bakery: Any) -> None:
    response = ask(bakery, "whats co-fermentaton")

    assert not response.is_refusal, response.refusal_reason
    assert "rye sponge" in response.answer


def test_a_readers_word_the_book_never_uses_is_not_off_book(bakery: Any) -> None:
    # "downsides" is a word no page uses: the book says "Cons".
    downsides = ask(bakery, "what are the downsides of spiral mixers")
    assert not downsides.is_refusal, downsides.refusal_reason
    assert "expensive" in downsides.answer


def test_a_product_the_book_never_names_is_refused_though_typed_in_lower_case(bakery: Any) -> None:
    # Every other word of this one is the book's ("spiral mixer", "knead"): only the product is not. The gate's
    # bar refused it once it was set by the false refusals it allows (2%) rather than by fewest errors.
    assert ask(bakery, "how does a thermomix knead compared to a spiral mixer").is_refusal


def test_an_identifier_the_book_never_uses_counts_as_a_name_though_typed_in_lower_case(bakery: Any) -> None:
    # An identifier names a package or a function in any book: the gate weighs it as a name, not a reader's word.
    question = "how do i configure the starter_scheduler package or the feedTimer hook"
    unknown = bakery.answerer.unknown_terms(question, bakery.context(question))

    assert len(unknown.named) == 2, unknown
    assert "configur" not in unknown.named  # an English word the book never uses is a reader's word


def test_a_readers_short_form_of_a_word_the_passages_write_is_no_name(bakery: Any) -> None:
    # "chl": the chlorine the water section writes, abbreviated as readers type; weighed as a name, it refused.
    question = "does the chl in the water hurt the starter's wild yeast"
    assert "chl" not in bakery.answerer.unknown_terms(question, bakery.context(question)).words
    assert not ask(bakery, question).is_refusal

    other = "does the pfas in the water hurt the starter's wild yeast"
    assert "pfas" in bakery.answerer.unknown_terms(other, bakery.context(other)).named
    assert ask(bakery, other).is_refusal


def test_a_name_and_its_version_typed_as_one_word_are_the_books_words(bakery: Any) -> None:
    # The book writes "Part 3"; a reader types "part3". A version the book never writes stays unknown.
    question = "what does part3 say about shaping the loaf"
    assert "part3" not in bakery.answerer.unknown_terms(question, bakery.context(question)).words

    other = "what does part7 say about shaping the loaf"
    assert "part7" in bakery.answerer.unknown_terms(other, bakery.context(other)).words


def test_summarize_part_n_answers_from_that_parts_own_page(bakery: Any) -> None:
    # The introduction names Part 3 ("Proceed to Part 3 ..."); Part 3's own page says what it is about.
    response = ask(bakery, "can you summarize part 3 for me")

    assert not response.is_refusal
    assert {s.source_file for s in response.sources} == {"part-3/baking.md"}
    assert response.answer.startswith("This part takes an active starter to a baked loaf")
    assert "Shaping the loaf" in response.answer  # its sections, each by its first sentence


def test_a_summary_keeps_the_list_that_says_what_the_page_is_about(bakery: Any) -> None:
    # Part 2's list of what a starter needs is most of what the page says: a summary gives it whole.
    response = ask(bakery, "tldr of part 2")

    assert not response.is_refusal
    assert response.answer.startswith("A sourdough starter is a culture of wild yeast")
    for item in ("fresh flour", "clean water", "warmth", "time between feedings"):
        assert item in response.answer


def test_a_selected_list_is_given_back_with_every_item(bakery: Any) -> None:
    # Held before issue 37 too (the lead-in carries its items): kept so that it stays so.
    passage = ("The starter needs four things to stay active: fresh flour to feed the wild yeast every day "
               "clean water without too much chlorine in it warmth around twenty-five degrees for steady rising "
               "time between feedings for the bacteria to sour it")
    selection = Selection(text=passage, source_file="part-2/starter.md")
    response = ask(bakery, "what does this passage say?", Conversation(selection=selection))

    assert not response.is_refusal
    for item in ("fresh flour", "clean water", "warmth", "time between feedings"):
        assert item in response.answer
