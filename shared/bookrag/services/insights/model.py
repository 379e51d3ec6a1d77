"""The owner's report as typed values, and its JSON shape (`Report.as_dict`, schema `bookrag.report/1`).

The JSON keys are a promise to whoever scripts against `bookrag report --json`: they are only ever added
to, never renamed, and every list is in a documented order (README, "What readers ask").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

SCHEMA = "bookrag.report/1"


@dataclass(frozen=True, slots=True)
class Latency:
    count: int
    p50_ms: float | None  # None when nothing was measured
    p95_ms: float | None


@dataclass(frozen=True, slots=True)
class RouteStats:
    route: str
    questions: int
    answered: int
    refused: int
    errors: int
    refusal_rate: float | None  # refused / (answered + refused); None when neither happened
    latency: Latency


@dataclass(frozen=True, slots=True)
class DayVolume:
    day: str  # YYYY-MM-DD, UTC
    questions: int
    answered: int
    refused: int
    errors: int


@dataclass(frozen=True, slots=True)
class SectionCount:
    url: str
    title: str
    asked: int  # records whose best section this is: where the question landed
    cited: int  # records listing it anywhere among their sections


@dataclass(frozen=True, slots=True)
class VotedSection:
    url: str
    title: str
    down: int  # down votes on answers citing this section
    up: int
    questions: tuple[str, ...]  # up to three down-voted questions (scrubbed when logged)
    comments: tuple[str, ...]  # up to three comments left with a down vote (scrubbed when stored)


@dataclass(frozen=True, slots=True)
class NearSection:
    url: str
    title: str
    score: float


@dataclass(frozen=True, slots=True)
class GapCluster:
    label: str  # the cluster's most central question: the one the nearest sections were searched for
    count: int  # records in the cluster (a question asked twice counts twice)
    distinct: int  # distinct questions after normalising case, spaces and end punctuation
    refused: int
    low_confidence: int
    examples: tuple[str, ...]  # up to three distinct questions, most asked first
    nearest_sections: tuple[NearSection, ...]  # where an answer would go; empty if the book was unreachable
    book_similarity: float | None = None  # the label's nearest chunk (cosine): how near the book it is


@dataclass(frozen=True, slots=True)
class OffTopic:
    """Gap clusters far from everything the book says: counted for the owner, never listed as gaps."""

    below: float | None  # a cluster is off-topic when its label's nearest chunk is under this; None: not split
    questions: int  # gap records in off-topic clusters
    clusters: int
    examples: tuple[str, ...]  # the largest off-topic clusters' labels, up to three


@dataclass(frozen=True, slots=True)
class Gaps:
    definition: str  # which records count as a gap, in words
    low_confidence_below: float  # an answered record whose top_score is under this is low confidence
    similarity: float  # two questions are neighbours when their cosine is at least this
    embedder: str
    questions: int  # gap records
    distinct: int
    clusters_total: int
    clusters: tuple[GapCluster, ...]  # near the book, not answered: the largest first, at most the report's limit
    near_clusters: int = 0  # clusters near the book (those `clusters` lists first)
    off_topic: OffTopic | None = None  # the rest, counted


@dataclass(frozen=True, slots=True)
class Report:
    generated_at: str  # ISO 8601, UTC
    since: str
    log: str  # "local:<folder>" or "dynamodb:<table>"
    book: str  # the book id it reports on (`bookrag report --book`): a log holds every book's records
    questions: int
    answered: int
    refused: int
    errors: int
    refusal_rate: float | None
    votes_up: int
    votes_down: int
    latency: Latency
    routes: tuple[RouteStats, ...]  # by route name
    volume_per_day: tuple[DayVolume, ...]  # every day from the first record's to the last's, oldest first
    top_sections: tuple[SectionCount, ...]  # most asked first
    downvoted_sections: tuple[VotedSection, ...]  # most down votes first
    gaps: Gaps
    notes: tuple[str, ...] = ()  # what the report could not do (e.g. the book's index was unreachable)

    def as_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, **asdict(self)}
