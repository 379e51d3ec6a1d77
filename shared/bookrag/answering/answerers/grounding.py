"""Grounding check for generated (LLM) answers: every sentence must be supported by the chunk it cites.

After generation, the draft is split into sentences. A sentence cites the labels in its markers; a
sentence without markers belongs to the next cited sentence of its run (the usual "A. B [S1]."
style), or else to the previous one. A sentence is supported when, for at least one chunk it cites:

- `coverage`: the share of its content words (stemmed, stop words dropped: `bookrag.text.bm25.tokenize`)
  found in the cited chunk's text and headings is at least `MIN_SUPPORT`, and
- every number in it (a token with a digit: "22.04", "30 Hz", "ROS 2") occurs in that chunk.

Unsupported sentences are dropped; a draft left with no sentence is refused (`ungrounded_answer`).
A sentence with no content word at all ("In short:") is kept as a connective. Each supported
sentence is also matched to the unit of the chunk it overlaps most (`answerers.sentences`), which
becomes its quoted span.

Threshold, measured by `benchmarks/grounding_threshold.py` on the sample book (101 sampled book
sentences; `benchmarks/answers/grounding-sample-book.json`): a sentence checked against its own
chunk covers 1.0 (all pass); checked against the best-ranked chunk of *another* section (the hard
case: a wrong citation on the same topic), its coverage has median 0.36 and 90th percentile 0.67,
and the share that would pass is 46 % at 0.4, 28 % at 0.5, 16 % at 0.6, 7 % at 0.7, 1 % at 0.8.
MIN_SUPPORT = 0.6 leaves room for a model's restatement (a sentence may bring up to 40 % words of
its own) and drops 84 % of same-topic wrong citations; the number rule catches changed figures
("Ubuntu 19.10" cited to the page that says 22.04). Raise it toward 0.7 for stricter quoting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bookrag.answering.answerers.base import MARKERS, Draft, cited_labels, draft_sentences
from bookrag.contracts.agent import REFUSAL
from bookrag.domain.models import SearchHit
from bookrag.text.bm25 import tokenize
from bookrag.text.sentences import extract_units

MIN_SUPPORT = 0.6

_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)*\b")


@dataclass(frozen=True, slots=True)
class Support:
    coverage: float
    numbers_found: bool
    span: tuple[int, int] | None

    @property
    def supported(self) -> bool:
        return self.coverage >= MIN_SUPPORT and self.numbers_found


@dataclass(frozen=True, slots=True)
class Evidence:
    """A chunk's stems (with its headings) and its units' stems: read once per chunk, not per sentence."""

    terms: frozenset[str]
    units: tuple[tuple[frozenset[str], tuple[int, int]], ...]

    @classmethod
    def of(cls, hit: SearchHit) -> Evidence:
        headings = " ".join(hit.payload.heading_path)
        terms = frozenset(tokenize(f"{hit.text} {hit.section_heading} {headings}"))
        units = tuple((frozenset(tokenize(u.text)), (u.start, u.end)) for u in extract_units(hit.text))
        return cls(terms, units)


def support(sentence: str, hit: SearchHit, evidence: Evidence | None = None) -> Support:
    """How well `hit` supports `sentence` (its citation markers ignored)."""
    evidence = evidence or Evidence.of(hit)
    plain = MARKERS.sub(" ", sentence)
    words = set(tokenize(plain))
    numbers = set(_NUMBER.findall(plain))
    numbers_found = all(n in hit.text for n in numbers)
    if not words:
        return Support(1.0, numbers_found, None)
    coverage = len(words & evidence.terms) / len(words)
    best: tuple[float, tuple[int, int]] | None = None
    for unit_terms, span in evidence.units:
        share = len(words & unit_terms) / len(words)
        if share > 0 and (best is None or share > best[0]):
            best = (share, span)
    return Support(coverage, numbers_found, best[1] if best else None)


def ground(draft: Draft, retrieved: dict[str, SearchHit], evidence: dict[str, Evidence] | None = None) -> Draft:
    """`draft` without the sentences its cited chunks do not support, with the spans that support the
    rest; a refusal (`ungrounded_answer`) when nothing is left. `retrieved`: chunk id -> hit;
    `evidence`: what was read of them, kept by the caller when it grounds the same request's text again.

    Sentences whose markers cite nothing retrieved are left for the citation check to drop.
    """
    if draft.refused or not cited_labels(draft.text):
        return draft  # a refusal, or an answer citing nothing (the citation check refuses it: uncited_answer)
    pairs = draft_sentences(draft.text)
    labels = [cited_labels(s) for s, _ in pairs]
    # An unmarked sentence belongs to the next marked one in its run, else to the previous one.
    owners: list[list[str]] = []
    for i in range(len(pairs)):
        own = labels[i] or next((labels[j] for j in range(i + 1, len(pairs)) if labels[j]), []) \
            or next((labels[j] for j in range(i - 1, -1, -1) if labels[j]), [])
        owners.append(own)
    kept: list[str] = []
    spans: dict[str, list[tuple[int, int]]] = {}
    evidence = {} if evidence is None else evidence
    for (sentence, sep), own in zip(pairs, owners, strict=True):
        hits = [retrieved[c] for c in (draft.citations.get(label) for label in own) if c in retrieved]
        if not hits:
            kept.append(sentence + sep)  # cites nothing retrieved (or nothing): the citation check decides
            continue
        for hit in hits:
            if hit.chunk_id not in evidence:
                evidence[hit.chunk_id] = Evidence.of(hit)
        checks = [(support(sentence, hit, evidence[hit.chunk_id]), hit) for hit in hits]
        good = [(s, h) for s, h in checks if s.supported]
        if not good:
            continue
        kept.append(sentence + sep)
        for s, h in good:
            if s.span is not None:
                spans.setdefault(h.chunk_id, []).append(s.span)
    text = "".join(kept).strip()
    if not text or not any(cited_labels(k) for k in kept):
        return Draft(REFUSAL, citations=draft.citations, refused=True, reason="ungrounded_answer")
    return Draft(text, citations=draft.citations, spans=spans)
