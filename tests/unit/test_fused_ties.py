"""Equal fused scores are broken by closeness to the question, the same way by both store adapters."""

from __future__ import annotations

import numpy as np

from bookrag.adapters.store.vectors import ranked

QUESTION = np.asarray([1.0, 0.0, 0.0], dtype=np.float32)


def test_a_tie_goes_to_the_chunk_closer_to_the_question() -> None:
    # GIVEN two chunks with the same RRF score (one ranked 3rd by dense, one 3rd by BM25), the farther first
    scores = [1 / 63, 1 / 63]
    vectors = [[0.0, 1.0, 0.0], [0.8, 0.6, 0.0]]
    # WHEN ranked
    order = ranked(scores, vectors, ["a", "b"], QUESTION, wanted=2)
    # THEN the closer one comes first, carrying its cosine
    assert [i for i, _ in order] == [1, 0]
    assert order[0][1] == np.float32(0.8)


def test_the_engine_score_still_decides_before_closeness() -> None:
    order = ranked([0.03, 0.02], [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], ["a", "b"], QUESTION, wanted=2)
    assert [i for i, _ in order] == [0, 1]


def test_the_margin_past_the_limit_is_cut_after_breaking_ties() -> None:
    # The engine returned the farther of two tied chunks inside the limit and the closer one in the margin.
    scores = [0.05, 0.04, 0.04]
    vectors = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.9, 0.1, 0.0]]
    assert [i for i, _ in ranked(scores, vectors, ["a", "b", "c"], QUESTION, wanted=2)] == [0, 2]


def test_a_missing_vector_counts_as_unrelated_and_ids_settle_exact_ties() -> None:
    order = ranked([0.5, 0.5, 0.5], [None, [1.0, 0.0], [-1.0, 0.0, 0.0]], ["c", "b", "a"], QUESTION, wanted=3)
    # "c" has no vector and "b" a malformed one: both cosine 0, so by id; "a" points away (-1): last
    assert [i for i, _ in order] == [1, 0, 2]
    assert all(cos == 0.0 for _, cos in order)  # clamped to [0, 1] as the port promises
