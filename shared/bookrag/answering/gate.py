"""The answerable-or-refuse gate: whether the book holds the answer, on all the evidence retrieval has.

A short labelled section (a heading and three bullets, a table) embeds weakly: "What are the
downsides of Simbody?" finds its `#### Simbody` section first, yet at a dense cosine below the
agent's threshold, and the answerer was never asked. Its heading, though, *is* the question's
subject. So a retrieved chunk's evidence is (`weigh`):

- its dense cosine to the question (the retriever's score);
- the share of the question's content words (stemmed, `text.bm25.tokenize`) that its own headings
  (below the page title, which matches every question about its page) or its list and table labels
  (`- **Vendor Lock-in**: ...`, a table row's first cell) carry: `labelled`;
- with a reranker configured, the reranker's relevance (its `rank_score`).

A chunk is answerable evidence (`vouched`) when `cosine + LABEL_WEIGHT * labelled` clears the
agent's threshold, or the reranker's relevance clears `RERANK_MIN`. Without labels the gate is the
threshold as before, so a question answered before is answered the same way; the gate only lets
through the chunks whose headings or labels name what the question asks about.

It also holds the answerer's one decision of whether the book is silent (`silent`, issue 37): a
logistic regression over the best statement's fitted score, the retrieval's cosine, the share of the
question's words the book never uses and whether one of them is a name, fit on our own books'
answerable and unanswerable questions (`make refit`, `bookrag/data/gate-weights.json`). A reader's own
word the book never uses ("downsides" of "What are the downsides of Simbody?") weighs little; a name
it never uses weighs much more.

Calibration on textbook-2 (eval/textbook-2.jsonl, eval/short-sections-textbook-2.jsonl; local
embedder): an unanswerable question's chunks carry at most one labelled word of five to nine
(share <= 0.2), a label question's ("What is vendor lock-in?", "What are egress charges?": cosines
0.23 and 0.18) all of them. LABEL_WEIGHT = 0.3 lifts a fully labelled chunk from cosine 0.03 below
the threshold (0.33 - 0.3), a half-labelled one ("downsides of Simbody") from 0.18, and an
unanswerable question's best chunk by at most 0.06; the off-topic ones score 0.15 and stay refused.
`RERANK_MIN` is provisional (Cohere's relevance, not measured here): recalibrate with a key at hand.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from bookrag.domain.fitted import logistic, read_fitted
from bookrag.domain.models import SearchHit
from bookrag.text.bm25 import tokenize
from bookrag.text.sentences import TABLE_SEPARATOR

__all__ = ["LABEL_WEIGHT", "RERANK_MIN", "SILENCE_FEATURES", "Evidence", "Silence", "asked_about", "labels", "silence",
           "silence_features", "silent", "vouched", "weigh"]

LABEL_WEIGHT = 0.3
RERANK_MIN = 0.5
# "- **Label**: ...", "1. **Label** - ...", and a table row's first cell ("| Label | ... |").
_LABEL = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\*\*([^*\n]+)\*\*|^\s*\|\s*([^|\n]+?)\s*\|", re.M)


@dataclass(frozen=True, slots=True)
class Evidence:
    """What one retrieved chunk says about whether the book answers the question."""

    hit: SearchHit
    cosine: float
    labelled: tuple[str, ...]  # the question's words its own headings or labels carry
    share: float  # len(labelled) / the question's content words
    relevance: float | None  # the reranker's, when one ranked it

    @property
    def score(self) -> float:
        return self.cosine + LABEL_WEIGHT * self.share

    def clears(self, threshold: float) -> bool:
        return self.score >= threshold or (self.relevance is not None and self.relevance >= RERANK_MIN)


def labels(hit: SearchHit) -> set[str]:
    """Stems of the chunk's own headings (not the page title) and of its list and table labels."""
    path = hit.payload.heading_path
    own = [hit.section_heading, *path[1:]] if path else [hit.section_heading]
    own = [h for h in own if h and h != hit.payload.doc_title]
    cells = [a or b for a, b in _LABEL.findall(hit.text)]
    return set(tokenize(" ".join([*own, *(c for c in cells if not TABLE_SEPARATOR.match(c))])))  # not |---|


