"""Whether a sentence is supported: one fitted score, not a rule per case.

A sentence and the evidence it cites (`answerers.grounding`) become a few features; the verdict is
a logistic regression over them, P(faithful) = sigmoid(coef . x + intercept), kept when it reaches
`threshold`. The weights are data (`bookrag/data/grounding_weights.json`), fit offline on our own grounding sets
(textbook-2 and the sample book: faithful = 1, invented = 0) by `python -m bookrag.devtools.fit_grounding`
from the committed feature table `eval/grounding-features.csv`; the threshold is chosen on the curve of
textbook-2 and redux (benchmarks/grounding-curve.png). Nothing here imports scikit-learn: the runtime
reads the JSON and computes a dot product.

The features (each in 0..1):
- `coverage`: share of the sentence's content terms found in what it cites, its section's neighbouring
  chunks and the subsections under its heading (an overview cited for its children's facts);
- `cited_coverage`: the same share in the cited chunks alone;
- `unit_coverage`: the share in the best single unit (sentence, item, lead-in with its list);
- `cosine`: the embedder's cosine between the sentence and its best unit;
- `figures_missing`: it states a figure in digits none of its supporting units holds;
- `counts_missing`: it states a figure in words ("two legs", "three fields") its units lack, and no cited
  list (nor the cited overview's subsections) holds that many items;
- `reversed`: it reverses its units (`text.polarity.reverses`: negators within three words, antonyms), or
  obliges, permits or says still holds what they forbid, waive or say no longer holds (`text.stance.contradicts`);
- `claim_negation`: the share of its negated clauses whose aligned clause in its close units (the one sharing
  most of its terms, `text.polarity.aligned_polarity`) holds no negator;
- `book_negation`: 1 when a clause of it without a negator is aligned with a unit clause that holds one;
- `missing_terms`: how many of its terms the evidence lacks (5 or more: 1);
- `length`: how many terms it has (30 or more: 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path

from bookrag.domain.fitted import logistic, read_fitted

__all__ = ["FEATURES", "WEIGHTS_FILE", "Features", "Model", "model"]

WEIGHTS_FILE = Path(__file__).resolve().parents[2] / "data" / "grounding_weights.json"  # package data
_MISSING_CAP = 5
_LENGTH_CAP = 30


@dataclass(frozen=True, slots=True)
class Features:
    coverage: float
    cited_coverage: float
    unit_coverage: float
    cosine: float
    figures_missing: float
    counts_missing: float
    reversed: float
    missing_terms: float
    length: float
    claim_negation: float = 0.0
    book_negation: float = 0.0

    @classmethod
    def of(cls, coverage: float, cited: float, unit: float, cosine: float, figures_missing: bool,
           counts_missing: bool, reversed_: bool, terms: int, polarity: tuple[float, float] = (0.0, 0.0)) -> Features:
        missing = round(terms * (1.0 - coverage))
        return cls(coverage, cited, unit, cosine, float(figures_missing), float(counts_missing), float(reversed_),
                   min(missing, _MISSING_CAP) / _MISSING_CAP, min(terms, _LENGTH_CAP) / _LENGTH_CAP, *polarity)

    def row(self) -> tuple[float, ...]:
        return tuple(round(float(v), 6) for v in _values(self))


FEATURES = tuple(f.name for f in fields(Features))


def _values(x: Features) -> tuple[float, ...]:
    # `astuple` deep-copies field by field (the check asks it thousands of times a request); the features are floats.
    return tuple(getattr(x, name) for name in FEATURES)


@dataclass(frozen=True, slots=True)
class Model:
    """The fitted verdict: `coef` in the order of `FEATURES`."""

    coef: tuple[float, ...]
    intercept: float
    threshold: float

    def probability(self, x: Sequence[float]) -> float:
        return logistic(self.coef, self.intercept, x)

    def cosine_range(self, x: Features) -> tuple[float, float]:
        """The probability with the cosine at 0 and at 1: when both fall on the same side of the
        threshold the verdict does not need the embedder (most sentences: it saves its call)."""
        low, high = self.probability(_with_cosine(x, 0.0)), self.probability(_with_cosine(x, 1.0))
        return min(low, high), max(low, high)


def _with_cosine(x: Features, cosine: float) -> tuple[float, ...]:
    row = list(_values(x))
    row[FEATURES.index("cosine")] = cosine
    return tuple(row)


@lru_cache(maxsize=1)
def model() -> Model:
    """The committed weights; raises `ValueError` when they were fit on other features (a refit is due)."""
    data = read_fitted(WEIGHTS_FILE.name, FEATURES)
    return Model(tuple(float(c) for c in data["coef"]), float(data["intercept"]), float(data["threshold"]))
