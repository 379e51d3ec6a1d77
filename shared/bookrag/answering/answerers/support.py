"""How well the book supports one sentence of a model's answer: the evidence read from chunks, and the score.

`Evidence.of(hit)` reads a chunk once per request: its terms (with its headings) and its units
(`text.sentences.extract_units`: sentences, list items, table rows, and a lead-in with its list), each
with its terms, figures and raw span. `lexical(claim, evidences)` scores a sentence against the union of
the chunks it cites (and, when the caller adds them, their neighbours):

- `coverage`: the share of its content terms (`text.claims.claim_terms`: framing words dropped, word
  forms, hyphens and "ROS 2"-style names normalised) found in the union's terms;
- `units`: the units that support it, best first: the best unit by shared terms, and any unit that
  brings terms the best one lacks (a sentence that merges two passages rests on both);
- `unit_coverage`: the share found in the best single unit (a merged or overview sentence rests on
  several; an invented one borrows words from anywhere);
- `numbers_found`: every figure it states is in those units (not merely somewhere in the chunk:
  "Ubuntu 20.04" is in the page that warns against it, not in the sentence that says 22.04); a count
  written in words ("three fields") is found when a list of the evidence holds that many items, or when the
  sentence names that many itself ("seven APIs: a, b, ... and g", a list the book may give in two parts or in
  prose): each item it names is then a term read like any other;
- `reversed`: it says the opposite of those units (`text.polarity.reverses`), or asks, allows or says still
  holds what the close unit it aligns with forbids, waives or says no longer holds (`text.stance.contradicts`:
  "should approach the robot" against "do not approach the robot", which holds no negator the claim lacks);
- `claim_negation`, `book_negation`: the polarity of each of its clauses against the close units' clause it
  aligns with (`text.polarity.aligned_polarity`): a negator on one side only.

The semantic half of the score (a cosine between the sentence and its best units, from the embedder in
use) is computed by the caller, `grounding`, which batches it over a whole draft.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bookrag.answering.answerers.candidates import opens_with_anaphor
from bookrag.domain.models import SearchHit
from bookrag.text.claims import TermIndex, claim_terms, counted, numbers
from bookrag.text.polarity import aligned_polarity, reverses, swaps
from bookrag.text.sentences import Unit, extract_units
from bookrag.text.stance import contradicts

# A unit joins the supporting ones when it brings at least this many of the sentence's terms the
# better units lack; at most this many units support one sentence.
_MIN_NEW_TERMS = 2
_MAX_UNITS = 3
_CLOSE = 0.3


@dataclass(frozen=True, slots=True)
class EvidenceUnit:
    chunk_id: str
    text: str
    kind: str
    span: tuple[int, int]
    terms: TermIndex
    numbers: frozenset[str]


@dataclass(frozen=True, slots=True)
class Evidence:
    """A chunk's terms (with its headings) and its units: read once per chunk and request."""

    chunk_id: str
    terms: TermIndex
    numbers: frozenset[str]
    units: tuple[EvidenceUnit, ...]
    counts: frozenset[str] = frozenset()  # how many items each of its lists holds

    @classmethod
    def of(cls, hit: SearchHit) -> Evidence:
        headings = " ".join(dict.fromkeys((hit.section_heading, *hit.payload.heading_path)))
        units = []
        found = extract_units(hit.text)
        for u in found:
            text = " ".join((u.text, *u.items))  # a lead-in with its list: a summary of the list rests on it
            units.append(EvidenceUnit(hit.chunk_id, text, u.kind, (u.start, u.end),
                                      TermIndex(claim_terms(f"{text} {u.label}")), frozenset(numbers(text))))
        return cls(hit.chunk_id, TermIndex(claim_terms(f"{hit.text} {headings}")),
                   frozenset(numbers(f"{hit.text} {headings}")), tuple(units), _list_lengths(found))


def _list_lengths(units: Sequence[Unit]) -> frozenset[str]:
    """How many items each list of a chunk holds: a lead-in's items, or a run of items without one (a
    claim's own series is `_series`)."""
    counts = {str(len(u.items)) for u in units if u.items and not u.code}
    run = 0
    for unit in (*units, None):
        if unit is not None and unit.kind == "item":
            run += 1
            continue
        if run:
            counts.add(str(run))
        run = 0
    return frozenset(counts)


