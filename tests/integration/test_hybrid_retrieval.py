"""Dense, BM25 and hybrid retrieval in embedded Qdrant, on a tiny book built so that each must win once.

- A rare exact term ("QZX-7741") sits in a chunk about coffee, while the words around it in the query
  ("firmware setting") fill six other chunks: BM25 finds it by the term's weight, dense is pulled
  towards the firmware chunks.
- A paraphrase ("figure out where it is on a map") shares no content word with the localization
  chunk, while a campus tour shares many: dense finds the meaning, BM25 the words.
Hybrid must find both.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bookrag.domain.models import Filters, SearchHit
from bookrag.ingestion.ingestor import Ingestor
from bookrag.retrieval.retriever import Retriever, SearchOptions
from bookrag.services.container import container_for
from tests.support.books import ingest_pages

BOOK = {
    "perception/localization.md": """
        ---
        title: Localization
        ---
        # Localization

        ## Pose estimation

        A mobile platform estimates its pose relative to a known occupancy grid by comparing laser scans
        against the grid. A particle filter keeps many hypotheses of position and heading and discards the
        ones that disagree with the measurements.

        ## Odometry

        Wheel encoders count revolutions; integrating them gives a pose that drifts slowly over time, which
        is why it is corrected against the grid.
        """,
    "hardware/firmware.md": """
        ---
        title: Firmware settings
        ---
        # Firmware settings

        ## Watchdog

        The firmware setting that cuts motor power when velocity set-points stop arriving is the watchdog.
        It is disabled on delivery; enable it in the board configuration before the first drive.

        ## Current limits

        A firmware setting caps the motor current. Lower it for small robots, raise it for heavy payloads,
        and reflash the board configuration after every change.

        ## Encoder resolution

        The firmware setting for encoder resolution must match the counts per revolution of the fitted
        encoder, or the reported wheel speed is wrong by the same ratio.

        ## Update procedure

        Every firmware setting survives an update. Flash the new image over USB, then check each setting
        in the board configuration tool.
        """,
    "hardware/arm.md": """
        ---
        title: Arm firmware
        ---
        # Arm firmware

        ## Joint limits

        The arm firmware stores a setting for each joint limit. A joint that reaches its limit stops, and
        the firmware reports which setting stopped it.

        ## Brake release

        A firmware setting decides whether the joint brakes release on power-up or wait for a command.
        """,
    "campus/tour.md": """
        ---
        title: Building tour
        ---
        # Building tour

        ## Where things are

        The robot club keeps a printed map near the entrance. Visitors figure out where the cafeteria is by
        finding it on the map, and the robot club room is where the map says it is, next to the stairs.
        """,
    "campus/coffee.md": """
        ---
        title: Coffee corner
        ---
        # Coffee corner

        ## The espresso machine

        Press the button labelled QZX-7741 on the espresso machine for a double shot. Descale the machine
        every month and empty the grounds drawer each evening.
        """,
}

RARE_TERM = "Which firmware setting is QZX-7741?"
PARAPHRASE = "How does a robot figure out where it is on a map?"
QUERIES = (RARE_TERM, PARAPHRASE, "Which firmware setting should I change?")
MODES = ("dense", "sparse", "hybrid")


@pytest.fixture(scope="module")
def retriever(tmp_path_factory: pytest.TempPathFactory) -> Retriever:
    settings, report = ingest_pages(tmp_path_factory.mktemp("tiny-book"), BOOK)
    assert report.chunks_total >= 8 and not report.skipped
    return container_for(settings).retriever


def files(hits: list[SearchHit]) -> list[str]:
    return [h.source_file for h in hits]


def search(retriever: Retriever, query: str, mode: str, top_k: int = 3, **kw: object) -> list[SearchHit]:
    return retriever.search(query, SearchOptions(top_k=top_k, mode=mode, **kw)).hits  # type: ignore[arg-type]


def test_bm25_wins_on_a_rare_exact_term(retriever: Retriever) -> None:
    assert files(search(retriever, RARE_TERM, "sparse"))[0] == "campus/coffee.md"
    assert "campus/coffee.md" not in files(search(retriever, RARE_TERM, "dense"))


def test_dense_wins_on_a_paraphrase(retriever: Retriever) -> None:
    assert files(search(retriever, PARAPHRASE, "dense"))[0] == "perception/localization.md"
    assert "perception/localization.md" not in files(search(retriever, PARAPHRASE, "sparse", top_k=10))


@pytest.mark.parametrize(("query", "expected"), [(RARE_TERM, "campus/coffee.md"),
                                                 (PARAPHRASE, "perception/localization.md")])
def test_hybrid_finds_both(retriever: Retriever, query: str, expected: str) -> None:
    assert expected in files(search(retriever, query, "hybrid"))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("query", QUERIES)
def test_scores_are_in_unit_range_and_descending(retriever: Retriever, query: str, mode: str) -> None:
    scores = [h.score for h in search(retriever, query, mode, top_k=10)]
    assert scores and all(0.0 <= s <= 1.0 for s in scores)
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("query", QUERIES)
def test_score_is_the_running_minimum_of_cosines_in_rank_order(retriever: Retriever, query: str) -> None:
    # Sorted by cosine, each score is the chunk's own cosine (a running minimum of a descending list).
    cosine = {h.chunk_id: h.score for h in search(retriever, query, "hybrid", top_k=50, order="score")}
    ranked = search(retriever, query, "hybrid", top_k=50)

    assert {h.chunk_id for h in ranked} == set(cosine)
    running = 1.0
    for h in ranked:
        running = min(running, cosine[h.chunk_id])
        assert h.score == pytest.approx(running, abs=1e-6) and h.score <= cosine[h.chunk_id]


def test_dense_scores_are_the_cosine(retriever: Retriever) -> None:
    # Qdrant's own cosine is the dense rank score: in dense mode the two orders agree.
    for h in search(retriever, PARAPHRASE, "dense", top_k=10):
        assert h.score == pytest.approx(h.rank_score, abs=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_min_score_keeps_exactly_the_chunks_at_least_that_similar(retriever: Retriever, mode: str) -> None:
    cosine = {h.chunk_id: h.score for h in search(retriever, RARE_TERM, mode, top_k=50, order="score")}
    ordered = sorted(set(cosine.values()))
    # Halfway between two scores, so that rounding cannot put a chunk on the wrong side.
    threshold = (ordered[len(ordered) // 2 - 1] + ordered[len(ordered) // 2]) / 2

    kept = search(retriever, RARE_TERM, mode, top_k=50, min_score=threshold)

    assert {h.chunk_id for h in kept} == {c for c, s in cosine.items() if s >= threshold}
    assert all(h.score >= threshold for h in kept)


@pytest.mark.parametrize("mode", MODES)
def test_module_filter(retriever: Retriever, mode: str) -> None:
    hits = search(retriever, RARE_TERM, mode, top_k=10, filters=Filters(module_name="hardware"))
    assert hits and {h.payload.module_name for h in hits} == {"hardware"}


@pytest.mark.parametrize("mode", MODES)
def test_source_file_filter(retriever: Retriever, mode: str) -> None:
    hits = search(retriever, RARE_TERM, mode, top_k=10, filters=Filters(source_file="campus/coffee.md"))
    assert files(hits) == ["campus/coffee.md"]


def test_filter_with_no_match_returns_nothing(retriever: Retriever) -> None:
    assert search(retriever, RARE_TERM, "hybrid", filters=Filters(module_name="no-such-module")) == []


def test_filters_combine(retriever: Retriever) -> None:
    hits = search(retriever, "Which firmware setting should I change?", "hybrid", top_k=10,
                  filters=Filters(module_name="hardware", source_file="hardware/arm.md"))
    assert hits and set(files(hits)) == {"hardware/arm.md"}


def test_diversity_caps_one_file(retriever: Retriever) -> None:
    query = "Which firmware setting should I change?"
    plain = files(search(retriever, query, "hybrid", top_k=5, diversify=False))
    diverse = files(search(retriever, query, "hybrid", top_k=5))

    assert plain.count("hardware/firmware.md") == 4
    assert diverse.count("hardware/firmware.md") == 3 and len(diverse) == 5


def test_a_query_without_indexable_terms_falls_back_to_dense(retriever: Retriever) -> None:
    # Only stop words: BM25 has nothing to match; hybrid must still answer (dense alone).
    assert search(retriever, "what is it?", "hybrid") and search(retriever, "what is it?", "sparse") == []


def test_neighbours_join_adjacent_chunks_in_order(retriever: Retriever) -> None:
    hits = search(retriever, "encoder resolution counts per revolution", "hybrid", top_k=10,
                  filters=Filters(source_file="hardware/firmware.md"))
    middle = next(h for h in hits if 0 < h.chunk_index < h.payload.total_chunks - 1)
    chunks = {h.chunk_index: h.text for h in hits}

    text = retriever.neighbours(middle, window=1)

    i = middle.chunk_index
    assert text == "\n\n".join(chunks[j] for j in (i - 1, i, i + 1))


def test_neighbours_stop_at_the_file_edges(retriever: Retriever) -> None:
    (only,) = search(retriever, RARE_TERM, "hybrid", top_k=1, filters=Filters(source_file="campus/coffee.md"))
    assert only.payload.total_chunks == 1
    assert retriever.neighbours(only, window=2) == only.text

    first = next(h for h in search(retriever, RARE_TERM, "hybrid", top_k=10,
                                   filters=Filters(source_file="hardware/firmware.md")) if h.chunk_index == 0)
    assert retriever.neighbours(first, window=1).startswith(first.text + "\n\n")


def test_ingest_is_idempotent_for_search(retriever: Retriever) -> None:
    before = [h.chunk_id for h in search(retriever, RARE_TERM, "hybrid", top_k=5)]
    docs = Path(str(retriever.settings.qdrant_path)).parent / "docs"
    Ingestor(retriever.settings, retriever.embedder, retriever.store).run(docs)
    assert [h.chunk_id for h in search(retriever, RARE_TERM, "hybrid", top_k=5)] == before
