"""How well a statement answers a question: one fitted score (issue 37).

Each candidate statement is described by features that mean the same in any book (`FEATURES`): the
question's words in the statement and its headings, the dense similarity, the retrieval's judgement of
its chunk, the statement's kind and place, and the page's kind read from its structure. The score is
linear, `w . x`, with weights fit offline as a ranker on labelled statements (each statement of a gold
section of our own books' answer sets against the others retrieved with it; a pairwise logistic loss,
drawn towards the hand-set weights the answerer had before: `bookrag.devtools.fit_answerer`), kept in
`bookrag/data/answerer-weights.json` with `min_keep`, the bar below which a statement never joins an
answer. Whether the book answers at all is the gate's decision (`answering.gate.silent`), fit with it.
Refit with `make refit`; a test checks that the committed feature tables give exactly the committed
weights. Read once: a dot product per statement, no learning library at run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from bookrag.domain.fitted import read_fitted

__all__ = ["FEATURES", "Weights", "weights"]

# Tried and left out, as ranking the other of our two textbook answer sets measured no better without them or
# worse with them (and their small weights broke ties against a lead-in with its whole list): the chunk's rank,
# the statement's kind (item, lead-in, code), its place (the chunk's first), the page's share of questions,
# whether it defines the asked term; and whether its heading is the kind the question names ("What materials
# ...?"), a pattern of issue 37's rule count whose removal changed no answer of either book's blind set.
FEATURES: tuple[str, ...] = (
    "cosine",  # dense cosine between the question and the statement (a lead-in: the better of it and its list)
    "overlap",  # share of the question's content words (stems, synonyms) in the statement and its headings, each
    # weighted by how few of the retrieved chunks hold it (`candidates.Rarity`): "redux" in the Redux docs counts little
    "heading",  # the same share in its own section's heading (not the page title)
    "named_heading",  # the question names every word of the heading the statement sits under, times the share of
    # the other retrieved sections whose headings are not about that word ("Middleware" among middleware sections: low)
    "facet",  # the question asks for a side ("downsides") that labels the statement ("Cons:")
    "chunk",  # the retrieval's cosine for its chunk (0 for a chunk retrieved for one clause only)
    "unnamed",  # its page, as far as retrieved, never says a name the question gives
    "list_asked",  # a lead-in with its list, for a question that asks for a list
    "scaffold",  # course scaffolding (objectives, exercises, quiz items), unless the question asks about it
)


@dataclass(frozen=True, slots=True)
class Weights:
    coef: tuple[float, ...]
    intercept: float
    min_keep: float  # a statement's score below which it never joins an answer

    def score(self, x: np.ndarray) -> np.ndarray:
        """Scores of the rows of `x` (statements x FEATURES): higher answers better."""
        return np.asarray(x @ np.asarray(self.coef, dtype=np.float64) + self.intercept)

    def as_dict(self) -> dict[str, object]:
        return {"features": list(FEATURES), "coef": [round(c, 6) for c in self.coef],
                "intercept": round(self.intercept, 6),
                "min_keep": round(self.min_keep, 4)}


@cache
def weights() -> Weights:
    """The committed weights. Raises ValueError when they do not match `FEATURES` (a stale file)."""
    raw = read_fitted("answerer-weights.json", FEATURES)  # `make refit` when it was fit on others
    return Weights(tuple(float(c) for c in raw["coef"]), float(raw["intercept"]), float(raw["min_keep"]))
