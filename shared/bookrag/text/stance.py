"""What a sentence asks, allows or forbids, and whether what it states still holds: a claim can keep every
word of the book and turn its stance ("operators should approach the robot" against "do not approach the
robot"; "X is still maintained" against "X is no longer maintained"). A negator reading (`text.polarity`)
sees only part of it: "avoid", "discouraged", "optional", "free to", "deprecated" hold no "not".

`stance(text)` reads a sentence's stances from general English words, so it means the same in any book:
- `oblige`: must, should, need(s) to, have to, supposed to, required, mandatory, recommended, encouraged, always;
- `permit`: may, can, free to, fine to, allowed, permitted, safely, okay (a negated one is left to the
  negator reading: "can't run without X" states a dependency, not a prohibition);
- `forbid`: an obligation negated that forbids ("must not", "should not"), "never", "avoid", "discouraged",
  "forbidden", "prohibited", "against" after a word of advice, an imperative "do not" / "don't" opening a clause;
- `waive`: an obligation negated that only lifts it ("not required", "doesn't have to", "no need to"), "optional";
- `ongoing`: still, remain(s), continue(s);
- `ended`: no longer, not ... any more / anymore, deprecated, obsolete, discontinued, formerly.
Each stance bears on the content words around it (three either side, within its clause).

`contradicts(claim, passages)` is True when a clause of the claim obliges, permits or says still holds what the
passage clause it aligns with forbids, waives or says no longer holds, bearing on a shared word. Only that
direction: the claim forbidding what the book asks fired on faithful summaries ("the book advises against
it: ...") as often as on invented ones, and a claim's own negator is the negator reading's (`text.polarity`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from bookrag.text.claims import TermIndex, claim_terms, word_term

__all__ = ["CLASHES", "contradicts", "stance"]

_TOKEN = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*|[.,;:!?()|*]")
_STOPS = frozenset(".,;:!?()|*") | {"but", "whereas", "while", "although", "though"}
_OBLIGE = frozenset("""must should need needs required require requires requirement requirements mandatory
    recommended recommend recommends encouraged encourage encourages always necessary supposed""".split())  # noqa: SIM905
_PERMIT = frozenset("may can free fine allowed permitted permissible safely okay ok".split())  # noqa: SIM905
_FORBID = frozenset("""never avoid avoids avoided avoiding discouraged discourage discourages forbidden forbid
    forbids prohibited prohibit prohibits""".split())  # noqa: SIM905 - a word list reads better as text
# An obligation negated lifts it ("not required", "doesn't need to"); "must not", "should not" forbid instead.
_LIFTED = frozenset("need needs required require requires requirement necessary mandatory have has".split())  # noqa: SIM905
_NEGATORS = frozenset("not no never cannot".split())  # noqa: SIM905 - a word list reads better as text
_ADVICE = frozenset("recommend recommends recommended advise advises advised warn warns warned".split())  # noqa: SIM905
_ONGOING = frozenset("still remain remains remained continue continues".split())  # noqa: SIM905
# Not "legacy": it names a thing ("the legacy launch API") as often as it says that thing has ended.
_ENDED = frozenset("""anymore deprecated obsolete discontinued formerly""".split())  # noqa: SIM905
_BARE = {"can't": "can", "cannot": "can", "won't": "will"}
_ALIGNED = 2  # terms a claim clause shares with a passage clause to be read as saying the same thing
_SCOPE = 3  # words either side of a stance word that it bears on
_WAY = 3  # how many words back a negator reaches a modal ("does not have to", "is not required")

CLASHES = frozenset({frozenset({"forbid", "oblige"}), frozenset({"forbid", "permit"}),
                     frozenset({"waive", "oblige"}), frozenset({"ended", "ongoing"})})


def _negated(tokens: list[str], i: int) -> bool:
    """Whether the stance word at `i` is negated: by itself ("mustn't"), the word after it ("must not", "need
    not") or a negator up to three words back in its clause ("is not required", "doesn't have to")."""
    if _word_negated(tokens[i]) or tokens[i + 1:i + 2] in (["not"], ["never"]):
        return True
    for word in reversed(tokens[max(0, i - _WAY):i]):
        if word in _STOPS:
            return False
        if word in _NEGATORS or word.endswith("n't"):
            return True
    return False


def _word_negated(word: str) -> bool:
    return word.endswith("n't") or word == "cannot"  # "mustn't", "shouldn't", "can't" negate themselves


def _clause_stances(tokens: list[str]) -> dict[str, frozenset[str]]:
    """Each stance the clause takes, with the terms it bears on (its scope: the content words around it)."""
    found: dict[str, frozenset[str]] = {}

    def add(kind: str, i: int, after: int = 1) -> None:
        words = (*tokens[max(0, i - _SCOPE):i], *tokens[i + after:i + after + _SCOPE])
        found[kind] = found.get(kind, frozenset()) | {t for t in map(word_term, words) if t}

    for i, word in enumerate(tokens):
        base = _BARE.get(word, word[:-3] if word.endswith("n't") else word)
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if base in _OBLIGE or (base in ("have", "has") and nxt == "to"):  # "have" obliges only in "have to"
            add(("waive" if base in _LIFTED else "forbid") if _negated(tokens, i) else "oblige", i)
        elif base in _PERMIT and (base not in ("free", "fine") or nxt == "to"):
            if not _negated(tokens, i):  # "can't run without X" is the negator reading's (`text.polarity`)
                add("permit", i)
        elif word in _FORBID or (word == "against" and i > 0 and tokens[i - 1] in _ADVICE):
            add("forbid", i)
        elif word == "optional":
            add("waive", i)
        elif word in _ONGOING:
            add("ended" if _negated(tokens, i) else "ongoing", i)
        elif word in _ENDED or (word == "no" and nxt == "longer") or (word == "any" and nxt == "more"
                                                                       and _negated(tokens, i)):
            add("ended", i)
    # An imperative "do not X" / "don't X" opening a clause forbids X.
    if tokens[:2] == ["do", "not"] or tokens[:1] == ["don't"]:
        add("forbid", 0, 2 if tokens[0] == "do" else 1)
    return found


@lru_cache(maxsize=4096)
def _clauses(text: str) -> tuple[tuple[TermIndex, dict[str, frozenset[str]]], ...]:
    """`text`'s clauses (split at punctuation and contrast words): each one's terms and stances."""
    tokens = _TOKEN.findall(text.lower().replace("’", "'"))
    out = []
    start = 0
    for end in [*(i for i, t in enumerate(tokens) if t in _STOPS), len(tokens)]:
        part, start = tokens[start:end], end + 1
        terms = claim_terms(" ".join(part))
        if terms:
            out.append((TermIndex(terms), _clause_stances(part)))
    return tuple(out)


def stance(text: str) -> frozenset[str]:
    """The stances `text` takes (see the module's docstring)."""
    return frozenset(k for _, found in _clauses(text) for k in found)


_NEGATIVE = frozenset({"forbid", "waive", "ended"})


def contradicts(claim: str, passages: Sequence[str]) -> bool:
    """True when a clause of the claim asks, allows or says still holds what a passage clause it aligns with
    (sharing at least two of its terms) forbids, waives or says no longer holds, bearing on the same thing,
    and the claim's clause does not say so as well. A clause that aligns with nothing counts for nothing:
    "the book advises against it" shares no terms with what it sums up."""
    book = [c for p in passages for c in _clauses(p) if c[1]]
    for terms, mine in _clauses(claim):
        for their_terms, theirs in book if mine else ():
            if sum(their_terms.has(t) for t in terms.terms) < _ALIGNED:
                continue
            for a, scope in mine.items():
                for b, their_scope in theirs.items():
                    # They must bear on the same thing: "should keep their distance" does not clash with "do
                    # not approach the robot"; "should approach the robot" does.
                    if (b in _NEGATIVE and frozenset({a, b}) in CLASHES and b not in mine
                            and any(TermIndex(their_scope).has(t) for t in scope)):
                        return True
    return False
