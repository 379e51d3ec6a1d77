"""Grounding of a model's answer: a sentence is kept when the book passages it cites support it.

After generation, the draft is split into sentences. A sentence cites the labels in its markers; a
sentence without markers belongs to the next cited sentence of its run (the usual "A. B [S1]." style),
or else to the previous one. Each sentence is judged against the union of the chunks it cites
(`answerers.support`), and, when they fall short, of those chunks and their neighbours in the file
(a passage that runs on past a chunk boundary):

- its support score is the lexical coverage of its content terms (framing words dropped, word forms,
  hyphens and "ROS 2"-style names normalised); when that alone falls short but could still reach the
  threshold (a near miss, within `SEMANTIC_BAND`), the score is the mean of the coverage and the cosine
  between the sentence and its best supporting unit, from the embedder in use (the local MiniLM, or
  Cohere in production: one batched call per judgment, vectors kept for the request);
- it is kept when that score is at least `MIN_SUPPORT`, every figure it states is in its supporting
  units, and it does not reverse them (`text.polarity`: a negator or an antonym).

Dropped sentences leave no dangling connective: a kept sentence right after a dropped one loses an
opening "However," or "This means that". When the answer's core is dropped (its first two claims, or
its only one), the answer is refused (`ungrounded_answer`, with the nearest sections), not left as a
fragment. Each kept sentence's supporting spans (in the chunks it cites) and score go to the sources'
quotes. A sentence with no content word at all ("In short:") is kept as a connective.

The judgment of a draft's first sentences never depends on later ones, so a stream that grounds its
growing text sentence by sentence sends exactly the final answer's beginning.

Threshold: `benchmarks/grounding_curve.py` (benchmarks/grounding-curve.png) on the grounding sets of
textbook-2 and the sample book (95 faithful, 60 invented sentences; benchmarks/grounding-after.md). Every
faithful sentence is kept up to 0.6 and invented ones dropped rise to 92%; at 0.65-0.7 1-2% of the
faithful ones go for +1.6 points, at 0.8 15% go. 0.6 is the highest threshold that keeps them all, with
room for a looser paraphrase than the set's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bookrag import errors
from bookrag.answering.answerers.base import MARKERS, Draft, cited_labels, draft_sentences
from bookrag.answering.answerers.support import Evidence, Lexical, lexical
from bookrag.contracts.agent import REFUSAL
from bookrag.domain.models import ChunkPayload, SearchHit

if TYPE_CHECKING:
    import numpy as np

__all__ = ["MIN_SUPPORT", "Evidence", "Grounder", "GroundingCache", "Verdict", "ground", "judge"]

MIN_SUPPORT = 0.6
# The semantic half of the score is asked for near misses only (lexical coverage within this much of
# the threshold): measured on the grounding sets it changes few verdicts, and one MiniLM pass over a
# sentence and its unit costs a few ms each on a Lambda core (a Cohere call in production).
SEMANTIC_BAND = 0.1
_SEMANTIC_CHARS = 400  # a long unit (a lead-in with its list) is compared by its opening
# Framing and connectives a dropped sentence's successor must not open with.
_CONNECTIVE = re.compile(
    r"^(?:(?:however|therefore|thus|hence|so|also|additionally|moreover|furthermore|consequently|similarly|"
    r"likewise|instead|still|meanwhile|nevertheless|as a result|in addition|in contrast|by contrast|"
    r"on the other hand|in other words|that said|because of this|for this reason|for example|for instance)"
    r"\s*,?\s+|(?:this|that|these|those|which)\s+(?:means|meant|is why|is because|implies|shows|suggests|"
    r"ensures|allows|lets)\s+(?:that\b[\s,]*)?)", re.IGNORECASE)

Embed = Callable[[list[str]], "np.ndarray"]
Neighbours = Callable[[SearchHit], list[ChunkPayload]]


@dataclass(slots=True)
class GroundingCache:
    """What one request has read: chunks' evidence, neighbours, vectors (a stream grounds its growing
    text once per sentence, and each of them is read once)."""

    evidence: dict[str, Evidence] = field(default_factory=dict)
    neighbours: dict[str, list[Evidence]] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Grounder:
    """The judgment: `embed` (texts -> unit vectors, the embedder in use) and `neighbours` (a chunk's
    adjacent chunks) are optional; without them the judgment is lexical on the cited chunks."""

    embed: Embed | None = None
    neighbours: Neighbours | None = None
    min_support: float = MIN_SUPPORT


@dataclass(frozen=True, slots=True)
class Verdict:
    """One sentence's judgment. `reason`: '' (kept), 'unsupported', 'number', 'reversal'; `judged`: it
    cites retrieved chunks (else the citation check decides); `spans`: (chunk id, start, end)."""

    sentence: str
    sep: str
    judged: bool
    kept: bool
    reason: str = ""
    score: float = 1.0
    lexical: float = 1.0
    semantic: float | None = None
    spans: tuple[tuple[str, int, int], ...] = ()


def _owners(pairs: list[tuple[str, str]]) -> list[list[str]]:
    labels = [cited_labels(s) for s, _ in pairs]
    owners: list[list[str]] = []
    for i in range(len(pairs)):
        own = labels[i] or next((labels[j] for j in range(i + 1, len(pairs)) if labels[j]), []) \
            or next((labels[j] for j in range(i - 1, -1, -1) if labels[j]), [])
        owners.append(own)
    return owners


def _evidence(hit: SearchHit, cache: GroundingCache) -> Evidence:
    if hit.chunk_id not in cache.evidence:
        cache.evidence[hit.chunk_id] = Evidence.of(hit)
    return cache.evidence[hit.chunk_id]


def _around(hit: SearchHit, cache: GroundingCache, grounder: Grounder) -> list[Evidence]:
    if grounder.neighbours is None:
        return []
    if hit.chunk_id not in cache.neighbours:
        try:
            payloads = grounder.neighbours(hit)
        except errors.BookRAGError:
            payloads = []  # the store is away: judge on the cited chunks alone
        # A passage that runs on past a chunk boundary stays in its section: a neighbour from another
        # section is another passage (a fact true there is not what this chunk says).
        cache.neighbours[hit.chunk_id] = [
            Evidence.of(SearchHit(f"{p.source_file}#{p.chunk_index}", 0.0, 0.0, p)) for p in payloads
            if p.heading_path == hit.payload.heading_path]
    return cache.neighbours[hit.chunk_id]


def judge(draft: Draft, retrieved: dict[str, SearchHit], cache: GroundingCache | None = None,
          grounder: Grounder | None = None) -> list[Verdict]:
    """Each sentence of `draft` judged against the chunks it cites (see the module's docstring)."""
    grounder = grounder or Grounder()
    cache = cache if cache is not None else GroundingCache()
    threshold = grounder.min_support
    pairs = draft_sentences(draft.text)
    rows: list[tuple[str, str, list[SearchHit], Lexical | None]] = []
    for (sentence, sep), own in zip(pairs, _owners(pairs), strict=True):
        hits = list({h.chunk_id: h for h in (retrieved.get(draft.citations.get(label, "")) for label in own)
                     if h is not None}.values())
        if not hits:
            rows.append((sentence, sep, hits, None))  # cites nothing retrieved: the citation check decides
            continue
        plain = MARKERS.sub(" ", sentence)
        cited = [_evidence(h, cache) for h in hits]
        lex = lexical(plain, cited)
        if lex.coverage < threshold and grounder.neighbours is not None:
            wider = lexical(plain, cited + [e for h in hits for e in _around(h, cache, grounder)])
            lex = wider if wider.coverage > lex.coverage else lex
        rows.append((sentence, sep, hits, lex))
    semantic = _semantic([(MARKERS.sub(" ", s), found) for s, _, _, found in rows if found is not None
                          and threshold - SEMANTIC_BAND <= found.coverage < threshold and found.units], cache, grounder)
    verdicts = []
    for sentence, sep, hits, found in rows:
        if found is None:
            verdicts.append(Verdict(sentence, sep, judged=False, kept=True))
            continue
        sem = semantic.get(MARKERS.sub(" ", sentence))
        score = found.coverage if sem is None else max(found.coverage, (found.coverage + sem) / 2)
        ids = {h.chunk_id for h in hits}
        spans = tuple((u.chunk_id, *u.span) for u in found.units if u.chunk_id in ids)
        reason = ("unsupported" if score < threshold else "number" if not found.numbers_found
                  else "reversal" if found.reversed else "")
        verdicts.append(Verdict(sentence, sep, True, not reason, reason, round(score, 3), round(found.coverage, 3),
                                None if sem is None else round(sem, 3), spans))
    return verdicts


def _semantic(todo: Sequence[tuple[str, Lexical]], cache: GroundingCache, grounder: Grounder) -> dict[str, float]:
    """Cosine of each sentence with its best supporting units, from one batched embedding call."""
    if grounder.embed is None or not todo:
        return {}
    texts = list(dict.fromkeys(t for claim, lex in todo for t in (claim, lex.units[0].text[:_SEMANTIC_CHARS])))
    missing = [t for t in texts if t not in cache.vectors]
    if missing:
        try:
            vectors = grounder.embed(missing)
        except errors.BookRAGError:
            return {}  # the embedder is away: the lexical score decides
        cache.vectors.update(zip(missing, vectors, strict=True))
    return {claim: float(cache.vectors[claim] @ cache.vectors[lex.units[0].text[:_SEMANTIC_CHARS]])
            for claim, lex in todo}


def ground(draft: Draft, retrieved: dict[str, SearchHit], cache: GroundingCache | None = None,
           grounder: Grounder | None = None) -> tuple[Draft, list[Verdict]]:
    """`draft` without the sentences its cited chunks do not support, with the spans (and scores) that
    support the rest; a refusal (`ungrounded_answer`) when its core is dropped. Also the verdicts.

    `retrieved`: chunk id -> hit; `cache`: what was read, kept by the caller when it grounds the same
    request's text again. Sentences whose markers cite nothing retrieved are left for the citation check."""
    if draft.refused or not cited_labels(draft.text):
        return draft, []  # a refusal, or an answer citing nothing (the citation check refuses it: uncited_answer)
    verdicts = judge(draft, retrieved, cache, grounder)
    claims = [v for v in verdicts if v.judged]
    if claims and not any(v.kept for v in claims[:2]):
        return Draft(REFUSAL, citations=draft.citations, refused=True, reason="ungrounded_answer"), verdicts
    kept: list[str] = []
    spans: dict[str, list[tuple[int, int]]] = {}
    support: dict[tuple[str, int, int], float] = {}
    after_drop = False
    for v in verdicts:
        if not v.kept:
            after_drop = True
            continue
        sentence = v.sentence
        if after_drop:
            sentence = _without_connective(sentence)
        after_drop = False
        kept.append(sentence + v.sep)
        for chunk_id, start, end in v.spans:
            spans.setdefault(chunk_id, []).append((start, end))
            support[(chunk_id, start, end)] = max(v.score, support.get((chunk_id, start, end), 0.0))
    text = "".join(kept).strip()
    if not text or not any(cited_labels(k) for k in kept):
        return Draft(REFUSAL, citations=draft.citations, refused=True, reason="ungrounded_answer"), verdicts
    return Draft(text, citations=draft.citations, spans=spans, support=support), verdicts


def _without_connective(sentence: str) -> str:
    rest = _CONNECTIVE.sub("", sentence, count=1)
    if rest == sentence or not rest.strip():
        return sentence
    return rest[0].upper() + rest[1:]