_JOINERS = ("and", "or")


def _series(sentence: str) -> int:
    """How many items a sentence's last series holds (after its last colon): "A, B and C" or "A, B, and C"
    -> 3; 0 when it has no comma or does not close the series with "and" / "or"."""
    tail = sentence.rsplit(":", 1)[-1]
    parts = tail.split(", ")
    if len(parts) < 2:
        return 0
    last = parts[-1].split()
    if len(last) > 1 and last[0] in _JOINERS:
        return len(parts)  # an Oxford comma's "and" opens the last item
    return len(parts) + 1 if any(w in _JOINERS for w in last[1:-1]) else 0


@dataclass(frozen=True, slots=True)
class Lexical:
    coverage: float
    units: tuple[EvidenceUnit, ...]
    numbers_found: bool
    reversed: bool
    unit_coverage: float = 1.0
    terms: int = 0
    digits_missing: bool = False  # a figure written in digits its units lack
    counts_missing: bool = False  # a figure written in words ("two legs") its units lack, no list that long
    claim_negation: float = 0.0  # its negated clauses whose aligned unit clause holds no negator (share)
    book_negation: float = 0.0  # a clause of it without a negator aligned with a unit clause that holds one


def lexical(claim: str, evidences: Sequence[Evidence], counts: frozenset[str] = frozenset()) -> Lexical:
    """`claim` (markers already removed) against the union of `evidences`; `counts`: more item counts
    the evidence holds (how many subsections a cited overview has)."""
    terms = list(dict.fromkeys(claim_terms(claim)))
    # A count in words that a list of the evidence holds ("three fields:" over a three-item list).
    words = counted(claim)
    own = {str(_series(claim))}  # as many as it names: "four ingredients: a, b, c and d", not "three years"
    figures = numbers(claim) - (words & counts.union(*(e.counts for e in evidences), own))
    if not terms:
        found = all(any(f in e.numbers for e in evidences) for f in figures)
        return Lexical(1.0, (), found, False)
    coverage = sum(any(e.terms.has(t) for e in evidences) for t in terms) / len(terms)
    scored = [(u, {t for t in terms if u.terms.has(t)}) for e in evidences for u in e.units]
    scored = [(u, shared) for u, shared in scored if shared]
    scored.sort(key=lambda pair: len(pair[1]), reverse=True)
    chosen: list[EvidenceUnit] = []
    covered: set[str] = set()
    for unit, shared in scored:
        if len(chosen) >= _MAX_UNITS:
            break
        if not chosen or len(shared - covered) >= _MIN_NEW_TERMS:
            chosen.append(unit)
            covered |= shared
    # A figure must be in the units that support the sentence; when those state no figure at all, in
    # the chunks ("$15,000 to $50,000" rests on a "Cost Range" line that shares no word with it).
    in_units = set().union(*(u.numbers for u in chosen)) if chosen else set()
    pool = in_units or set().union(*(e.numbers for e in evidences))
    numbers_found = figures <= pool
    # Reversal is judged against every unit close to the sentence (sharing a fair part of its terms),
    # so a book that says both ("ROS 1 relied on a master"; "ROS 2: no master") is read whole. A table
    # row's "No" cells negate nothing.
    close = max(_MIN_NEW_TERMS, _CLOSE * len(terms))
    passages = [u.text for u, shared in scored if len(shared) >= close and u.kind != "row"]
    # "This is static stability. It is simple but forces very slow motion.": a sentence that goes on
    # about the close one (opening with a pronoun) is part of what the book says there.
    passages += [nxt.text for e in evidences for u, nxt in zip(e.units, e.units[1:], strict=False)
                 if u.text in passages and nxt.kind == "sentence" and opens_with_anaphor(nxt.text)]
    rows = [u.text for u, shared in scored if len(shared) >= close and u.kind == "row"]
    reversed_ = (bool(passages) and (reverses(claim, passages) or contradicts(claim, passages))) or any(
        swaps(claim, row) for row in rows)
    claim_negation, book_negation = aligned_polarity(claim, passages)
    best = len(scored[0][1]) / len(terms) if scored else 0.0
    return Lexical(coverage, tuple(chosen), numbers_found, reversed_, best, len(terms),
                   bool(figures - words - pool), bool((figures & words) - pool), claim_negation, book_negation)
