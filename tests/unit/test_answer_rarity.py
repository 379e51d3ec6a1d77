"""Which headings tell the retrieved statements apart (issue 37): a heading the question names says which
section answers only when the other retrieved sections are not about the same word ("Middleware" among the
sections of the Redux docs' middleware pages says nothing). Read from the retrieved chunks alone, so it
means the same in any book.

Each test fails on the answerer of 7b86cc4, where a one-word heading the question names ("Middleware")
led whatever sat under it, however many other retrieved sections were about the same word."""

from __future__ import annotations

from dataclasses import replace

from bookrag.answering.answerers.candidates import Rarity, candidates
from bookrag.answering.answerers.questions import QuestionShape
from bookrag.domain.models import SearchHit
from tests.support.answers import answer, hits_of

SECTIONS = [
    ("Use cases", "A middleware can log an action, delay an action with a timer, or change an action on its way."),
    ("Middleware", "Middleware wraps the dispatch function, and each middleware sees every action."),
    ("Writing custom middleware", "A custom middleware is a function that returns a function."),
    ("Middleware and side effects", "Side effects such as timers belong in a middleware."),
]


def _retrieved(step: float = 0.1) -> list[SearchHit]:
    """Each section its own chunk of its own page, retrieved in this order."""
    return [replace(h, score=0.7 - step * i, rank_score=0.7 - step * i)
            for i, (heading, text) in enumerate(SECTIONS)
            for h in hits_of(f"# Store extensions\n\n## {heading}\n\n{text}\n", f"{i}.md")]


def test_a_heading_other_retrieved_sections_share_does_not_decide_the_lead() -> None:
    # Both of the first two sections hold "middleware" and "action", and the question names the heading
    # "Middleware" (and asks for "a middleware"); but the headings of two other sections retrieved with it
    # are about middleware too: it tells little about which one answers. The section retrieval ranked first leads.
    text = answer("what can a middleware do with an action?", _retrieved(step=0.2))

    assert text.startswith("A middleware can log an action"), text


def test_a_heading_other_retrieved_sections_share_is_not_specific() -> None:
    hits = _retrieved()
    rarity = Rarity(candidates(hits, QuestionShape.of("what can a middleware do with a timer")))

    # "Middleware": two of the three other sections are about it too; "Use cases": none of them is.
    assert rarity.specific({"middlewar"}, hits[1].chunk_id) == 1.0 - 2 / 3
    assert rarity.specific({"use", "case"}, hits[0].chunk_id) == 1.0
    # A heading alone among what was retrieved is as specific as can be.
    alone = Rarity(candidates(hits[1:2], QuestionShape.of("middleware")))
    assert alone.specific({"middlewar"}, hits[1].chunk_id) == 1.0


def test_a_word_every_retrieved_chunk_holds_counts_less_than_a_rare_one() -> None:
    hits = _retrieved()
    rarity = Rarity(candidates(hits, QuestionShape.of("what can a middleware do with a timer")))

    assert rarity.weight("middlewar") == 1.0  # in every chunk: TF-IDF's smooth floor
    assert rarity.weight("log") > 1.5  # in one of four
    assert rarity.weight("svelte") == 0.0  # in none: it tells no statement from another
    # "A middleware can log ...": both words; "A custom middleware ...": the common one only.
    assert rarity.covered(frozenset({"middlewar", "log"}), {"middlewar", "log", "svelte"}) == 1.0
    assert rarity.covered(frozenset({"middlewar"}), {"middlewar", "log"}) < 0.4