# "What does the book say about powering the robot?": the book and its saying are how the reader asks,
# not what about; the book never says "book" of itself, so they read as words it does not know. A reader names
# the book by what it is to them: "this whole course", "the docs".
_BOOK_TALK = re.compile(r"\b(?:(?:the|this|your)\s+(?:(?:whole|entire)\s+)?(?:book|textbook|course|docs|"
                        r"documentation)(?:\s+(?:says?|said|mentions?|covers?|"
                        r"discuss(?:es)?|talks?|tells?))?|according\s+to\s+the\s+(?:book|textbook))\b",
                        re.IGNORECASE)


def asked_about(question: str) -> str:
    """`question` without its talk of the book ("What does the book say about X?" -> "What does about X?")."""
    return _BOOK_TALK.sub(" ", question)


def weigh(question: str, hits: Sequence[SearchHit], reranked: bool = False) -> list[Evidence]:
    """Each hit's evidence, in the hits' order. `reranked`: their `rank_score` is a reranker's relevance."""
    words = list(dict.fromkeys(tokenize(asked_about(question))))
    out = []
    for hit in hits:
        carried = labels(hit)
        labelled = tuple(w for w in words if w in carried)
        out.append(Evidence(hit, hit.score, labelled, len(labelled) / len(words) if words else 0.0,
                            hit.rank_score if reranked else None))
    return out


def vouched(question: str, hits: Sequence[SearchHit], threshold: float, reranked: bool = False) -> list[SearchHit]:
    """The hits whose evidence clears `threshold` (the agent's), in their order: none means refuse."""
    return [e.hit for e in weigh(question, hits, reranked) if e.clears(threshold)]


# --- whether the book is silent: one fitted decision (issue 37) -------------------------------------------

SILENCE_FEATURES: tuple[str, ...] = (
    "best",  # the best statement's fitted score (`answerers.scoring`): how well the book's best sentence answers
    "unknown_share",  # share of the question's content words the book never uses (typos respelt first)
    "unknown_name",  # one of them is a name: capitalised, an acronym or version, or no English word ("svelte")
    "top_cosine",  # the retrieval's cosine for its first chunk
)


@dataclass(frozen=True, slots=True)
class Silence:
    """A logistic regression over `SILENCE_FEATURES`: the probability that the book answers; below `bar`,
    the answerer refuses. Fit offline with the statement score (`bookrag.devtools.fit_answerer`) on our own
    books' questions, answerable and not, and kept in `bookrag/data/gate-weights.json`."""

    coef: tuple[float, ...]
    intercept: float
    bar: float

    def answers(self, x: Sequence[float]) -> float:
        return logistic(self.coef, self.intercept, x)

    def as_dict(self) -> dict[str, object]:
        return {"features": list(SILENCE_FEATURES), "coef": [round(c, 6) for c in self.coef],
                "intercept": round(self.intercept, 6), "bar": round(self.bar, 4)}


@cache
def silence() -> Silence:
    """The committed gate. Raises ValueError when it was fit on other features (run `make refit`)."""
    raw = read_fitted("gate-weights.json", SILENCE_FEATURES)  # `make refit` when it was fit on others
    return Silence(tuple(float(c) for c in raw["coef"]), float(raw["intercept"]), float(raw["bar"]))


def silence_features(best: float, unknown: int, asked: int, named: bool, hits: Sequence[SearchHit]) -> list[float]:
    """`SILENCE_FEATURES` of one question: its best statement's score, how many of its `asked` content words
    the book never uses (`unknown`), whether one of those is a name, and its retrieval."""
    return [best, unknown / asked if asked else 0.0, float(named), hits[0].score if hits else 0.0]


def silent(features: Sequence[float]) -> bool:
    """Whether the book is silent on the question: the fitted probability that it answers is below the bar."""
    gate = silence()
    return gate.answers(features) < gate.bar
