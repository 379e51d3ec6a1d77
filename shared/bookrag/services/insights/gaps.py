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
# Near the book or off-topic: a gap cluster whose central question's nearest chunk of the book (cosine) is
# under this is off-topic: counted, not listed. Measured on the question sets (benchmarks/gap-topicality.md:
# "near" = a book's own questions, answerable or not; "off" = another book's and general ones). A near gap
# dropped is an author's to-do lost, noise listed only costs a glance: the highest value that keeps 98% of the
# near questions on both books, 0.26 (98.4% and 99.0% kept; general questions dropped 92% and 75%, another
# book's 51% and 33%: a Redux question about "middleware" is near a robotics book). Not measured for Cohere
# offline: None lists every gap as near the book.
OFF_TOPIC_BELOW: dict[str, float | None] = {"local": 0.26, "cohere": None}
# Two clusters are one gap in two languages when their central questions share the book's own words (names
# and terms survive translation: "Isaac Sim", "Windows"): at least this many, and this share of either's.
SHARED_WORDS = 2
SHARED_SHARE = 0.5
# ... and they are at least this similar: MiniLM gives a question and its Spanish or French translation 0.42-0.76
# (measured on the report test's phrasings), under SIMILARITY, so the embedder alone cannot join them; the
# shared words alone could join two English questions on different topics ("... need for this course?").
ACROSS_LANGUAGES = {"local": 0.4, "cohere": 0.5}
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


def _joined(a: Cluster, b: Cluster) -> Cluster:
    centre = a.centre if (a.count, -len(a.centre.key)) >= (b.count, -len(b.centre.key)) else b.centre
    members = sorted((*a.members, *b.members), key=lambda q: (-q.records, q.key))
    return Cluster(centre=centre, members=tuple(members))


def merge_across_languages(clusters: Sequence[Cluster], words: Callable[[str], frozenset[str]],
                           vectors: Callable[[str], np.ndarray], similarity: float) -> list[Cluster]:
    """`clusters` with those whose central questions share the book's words (`words`: a question's words the
    book uses) and are at least `similarity` similar (`vectors`: a question's L2-normalised row) joined: the
    embedder in use (English MiniLM) does not place "¿Puedo usar ROS 2 en un Mac con Apple silicon?" as near
    its English twin as it places two phrasings, but both keep the book's names. Largest first, as
    `cluster_gaps`."""
    terms = [words(c.centre.text) for c in clusters]
    parent = list(range(len(clusters)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    holders: dict[str, list[int]] = {}
    for i, t in enumerate(terms):
        for word in t:
            holders.setdefault(word, []).append(i)
    for i, t in enumerate(terms):
        for j in sorted({j for word in t for j in holders[word] if j > i}):
            shared = len(t & terms[j])
            if shared >= SHARED_WORDS and shared >= SHARED_SHARE * max(len(t), len(terms[j])) and float(
                    vectors(clusters[i].centre.text) @ vectors(clusters[j].centre.text)) >= similarity:
                parent[root(j)] = root(i)
    joined: dict[int, Cluster] = {}
    for i, c in enumerate(clusters):
        r = root(i)
        joined[r] = _joined(joined[r], c) if r in joined else c
    return sorted(joined.values(), key=lambda c: (-c.count, c.centre.key))
