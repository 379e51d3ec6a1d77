"""The grounding check's hot paths (issue 34: check p50 <= 30 ms) read as their plain definitions do: the page
overlap a chunk carries over, and whether a word sequence occurs on the page above a quote."""

from __future__ import annotations

import random

from bookrag.answering.answerers.spans import _occurs
from bookrag.text.overlap import MIN_OVERLAP, carried_over


def _carried_over_by_definition(previous: str, text: str) -> int:
    longest = min(len(previous), len(text))
    return next((k for k in range(longest, MIN_OVERLAP - 1, -1) if previous.endswith(text[:k])), 0)


def test_carried_over_is_the_longest_start_of_text_that_ends_previous() -> None:
    rng = random.Random(34)
    for _ in range(5000):
        previous = "".join(rng.choice("ab ") for _ in range(rng.randint(0, 60)))
        cut = rng.randint(0, len(previous))
        text = previous[cut:] + "".join(rng.choice("ab ") for _ in range(rng.randint(0, 30)))
        if rng.random() < 0.3:
            text = "".join(rng.choice("ab ") for _ in range(rng.randint(0, 60)))
        assert carried_over(previous, text) == _carried_over_by_definition(previous, text), (previous, text)
    assert carried_over("x" * 10 + "the packer carries prose over", "the packer carries prose over. More") == 29


def test_occurs_finds_a_word_sequence_anywhere_and_nothing_else() -> None:
    rng = random.Random(34)
    for _ in range(5000):
        haystack = [rng.choice("xyz") for _ in range(rng.randint(0, 12))]
        needle = [rng.choice("xyz") for _ in range(rng.randint(0, 4))]
        expected = bool(needle) and any(haystack[i:i + len(needle)] == needle
                                        for i in range(len(haystack) - len(needle) + 1))
        assert _occurs(needle, haystack) == expected, (needle, haystack)
