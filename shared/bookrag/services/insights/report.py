"""The owner's report, built from the question log the settings name (through the container): read the
records and votes of the window, count, cluster the gaps with the embedder in use, split the clusters into
near the book (the author's to-do list) and off-topic (counted) by their nearest chunk, and search the book
for each listed cluster's central question."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np

from bookrag.adapters.question_log.vectors import QuestionVectors
from bookrag.domain.question_log import QueryRecord
from bookrag.errors import BookRAGError, ConfigError
from bookrag.retrieval.retriever import SearchOptions, default_threshold
from bookrag.services.insights import aggregate
from bookrag.services.insights.gaps import (
    ACROSS_LANGUAGES,
    LOW_CONFIDENCE_MARGIN,
    OFF_TOPIC_BELOW,
    SIMILARITY,
    Cluster,
    cluster_gaps,
    distinct_questions,
    is_gap,
    merge_across_languages,
)
from bookrag.services.insights.model import GapCluster, Gaps, NearSection, OffTopic, Report

if TYPE_CHECKING:
    from bookrag.services.container import Container

NEAREST = 3  # sections shown per gap cluster


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, tz=UTC).isoformat(timespec="seconds")


def build_report(container: Container, since: float, *, now: float | None = None, sections: int = 10,
                 gap_clusters: int = 15) -> Report:
    """Raises `ConfigError` when the log is off, `QuestionLogError` when it cannot be read. The book's
    index being unreachable is not fatal: the gaps come without their nearest sections, and a note says so."""
    settings = container.settings
    log = container.question_log
    if log is None:
        raise ConfigError("The question log is off (QUESTION_LOG=off): there is nothing to report")
    # The container's book only (`bookrag report --book`): a book's owner never sees another book's readers.
    records = [r for r in log.records(since) if r.book == container.book_id]
    votes = [v for v in log.feedback(since) if v.book == container.book_id]
    outcomes = [r.outcome for r in records]
    answered, refused = outcomes.count("answered"), outcomes.count("refused")
    gaps, notes = _gaps(container, records, gap_clusters)
    return Report(
        generated_at=_iso(now if now is not None else time.time()), since=_iso(since),
        log=f"dynamodb:{settings.question_log_table}" if settings.question_log_table
        else f"local:{settings.question_log_path}", book=container.book_id,
        questions=len(records), answered=answered, refused=refused, errors=outcomes.count("error"),
        refusal_rate=aggregate.refusal_rate(answered, refused),
        votes_up=sum(v.rating == "up" for v in votes), votes_down=sum(v.rating == "down" for v in votes),
        latency=aggregate.latency([r.latency_ms for r in records]), routes=aggregate.route_stats(records),
        volume_per_day=aggregate.volume_per_day(records), top_sections=aggregate.top_sections(records, sections),
        downvoted_sections=aggregate.voted_sections(records, votes, sections), gaps=gaps, notes=tuple(notes))


def _gaps(container: Container, records: list[QueryRecord], limit: int) -> tuple[Gaps, list[str]]:
    settings = container.settings
    below = round(default_threshold(settings, "agent") + LOW_CONFIDENCE_MARGIN, 4)
    provider = settings.resolved_embedding_provider
    similarity = SIMILARITY[provider]
    gap_records = [r for r in records if is_gap(r, below)]
    questions = distinct_questions(gap_records)
    embedder = container.embedder
    notes: list[str] = []
    clusters: list[Cluster] = []
    embedded: dict[str, np.ndarray] = {}
    if questions:
        vectors = QuestionVectors(settings.question_log_path, embedder.name, embedder.dimension, container.book_id)

        def embed(texts: list[str]) -> np.ndarray:
            rows = vectors.embed(texts, embedder.embed_documents)
            embedded.update(zip(texts, rows, strict=True))
            return rows

        try:
            clusters = cluster_gaps(questions, embed, similarity)
        except BookRAGError as exc:
            notes.append(f"gap questions were not clustered: the embedder failed ({exc.code})")
    near, off, cosine = _split(container, clusters, embedded, OFF_TOPIC_BELOW[provider], notes)
    shown = []
    searchable = True
    for c in near[:limit]:
        nearest: tuple[NearSection, ...] = ()
        if searchable:
            try:
                nearest = _nearest(container, c.centre.text)
            except BookRAGError as exc:
                searchable = False
                notes.append(f"nearest sections left out: the book's index could not be searched ({exc.code})")
        shown.append(GapCluster(label=c.centre.text, count=c.count, distinct=len(c.members), refused=c.refused,
                                low_confidence=c.count - c.refused, examples=c.examples(),
                                nearest_sections=nearest, book_similarity=cosine.get(c.centre.text)))
    definition = (f"refused, or answered with the best chunk's similarity under {below} (the agent's threshold "
                  f"+ {LOW_CONFIDENCE_MARGIN})")
    off_topic = OffTopic(below=OFF_TOPIC_BELOW[provider], questions=sum(c.count for c in off), clusters=len(off),
                         examples=tuple(c.centre.text for c in off[:3]))
    return Gaps(definition=definition, low_confidence_below=below, similarity=similarity, embedder=embedder.name,
                questions=len(gap_records), distinct=len(questions), clusters_total=len(near) + len(off),
                clusters=tuple(shown), near_clusters=len(near), off_topic=off_topic), notes


def _split(container: Container, clusters: list[Cluster], embedded: dict[str, np.ndarray], off_below: float | None,
           notes: list[str]) -> tuple[list[Cluster], list[Cluster], dict[str, float]]:
    """The clusters near the book (one per gap, its phrasings in any language joined) and the off-topic ones,
    each largest first, and each label's nearest chunk's cosine. Near or not is the store's own evidence: a
    question whose nearest chunk is under `off_below` is about nothing the book says."""
    if not clusters:
        return [], [], {}
    retriever = container.retriever
    try:
        found = retriever.best_cosines(np.stack([embedded[c.centre.text] for c in clusters]))
        cosine = {c.centre.text: round(x, 4) for c, x in zip(clusters, found, strict=True)}
        near: list[Cluster] = []
        off: list[Cluster] = []
        for c in clusters:
            (near if off_below is None or cosine[c.centre.text] >= off_below else off).append(c)
        joined = merge_across_languages(near, retriever.book_words, embedded.__getitem__,
                                        ACROSS_LANGUAGES[container.settings.resolved_embedding_provider])
        return joined, off, cosine
    except BookRAGError as exc:
        notes.append(f"gaps not split into near the book and off-topic: the book's index could not be searched "
                     f"({exc.code})")
        return clusters, [], {}


def _nearest(container: Container, question: str) -> tuple[NearSection, ...]:
    hits = container.retriever.search(question, SearchOptions(top_k=NEAREST)).hits
    return tuple(NearSection(url=h.payload.source_url,
                             title=" > ".join(h.payload.heading_path) or h.payload.citation_label,
                             score=round(h.score, 4)) for h in hits)
