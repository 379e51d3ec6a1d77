"""Diversity caps and the monotone score, on hand-made hits (no store, no model)."""

from __future__ import annotations

import pytest

from bookrag.domain.models import ChunkPayload, StoredHit
from bookrag.retrieval.ranking import diversify, monotone_scores


def hit(n: int, file: str, section: str, cosine: float = 0.5) -> StoredHit:
    return StoredHit(chunk_id=f"c{n}", rank_score=1.0 / (n + 1), cosine=cosine,
                     payload=ChunkPayload.from_dict({"source_file": file, "section_heading": section}))


def ids(hits: list[StoredHit]) -> list[str]:
    return [h.chunk_id for h in hits]


# Ranked: four chunks of a.md's "Setup" section first, then other sections and files.
RANKED = [hit(0, "a.md", "Setup"), hit(1, "a.md", "Setup"), hit(2, "a.md", "Setup"), hit(3, "a.md", "Setup"),
          hit(4, "a.md", "Usage"), hit(5, "a.md", "Faq"), hit(6, "b.md", "Intro"), hit(7, "c.md", "Intro")]


def test_at_most_cap_chunks_per_section() -> None:
    assert ids(diversify(RANKED, 4, cap=2)) == ["c0", "c1", "c4", "c5"]


def test_file_cap_leaves_room_for_other_files() -> None:
    # A multi-part question needs b.md and c.md even though a.md has more matching sections.
    assert ids(diversify(RANKED, 5, cap=2, file_cap=3)) == ["c0", "c1", "c4", "c6", "c7"]


def test_no_cap_keeps_rank_order() -> None:
    assert ids(diversify(RANKED, 3, cap=0, file_cap=3)) == ["c0", "c1", "c2"]


def test_short_of_diverse_hits_it_fills_in_rank_order() -> None:
    same = [hit(i, "a.md", "Setup") for i in range(4)]
    assert ids(diversify(same, 3, cap=1, file_cap=1)) == ["c0", "c1", "c2"]


def test_fewer_hits_than_top_k() -> None:
    assert ids(diversify(RANKED[:2], 5, cap=1)) == ["c0", "c1"]


def test_monotone_scores_are_the_running_minimum() -> None:
    assert monotone_scores([0.5, 0.7, 0.4, 0.6]) == [0.5, 0.5, 0.4, 0.4]
    assert monotone_scores([0.9, 0.8]) == [0.9, 0.8]  # already descending: the cosines themselves
    assert monotone_scores([]) == []


@pytest.mark.parametrize("cosines", [[0.3, 0.9, 0.1, 0.5, 0.5], [1.0], [0.0, 1.0]])
def test_monotone_scores_never_increase_and_never_exceed_the_cosine(cosines: list[float]) -> None:
    scores = monotone_scores(cosines)
    assert scores == sorted(scores, reverse=True)
    assert all(s <= c for s, c in zip(scores, cosines, strict=True))
    assert scores[0] == cosines[0]
