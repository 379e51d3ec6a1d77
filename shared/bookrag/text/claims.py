"""A claim's words as the grounding check compares them with the book's: terms, numbers, and term matching.

A model restates the book: it frames ("the book notes that ..."), changes word forms ("stable" for
"stability", "safely" for "Safety"), splits or joins hyphenated words ("Simulation-Based", "simpler-contact")
and writes names that carry a digit as words ("ROS 2" where the book writes "ROS2"). So:

- `claim_terms`: lower-cased words, hyphens and slashes split, an acronym followed by a one-digit number
  joined into one name ("ROS 2", "ROS2" -> "ros2": a name, not a number), number words up to twenty
  read as digits, stop words (`text.bm25.STOP_WORDS`) and `FRAMING` words dropped, then the Snowball stem.
- `numbers`: the figures a claim states, names excluded, thousands separators removed ("$15,000" -> "15000"),
  a size read as its figures ("3x3" -> 3), a multiple as its factor ("2x", "twice" -> 2), a figure written
  against its unit as the figure ("60fps", "100Hz+" -> 60, 100: a claim's "60 fps" is what the book states).
- `TermIndex.has(term)`: the term or a derivational sibling: two stems match when one is a prefix of the
  other, or when they share a prefix of at least 4 letters and three quarters of the shorter stem
  (Snowball leaves "stabl"/"stabil", "safe"/"safeti", "integr"/"integration"'s "integr" apart or
  together inconsistently; this folds them, and keeps "robot"/"robust", "process"/"produc" apart).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from bookrag.text.bm25 import STOP_WORDS, other_words, stem_words

__all__ = ["FRAMING", "TermIndex", "claim_terms", "counted", "numbers", "plain_words", "word_term"]

# Words that frame a claim rather than make it: who says it and how ("according to the book, ..."),
# and list-summary words. They are never counted as unsupported.
FRAMING = frozenset("""
    according book textbook chapter section appendix author authors text course module page table
    comparison note notes noted describe describes described explain explains explained mention mentions
    mentioned state states stated say says said recommend recommends recommended suggest suggests
    suggested advise advises advised emphasize emphasizes emphasise emphasises highlight highlights
    illustrate illustrates discuss discusses point points cover covers introduce introduces define
    defines defined refer refers list lists listed outline outlines argue argues present presents
    presents frame frames call calls called term termed known example examples instance include includes
    including among various several key main way ways one another especially particularly thing things
    overall addition additionally moreover furthermore however therefore thus hence instead short
    summary like liken likens remedy remedies put puts
""".split())  # noqa: SIM905 - a word list reads better as text

_NAME_WITH_DIGIT = re.compile(r"\b([A-Z][A-Z]+)[ -]?(\d)\b(?![.,]\d)")
_WORD = re.compile(r"[a-z0-9]+(?:[.,]\d+)*")
# A figure, with a multiplier's "x" read as the figure it multiplies by ("2x faster", "0.8x real time").
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?:(?![\w])|(?=[x×](?![\w])))|(?<=[a-z])\d+(?:\.\d+)+")
# "zero" is left out: "Zero Moment Point" is a name.
_NUMBER_WORDS = {w: str(i) for i, w in enumerate((  # noqa: SIM905 - a word list reads better as text
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty").split(), start=1)}
_NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "hundred": "100", "thousand": "1000",
                      "half": "50", "quarter": "25"})
# A multiple written as a word states the figure "2x" writes in digits: "twice as fast" against "3x faster" is a
# changed number. "double" alone is left out: "double support" is a name.
_MULTIPLIERS = {"twice": "2", "doubles": "2", "doubled": "2", "doubling": "2", "thrice": "3", "triples": "3",
                "tripled": "3", "tripling": "3"}
_MULTIPLE = re.compile(r"\d+x")
# A figure written against its unit ("100Hz+", "60fps", "0.15m", "512GB"): the figure and the unit, as "60 fps"
# writes them. Not a dimension's name ("3D") nor an ordinal ("2nd"): those name, they do not measure.
_GLUED = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?!(?:d|st|nd|rd|th)\b)([a-z]{1,4})\+?(?!\w)", re.IGNORECASE)
_MIN_PREFIX = 4
_DIMENSIONS = re.compile(r"(?<=\d)[x×](?=\d)")


def _names_joined(text: str) -> str:
    return _NAME_WITH_DIGIT.sub(lambda m: f"{m.group(1)}{m.group(2)}", text)


def plain_words(text: str) -> list[str]:
    """Lower-cased words (hyphens and slashes split, names with a digit joined), nothing dropped."""
    return [w.strip(".,") for w in _WORD.findall(_names_joined(text).lower().replace("’", "'"))]


def claim_terms(text: str) -> list[str]:
    """The content terms of `text`, stemmed (see the module's docstring)."""
    words = []
    for word in plain_words(text):
        word = _NUMBER_WORDS.get(word) or _MULTIPLIERS.get(word, word)
        # `isalnum` first: most words are, and it spares a walk over each one's characters.
        if word.isdigit() or (not word.isalnum() and any(c.isdigit() for c in word)) or _MULTIPLE.fullmatch(word):
            continue  # a figure: `numbers` checks it
        if len(word) > 1 and word not in STOP_WORDS and word not in FRAMING:
            words.append(word)
    stems = stem_words(words)
    if not text.isascii():  # another script's words: exact terms, no stemmer being known for them
        stems.extend(other_words(text.lower()))
    return stems


@lru_cache(maxsize=8192)
def word_term(word: str) -> str:
    """One word's content term, '' for a stop word or a figure: the readings that walk a sentence word by word
    (`text.polarity`, `text.stance`) ask it of the same words again and again."""
    terms = claim_terms(word)
    return terms[0] if terms else ""


def numbers(text: str) -> set[str]:
    """The figures `text` states ("22.04", "4-12" -> 4, 12; "four" -> 4; "twice", "2x" -> 2), names such as "ROS 2"
    excluded."""
    # "a 3x3 matrix" states 3 (twice): 4x4 is another size.
    joined = _GLUED.sub(r"\1 \2", _DIMENSIONS.sub(" x ", _names_joined(text)))
    found = {n.replace(",", "") for n in _NUMBER.findall(joined)}
    words = re.findall(r"[a-z]+", joined.lower())
    found |= {_NUMBER_WORDS[w] for w in words if w in _NUMBER_WORDS
              and w not in ("one", "half", "quarter")}  # "one of the remedies" is not a figure
    found |= {_MULTIPLIERS[w] for w in words if w in _MULTIPLIERS}
    return found


def counted(text: str) -> set[str]:
    """The figures `text` writes as words ("three fields" -> "3"): a model counts a list's items that way,
    and the book's list holds the count without stating it."""
    return {_NUMBER_WORDS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in _NUMBER_WORDS} & numbers(text)


class TermIndex:
    """Terms of a piece of evidence, looked up with derivational siblings (`has`)."""

    def __init__(self, terms: Iterable[str]) -> None:
        self.terms = frozenset(terms)
        self._by_prefix: dict[str, list[str]] = {}
        for term in self.terms:
            if len(term) >= _MIN_PREFIX:
                self._by_prefix.setdefault(term[:_MIN_PREFIX], []).append(term)

    def has(self, term: str) -> bool:
        if term in self.terms:
            return True
        if len(term) < _MIN_PREFIX:
            return False
        return any(_siblings(term, other) for other in self._by_prefix.get(term[:_MIN_PREFIX], ()))


def _siblings(a: str, b: str) -> bool:
    shorter = min(len(a), len(b))
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    return common == shorter or common >= max(_MIN_PREFIX, 0.75 * shorter)
