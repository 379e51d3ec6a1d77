"""Content gaps: the questions the book could not answer well, grouped by topic with the embedder in use.

A record is a gap when it was refused, or answered with its best chunk's similarity (`top_score`) under
the agent's threshold plus `LOW_CONFIDENCE_MARGIN`: the gate let it through on little (a heading's words,
a chunk barely over the line). Errors are not gaps: the book was never asked.

Grouping is Taylor-Butina clustering (Butina 1999, J. Chem. Inf. Comput. Sci. 39:747), built for exactly
this: no number of clusters to choose, one similarity threshold with a meaning, deterministic. Every
distinct question's neighbours are the questions at least `SIMILARITY` cosine-similar to it; questions
are taken in order of how many records their neighbourhood holds, and each untaken one becomes a
cluster's centre and takes its untaken neighbours. The centre is the cluster's most central question: the
one the book is searched for ("where an answer would go"). Cost: one matrix product per block of rows.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from bookrag.domain.question_log import QueryRecord

# Answerable questions' best chunk sits 0.34-0.82 with the local model and unanswerable ones' 0.13-0.57
# (domain/thresholds.py): the band just over the agent's threshold is where both meet.
LOW_CONFIDENCE_MARGIN = 0.05
# all-MiniLM-L6-v2: paraphrases of one question score 0.7-0.9, two questions on one topic 0.55-0.7, two
# topics of one robotics book 0.2-0.5; 0.6 joins a topic's phrasings and keeps topics apart (the unit test
# holds both sides). Cohere's embeddings score higher for the same relation, so it gets its own value.
SIMILARITY = {"local": 0.6, "cohere": 0.7}
BLOCK = 1024  # rows of the similarity matrix held at once: 1024 x 10k float32 is 40 MB
EXAMPLES = 3

_SPACES = re.compile(r"\s+")


def normalise(question: str) -> str:
    """What makes two questions the same question: case, runs of spaces and the end's punctuation aside."""
    return _SPACES.sub(" ", question).strip().rstrip("?!.").strip().casefold()


def is_gap(record: QueryRecord, low_confidence_below: float) -> bool:
    if record.outcome == "refused":
        return True
    return record.outcome == "answered" and record.top_score is not None and record.top_score < low_confidence_below


@dataclass(frozen=True, slots=True)
class Question:
    """One distinct gap question and the records that asked it."""

    key: str  # normalise(text)
    text: str  # its most frequent spelling
    records: int
    refused: int


@dataclass(frozen=True, slots=True)
class Cluster:
    centre: Question
    members: tuple[Question, ...]  # most asked first; the centre among them

    @property
    def count(self) -> int:
        return sum(q.records for q in self.members)

    @property
    def refused(self) -> int:
        return sum(q.refused for q in self.members)

    def examples(self) -> tuple[str, ...]:
        return tuple(q.text for q in self.members[:EXAMPLES])


def distinct_questions(records: Sequence[QueryRecord]) -> list[Question]:
    """The gap records' distinct questions, most asked first (then alphabetically: the order is stable)."""
    spellings: dict[str, Counter[str]] = {}
    refused: Counter[str] = Counter()
    for r in records:
        key = normalise(r.question)
        if not key:
            continue
        spellings.setdefault(key, Counter())[r.question.strip()] += 1
        refused[key] += r.outcome == "refused"
    questions = [Question(key=key, text=min(c, key=lambda s: (-c[s], s)), records=sum(c.values()),
                          refused=refused[key]) for key, c in spellings.items()]
    questions.sort(key=lambda q: (-q.records, q.key))
    return questions


def neighbourhoods(vectors: np.ndarray, similarity: float) -> list[np.ndarray]:
    """Each row's neighbours (indices, itself included) among L2-normalised rows."""
    out: list[np.ndarray] = []
    for start in range(0, len(vectors), BLOCK):
        sims = vectors[start:start + BLOCK] @ vectors.T
        out.extend(np.flatnonzero(row >= similarity) for row in sims)
    return out


def butina(vectors: np.ndarray, weights: Sequence[int], similarity: float) -> list[tuple[int, list[int]]]:
    """Clusters as (centre, members) index lists, members in index order; see the module's docstring."""
    hoods = neighbourhoods(vectors, similarity)
    weight = np.asarray(weights, dtype=np.int64)
    density = [int(weight[h].sum()) for h in hoods]
    taken = np.zeros(len(hoods), dtype=bool)
    clusters = []
    for centre in sorted(range(len(hoods)), key=lambda i: (-density[i], i)):
        if taken[centre]:
            continue
        members = [int(i) for i in hoods[centre] if not taken[i]]
        taken[members] = True
        clusters.append((centre, members))
    return clusters


def cluster_gaps(questions: Sequence[Question], embed: Callable[[list[str]], np.ndarray],
                 similarity: float) -> list[Cluster]:
    """The questions grouped by topic, the largest cluster first. `embed` returns L2-normalised rows."""
    if not questions:
        return []
    vectors = np.asarray(embed([q.text for q in questions]), dtype=np.float32)
    clusters = []
    for centre, members in butina(vectors, [q.records for q in questions], similarity):
        # `questions` is most asked first, and member indices keep that order.
        clusters.append(Cluster(centre=questions[centre], members=tuple(questions[i] for i in members)))
    clusters.sort(key=lambda c: (-c.count, c.centre.key))
    return clusters
