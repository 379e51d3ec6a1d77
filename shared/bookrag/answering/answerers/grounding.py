"""Grounding of a model's answer: a sentence is kept when the book passages it cites support it.

After generation, the draft is split into sentences. A sentence cites the labels in its markers; a
sentence without markers belongs to the next cited sentence of its run (the usual "A. B [S1]." style),
or else to the previous one.

Each sentence is judged against the union of the chunks it cites (`answerers.support`), widened by what
a model reads as part of them: the chunk before in the same section (a passage that runs on past a
chunk boundary) and the chunks after it while they stay under its heading (an overview section cited
for what its subsections say), at most `SUBSECTION_CHUNKS` of them. A sibling section is not read: a
fact stated there is true elsewhere, not what the cited passage says.

The verdict is one fitted score (`answerers.grounding_score`): coverage of the sentence's content terms
(in the widened evidence, in the cited chunks, in the best single unit), the cosine between the
sentence and its best unit (from the embedder in use, asked only when it could change the verdict),
figures absent from its supporting units (a count in words matched by a cited list's length is
present), a reversal (`text.polarity`), the polarity of its clauses against the book's clauses they align
with, and its length. A sentence with no content word at all
("In short:") is kept as a connective when it states no figure the evidence lacks.

Dropped sentences leave no dangling connective: a kept sentence right after a dropped one loses an
opening "However," or "This means that". When the answer's core is dropped (its first two claims, or
its only one), the answer is refused (`ungrounded_answer`, with the nearest sections), not left as a
fragment. Each kept sentence's supporting spans (in the chunks it cites) and score go to the sources'
quotes. A sentence with no content word at all ("In short:") is kept as a connective.

The judgment of a draft's first sentences never depends on later ones, so a stream that grounds its
growing text sentence by sentence sends exactly the final answer's beginning.

The dropped sentence's reason (for the metrics): 'number' when it states a figure its units lack,
'reversal' when it reverses them, else 'unsupported'. Weights, threshold and their curve:
`answerers.grounding_score`, benchmarks/grounding-curve.png, benchmarks/grounding-blind.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from bookrag import errors
from bookrag.answering.answerers.base import CITATION, Draft, cited_labels, draft_sentences
from bookrag.answering.answerers.grounding_score import Features, model
from bookrag.answering.answerers.support import Evidence, Lexical, lexical
from bookrag.contracts.agent import REFUSAL
from bookrag.domain.models import ChunkPayload, SearchHit

if TYPE_CHECKING:
    import numpy as np

__all__ = ["SUBSECTION_CHUNKS", "Evidence", "Grounder", "GroundingCache", "Verdict", "ground", "judge",
           "section_window"]

# How many chunks after a cited one are read as its subsections (while they stay under its heading): an
# overview's children on textbook-2 and redux span one to three chunks.
SUBSECTION_CHUNKS = 4
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
Fetch = Callable[[str, list[int]], list[ChunkPayload]]


def section_window(fetch: Fetch) -> Neighbours:
    """A chunk's surroundings for grounding, from `fetch` (the store's chunks by file and index): the
    chunk before it and up to `SUBSECTION_CHUNKS` after it (`judge` keeps those of its section)."""

    def read(hit: SearchHit) -> list[ChunkPayload]:
        at = hit.chunk_index
        return fetch(hit.source_file, [i for i in range(max(0, at - 1), at + SUBSECTION_CHUNKS + 1) if i != at])

    return read


@dataclass(slots=True)
class GroundingCache:
    """What one request has read: chunks' evidence, surroundings, vectors (a stream grounds its growing
    text once per sentence, and each of them is read once)."""

    evidence: dict[str, Evidence] = field(default_factory=dict)
    neighbours: dict[str, list[Evidence]] = field(default_factory=dict)
    subsections: dict[str, int] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Grounder:
    """The judgment: `embed` (texts -> unit vectors, the embedder in use) and `neighbours` (a chunk's
    surroundings, `section_window`) are optional; without them the judgment reads the cited chunks
    alone and the cosine counts as 0. `exact`: compute every sentence's cosine (the eval's features), not
    only those whose verdict it could change."""

    embed: Embed | None = None
    neighbours: Neighbours | None = None
    exact: bool = False


@dataclass(frozen=True, slots=True)
class Verdict:
    """One sentence's judgment. `reason`: '' (kept), 'unsupported', 'number', 'reversal'; `judged`: it
    cites retrieved chunks (else the citation check decides); `score`: P(faithful); `spans`: (chunk id,
    start, end); `features`: what the score was computed from (None when not judged)."""

    sentence: str
    sep: str
    judged: bool
    kept: bool
    reason: str = ""
    score: float = 1.0
    lexical: float = 1.0
    semantic: float | None = None
    spans: tuple[tuple[str, int, int], ...] = ()
    features: Features | None = None


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
            payloads = sorted(grounder.neighbours(hit), key=lambda p: p.chunk_index)
        except errors.BookRAGError:
            payloads = []  # the store is away: judge on the cited chunks alone
        path = tuple(hit.payload.heading_path)
        # Before it: the same section only (a neighbour from another section is another passage). After
        # it: while the chunks stay under its heading, the section's rest and its subsections; the first
        # one outside it (a sibling) ends the run.
        kept = [p for p in payloads if p.chunk_index == hit.chunk_index - 1 and tuple(p.heading_path) == path]
        at = hit.chunk_index
        for p in payloads:
            if p.chunk_index <= hit.chunk_index:
                continue
            if p.chunk_index != at + 1 or not path or tuple(p.heading_path)[:len(path)] != path:
                break
            kept.append(p)
            at = p.chunk_index
        cache.neighbours[hit.chunk_id] = [
            Evidence.of(SearchHit(f"{p.source_file}#{p.chunk_index}", 0.0, 0.0, p)) for p in kept]
        # "Two checks come first": an overview's subsections are its items.
        children = {tuple(p.heading_path)[:len(path) + 1] for p in kept if len(p.heading_path) > len(path)}
        cache.subsections[hit.chunk_id] = len(children)
    return cache.neighbours[hit.chunk_id]


def _features(wide: Lexical, cited: Lexical) -> Features:
    return Features.of(wide.coverage, cited.coverage, wide.unit_coverage, 0.0, wide.digits_missing,
                       wide.counts_missing, wide.reversed, wide.terms, (wide.claim_negation, wide.book_negation))


def _subsections(hits: list[SearchHit], cache: GroundingCache) -> frozenset[str]:
    return frozenset(str(cache.subsections[h.chunk_id]) for h in hits if cache.subsections.get(h.chunk_id))


def judge(draft: Draft, retrieved: dict[str, SearchHit], cache: GroundingCache | None = None,
          grounder: Grounder | None = None) -> list[Verdict]:
    """Each sentence of `draft` judged against the chunks it cites (see the module's docstring)."""
    grounder = grounder or Grounder()
    cache = cache if cache is not None else GroundingCache()
    fitted = model()
    threshold = fitted.threshold
    pairs = draft_sentences(draft.text)
    rows: list[tuple[str, str, list[SearchHit], Lexical | None, Features | None]] = []
    for (sentence, sep), own in zip(pairs, _owners(pairs), strict=True):
        hits = list({h.chunk_id: h for h in (retrieved.get(draft.citations.get(label, "")) for label in own)
                     if h is not None}.values())
        if not hits:
            rows.append((sentence, sep, hits, None, None))  # cites nothing retrieved: the citation check decides
            continue
        plain = CITATION.sub(" ", sentence)
        cited = [_evidence(h, cache) for h in hits]
        narrow = lexical(plain, cited)
        features = _features(narrow, narrow)
        # The store is read for the surroundings only when the cited chunks alone do not carry the sentence
        # (whatever its cosine): most sentences rest on what they cite, and reading costs most of the check.
        if grounder.exact or fitted.cosine_range(features)[0] < threshold:
            around = [e for h in hits for e in _around(h, cache, grounder)]
            if around:
                wide = lexical(plain, cited + around, _subsections(hits, cache))
                narrow, features = wide, _features(wide, narrow)
        rows.append((sentence, sep, hits, narrow, features))
    todo = []
    for sentence, _, _, found, row in rows:
        if found is None or row is None or not found.units:
            continue
        low, high = fitted.cosine_range(row)
        if grounder.exact or low < threshold <= high:
            todo.append((CITATION.sub(" ", sentence), found))
    semantic = _semantic(todo, cache, grounder)
    verdicts = []
    for sentence, sep, hits, found, row in rows:
        if found is None or row is None:
            verdicts.append(Verdict(sentence, sep, judged=False, kept=True))
            continue
        x = row
        sem = semantic.get(CITATION.sub(" ", sentence))
        if sem is not None:
            x = replace(x, cosine=max(0.0, sem))
            score = fitted.probability(x.row())
        else:  # the cosine could not change the verdict: the score is its bound on the verdict's side
            low, high = fitted.cosine_range(x)
            score = low if low >= threshold else high
        # A sentence with no content word says nothing to score: it stands unless it states a figure.
        kept = score >= threshold if found.terms else found.numbers_found
        ids = {h.chunk_id for h in hits}
        spans = tuple((u.chunk_id, *u.span) for u in found.units if u.chunk_id in ids)
        reason = ("" if kept else "number" if not found.numbers_found else "reversal" if found.reversed
                  or found.book_negation else "unsupported")
        verdicts.append(Verdict(sentence, sep, True, not reason, reason, round(score, 3), round(found.coverage, 3),
                                None if sem is None else round(sem, 3), spans, x))
    return verdicts


def _semantic(todo: Sequence[tuple[str, Lexical]], cache: GroundingCache, grounder: Grounder) -> dict[str, float]:
    """Cosine of each sentence with its best supporting unit, from one batched embedding call."""
    if grounder.embed is None or not todo:
        return {}
    texts = list(dict.fromkeys(t for claim, lex in todo for t in (claim, lex.units[0].text[:_SEMANTIC_CHARS])))
    missing = [t for t in texts if t not in cache.vectors]
    if missing:
        try:
            vectors = grounder.embed(missing)
        except errors.BookRAGError:
            return {}  # the embedder is away: the lexical features decide
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
