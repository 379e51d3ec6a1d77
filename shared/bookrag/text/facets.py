"""The words of a verdict: a book labels the sides of a thing "Advantages" / "Disadvantages", "Pros" /
"Cons", "Benefits", "Limitations", "Challenges", while a reader asks for its "downsides" or "drawbacks",
or what makes it "hard". Each side is one facet, so a question's "downsides" meets a heading's
"Disadvantages". Also a reader's "my own" for the book's "custom" ("How do I define my own service type?"
and "Custom Service Types"), and "made of" for "consisting of".

Only these closed word sets, matched as whole words before stemming: their stems are too loose to
match on ("limitations" and "limits" share `limit`; "weaknesses" and "weak" share `weak`)."""

from __future__ import annotations

import re
from functools import lru_cache

from bookrag.text.bm25 import stem_words

_FACETS: dict[str, tuple[str, ...]] = {
    # A "Trade-offs" heading gives both sides (textbook-2's "Performance Trade-offs", "Cost Trade-offs").
    "cons": ("drawback", "downside", "disadvantage", "cons", "limitation", "weakness", "shortcoming", "pitfall",
             "trade-off", "tradeoff"),
    "pros": ("advantage", "benefit", "pros", "upside", "strength", "merit", "trade-off", "tradeoff"),
    "hard": ("challenge", "difficulty", "difficulties", "difficult", "hard", "harder", "hardest", "tricky"),
    # Not "its own" or "their own": "on its own premises" is not custom-made.
    "custom": ("custom", "customised", "customized", "my own", "your own", "our own"),
    # What a thing is made of: the reader's "made of" is the book's "consisting of". Not "components": a
    # heading's word ("Required Components" of a lab), where the facet's bonus would lift any list.
    "parts": ("made of", "made up of", "make up", "makes up", "consists of", "consisting of", "consist of",
              "composed of", "comprises", "comprising"),
}
_WORD = {facet: re.compile(r"\b(?:" + "|".join(
    w if w.endswith(("s", "d")) or " " in w else rf"{w}(?:s|es)?" for w in words) + r")\b", re.IGNORECASE)
    for facet, words in _FACETS.items()}


# "Why would a lab keep its computing on its own premises?" asks for the advantages of doing so.
_WHY_CHOOSE = re.compile(r"^\s*why\s+(?:would|should|do|does|did|might)\s+(?:\S+\s+){1,4}?"
                         r"(?:keep|choose|pick|prefer|use|select|adopt|opt|buy|stay|switch)\b", re.IGNORECASE)


# A facet word "without" or "no" governs is the other side: "without writing my own .srv file" asks for what
# is built in, not for custom types. Not "not" or "n't": "isn't it hard?", "aren't there downsides?" still ask.
_NEGATED = re.compile(r"\b(?:without|no)\s+(?:\S+\s+){0,2}$", re.IGNORECASE)


def facets(text: str) -> set[str]:
    """The facet tokens of `text` ("~cons" for "Disadvantages"), to count beside its stemmed words."""
    found = {f"~{facet}" for facet, pattern in _WORD.items()
             if any(not _NEGATED.search(text[:m.start()]) for m in pattern.finditer(text))}
    return found | {"~pros"} if _WHY_CHOOSE.match(text) else found


def without_facet_words(text: str) -> str:
    """`text` with its facet words removed: their token stands for them (`facets`)."""
    for pattern in _WORD.values():
        text = pattern.sub(" ", text)
    return text


def facet_stems(text: str) -> list[str]:
    """The stems of every word of each facet `text` names: what a lexical index would find for it.
    Left out: a stem the facet shares with ordinary words (`limit`, `weak`, `strength`)."""
    return [s for facet in sorted(facets(text)) for s in _clear_stems(facet[1:])]


@lru_cache(maxsize=len(_FACETS))
def _clear_stems(facet: str) -> tuple[str, ...]:
    ambiguous = {"limit", "weak", "strength", "merit", "hard"}
    return tuple(dict.fromkeys(s for s in stem_words([w for w in _FACETS[facet] if " " not in w])
                               if s not in ambiguous))
