"""The offline answerer: quotes the book's statements that answer the question, cited span by span, or refuses.

How it decides (deterministic, no network beyond the configured embedder and store):

1. Every retrieved chunk is split into units (`answerers.sentences`): prose sentences, list items,
   table rows read as sentences; a sentence ending in ':' carries the list, rows or short command
   block it introduces; so does a run of definition lines ("**Term**: ..."), and a list directly
   under its heading takes the heading as its lead-in. A chunk's cut-off first fragment (lower-case
   start at offset 0) is dropped. Each unit knows its raw span in the chunk's `content_text`.
2. The question's shape (`QuestionShape`): does it ask for a list ("what parts / which layers make
   up / what are the four ..."), and which parts must a complete answer cover ("the difference
   between A and B", "compare A with B", "A vs B", "What is X, and what Y?", two questions).
3. Each unit is scored against the question:
   `score = w * cosine(question, unit) + (1 - w) * overlap + 0.15 * heading + 0.5 * chunk_cosine
   (+ 0.05 for a lead-in with its list when a list is asked for)`, where the cosine comes from the
   local embedder (one batched `embed_documents` call per question), `overlap` is the share of the
   question's stemmed content words (`bookrag.text.bm25.tokenize`) found in the unit or its headings,
   `heading` the share found in its own section heading, and `chunk_cosine` the retrieval's score
   for the unit's chunk (the right section is usually ranked first). Each part of a multi-part
   question is scored the same way on its own (its chunk's retrieval score included). A clause of a
   question that asks two things is also searched on its own (`part_hits`): its chunks compete for
   that clause, without their retrieval score for the whole question.
4. It refuses (`weak_evidence`) when the question is about something the book never mentions:
   its words are looked up in the retrieved chunks, then (at most 8 lookups, within the request's
   deadline) in the book's sparse index, which holds every stemmed term of the book. Off-book if
   any *named* term is unknown (a proper noun, acronym, version or model number: "Melodic",
   "18.04", "PID", "PX4", "RT-2"; a hyphenated name is known when each of its parts is, since the
   book may write "Denavit–Hartenberg" with an en dash), or if at least a third of the question's
   content words are (the "poem" in "Write me a poem about robots").
5. It refuses (`weak_evidence`) when the best evidence it found, the best unit's score (which
   already includes the chunk's retrieval score and heading match), is below `min_best`.
6. Otherwise it leads with the section that answers best as a whole (its best unit plus half its
   second best), takes that section's best unit, the list in that section when a list is asked
   for (a list and its definition are the whole answer to a list question), when the lead is a
   page's introduction the best unit of each section of that page whose own heading shares the
   question's words (at `_INTRO_RATIO` of the lead), the best unit for each part of a
   multi-part question, then close runners-up (>= `min_keep` and `keep_ratio` of the best) from the
   sections already chosen, or from another section only at 90 % of the best score; near-duplicates
   are skipped, at most 4 units. The lead unit keeps the next sentence of its paragraph when that
   sentence names its section's subject (a word of the section's own heading the answer lacks:
   "... duplicates hundreds of lines." + "Xacro (XML macros) adds ..."). The answer lists the lead
   section first, then the others, each in the book's order, with the citation marker of its chunk
   after every unit, and `Draft.spans` carrying each unit's raw span for the span citations
   (`answerers.spans`).

Calibration for the local embedder (all-MiniLM-L6-v2, 200-token chunks, hybrid retrieval, agent
threshold 0.32); w = 0.6, min_keep = 0.30, keep_ratio = 0.7 as before, min_best re-measured on the
new score (benchmarks/answers.md), re-measured in round 2 on all four sets: answerable questions'
best unit scores from 0.468 (sample book; "My arm's joint speeds explode ...", refused) and 0.542
(the QoS question that used to be refused) up; on textbook-2 and its answer set from 0.62.
Unanswerable questions that pass the unknown-term check score up to 0.505 (textbook-2: "How do I
customise the behavior tree that Nav2 uses for its recovery behaviours?"); every other unanswerable
question of the four sets is refused earlier (nothing above the retrieval threshold, or an unknown
named term). min_best = 0.52 sits between 0.505 and 0.542: the margins are thin on both sides, and
the one answerable question below it is the cost of keeping textbook-2's unanswerable questions at
9/9. A section-level evidence score (the lead section's best unit plus half its second best) does
not separate them either: 0.695 for the refused answerable question, 0.696 for the Nav2 one.

With a remote embedder (Cohere) sentences are not embedded: its document calls follow the ingest
retry policy, whose waits do not fit in a request. Each unit then takes its chunk's cosine, and
word overlap ranks units within a chunk. That column is provisional (embed-english-v3.0 cosines run
higher than MiniLM's, so the bars are raised by 0.1): recalibrate when a Cohere key is at hand.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from bookrag.answering.answerers.base import DocumentSet, Draft, Retrieve, run_within
from bookrag.answering.answerers.questions import QuestionShape, Unknown, named_terms
from bookrag.contracts.agent import REFUSAL
from bookrag.domain.deadline import Deadline
from bookrag.domain.models import SearchHit
from bookrag.errors import StoreTimeoutError
from bookrag.text.bm25 import tokenize
from bookrag.text.sentences import Unit, extract_units

if TYPE_CHECKING:
    from bookrag.retrieval.retriever import Retriever


@dataclass(frozen=True, slots=True)
class Calibration:
    semantic_weight: float
    min_best: float
    min_keep: float
    keep_ratio: float
    max_units: int = 4
    min_units: int = 2


CALIBRATION: dict[str, Calibration] = {
    "local": Calibration(semantic_weight=0.6, min_best=0.52, min_keep=0.30, keep_ratio=0.7),
    "cohere": Calibration(semantic_weight=0.6, min_best=0.62, min_keep=0.40, keep_ratio=0.7),
}

_ANAPHOR = re.compile(r"^(It|Its|This|That|These|Those|They|Their|Such|Both|Each of them)\b")
_MAX_LIST_CHARS = 700
_MIN_ITEM_WORDS = 5
_MAX_TERM_LOOKUPS = 8
_MAX_CONTINUED_CHARS = 400  # the lead statement and the sentence that continues it
_CHUNK_WEIGHT = 0.5  # times the chunk's retrieval cosine, added to each of its units' scores
_HEADING_BONUS = 0.15  # share of the question's words in the unit's section heading, weighted
_LIST_BONUS = 0.05  # a lead-in with its list, for a question that asks for a list
_LIST_RATIO = 0.75  # a list in the best unit's section joins it if it scores this share of the best
_MAX_WITH_LIST = 2  # a list and its definition are enough
_OTHER_SECTION_RATIO = 0.9  # another section's unit needs this share of the best score (focus)
_SECOND_WEIGHT = 0.5  # a section's second-best unit, in the section's score
_MIN_PART_TERMS = 3  # a clause with fewer content words is not searched on its own
_PART_TOP_K = 3  # chunks kept per searched clause
_MIN_PART_BUDGET_S = 2.0  # the request's deadline must leave this much for a clause's search
_INTRO_RATIO = 0.75  # a titled section of the page joins the page's introduction from this share of its score




def clause_hits(question: str, retrieve: Retrieve, keep_going: Callable[[], bool] = lambda: True) -> list[SearchHit]:
    """The top chunks of each clause of `question` that the answerer searches on its own, clause by clause
    while `keep_going()`: what `ExtractiveAnswerer.part_hits` retrieves beyond the question's own chunks
    (also how an eval or a test knows what the agent retrieved)."""
    hits: list[SearchHit] = []
    # "a topic" and "a service" of "the difference between ...": the whole question finds both.
    for part in (p for p in QuestionShape.of(question).parts if len(tokenize(p)) >= _MIN_PART_TERMS):
        if not keep_going():
            break
        hits.extend(retrieve(part)[:_PART_TOP_K])
    return hits


@dataclass(frozen=True, slots=True)
class Scored:
    hit: SearchHit
    unit: Unit
    text: str  # the unit as it will be quoted (a lead-in with its items)
    score: float
    cosine: float
    overlap: float
    spans: tuple[tuple[int, int], ...] = ()  # raw spans of `hit.text` that `text` reads
    terms: frozenset[str] | set[str] = frozenset()  # stems of the unit and its headings
    part_scores: tuple[float, ...] = ()  # the same score against each part of a multi-part question
    section_terms: frozenset[str] = frozenset()  # stems of its own section heading (not the page title)
    follow: Unit | None = None  # the next sentence of the same paragraph




class ExtractiveAnswerer:
    """Answers by quoting retrieved sentences; see the module docstring for the calibration."""

    name = "extractive"

    def __init__(self, retriever: Retriever, calibration: Calibration | None = None) -> None:
        self.retriever = retriever
        provider = retriever.settings.resolved_embedding_provider
        self._local = retriever.embeds_locally
        self.calibration = calibration or CALIBRATION[provider]

    # --- the Answerer protocol ---------------------------------------------------------------

    def answer(self, question: str, hits: list[SearchHit], retrieve: Retrieve, deadline: Deadline) -> Draft:
        """Raises `EmbeddingError` (scoring embeds the sentences) and store errors (term lookups)."""
        if not hits:
            return Draft(REFUSAL, refused=True, reason="no_relevant_context")
        if self.unknown_terms(question, hits, deadline).off_book:
            return Draft(REFUSAL, refused=True, reason="weak_evidence")
        part_hits = self.part_hits(question, hits, retrieve, deadline)
        chosen = self.select(self.score(question, hits, part_hits), question)
        if not chosen:
            return Draft(REFUSAL, refused=True, reason="weak_evidence")
        return self.compose(chosen, [*hits, *part_hits])

    def part_hits(self, question: str, hits: list[SearchHit], retrieve: Retrieve,
                  deadline: Deadline) -> list[SearchHit]:
        """Chunks retrieved for each clause of a question that asks two things ("Should X run in the cloud,
        and which standard covers Y?"): the whole question's top chunks often serve one clause only.
        Through the agent's `retrieve`, so they are part of what it retrieved (and may be cited)."""
        have = {h.chunk_id for h in hits}
        extra: list[SearchHit] = []
        for hit in clause_hits(question, retrieve, lambda: deadline.remaining() >= _MIN_PART_BUDGET_S):
            if hit.chunk_id not in have:
                have.add(hit.chunk_id)
                extra.append(hit)
        return extra

    # --- steps, public for calibration and tests -----------------------------------------------

    def unknown_terms(self, question: str, hits: list[SearchHit], deadline: Deadline | None = None) -> Unknown:
        """The question's words found neither in the retrieved chunks nor anywhere in the book.

        The lookups are bounded by `deadline`: raises `StoreTimeoutError` when the store is too slow.
        """
        evidence: set[str] = set()
        for hit in hits:
            headings = " ".join(hit.payload.heading_path)
            evidence.update(tokenize(f"{hit.text} {hit.citation_label} {headings}"))
        words = list(dict.fromkeys(tokenize(question)))
        names = set(named_terms(question))
        # Named terms first: one of them unknown settles it, and lookups are capped.
        absent = sorted((t for t in words if t not in evidence), key=lambda t: t not in names)
        def known(term: str) -> bool:
            # "denavit-hartenberg" where the book writes "Denavit–Hartenberg": every part is known.
            parts = [p for p in re.split(r"[-_.]", term) if len(p) > 1]
            if len(parts) > 1 and all(p in evidence for p in parts):
                return True
            return self._in_book(term)

        def lookup() -> list[str]:
            return [t for t in absent[:_MAX_TERM_LOOKUPS] if not known(t)]

        try:
            unknown = run_within(lookup, deadline.remaining()) if deadline and absent else lookup()
        except TimeoutError:
            raise StoreTimeoutError() from None
        return Unknown(words=unknown, named=[t for t in unknown if t in names], total=len(words))

    def _in_book(self, term: str) -> bool:
        return self.retriever.uses_term(term)

    def score(self, question: str, hits: list[SearchHit], part_hits: Sequence[SearchHit] = ()) -> list[Scored]:
        """Every unit of `hits` and `part_hits`, best first. Raises `EmbeddingError`.

        A unit of `part_hits` (retrieved for one clause of the question) competes for its clause; for the
        whole question its chunk's retrieval score, which measured the clause, is not counted."""
        units: list[_Candidate] = []
        seen: set[str] = set()
        by_part = {h.chunk_id for h in part_hits}
        hits = [*hits, *part_hits]
        for hit in hits:
            path = list(hit.payload.heading_path)
            headings = {hit.section_heading, hit.payload.doc_title, *path}
            heading_terms = set(tokenize(" ".join(headings)))
            # A page's own title matches every question about the page: only a section's heading
            # says which part of the page answers.
            title = hit.payload.doc_title
            section_terms = set(tokenize(" ".join(h for h in [hit.section_heading, *path[1:]] if h != title)))
            previous: Unit | None = None
            extracted = extract_units(hit.text, headings)
            for at, unit in enumerate(extracted):
                follow = _follow(hit.text, unit, extracted[at + 1] if at + 1 < len(extracted) else None)
                text = _quoted(unit)
                spans = [(unit.start, unit.end)]
                if unit.kind == "sentence" and previous is not None and _ANAPHOR.match(unit.text):
                    text = f"{previous.text} {text}"  # "It runs ..." needs the sentence that says what "it" is
                    spans.insert(0, (previous.start, previous.end))
                previous = unit if unit.kind == "sentence" and not unit.items else None
                key = " ".join(text.lower().split())
                if (unit.text.endswith(":") and not unit.items) or key in seen:
                    continue  # a lead-in whose list fell into the next chunk; a repeat from chunk overlap
                if unit.start <= 1 and unit.text[:1].islower():
                    continue  # the tail of a sentence cut at the chunk's start ("goals. Under the hood ...")
                if unit.kind == "item" and len(unit.text.split()) < _MIN_ITEM_WORDS:
                    continue  # "Isaac ROS Visual SLAM." informs only as part of its list
                seen.add(key)
                units.append(_Candidate(hit, unit, text, tuple(spans), heading_terms, section_terms, follow))
        if not units:
            return []
        shape = QuestionShape.of(question)
        w = self.calibration.semantic_weight
        queries = [question, *shape.parts]
        cosines = self._cosines(queries, units)
        wanted = [set(tokenize(q)) for q in queries]
        scored = []
        for i, cand in enumerate(units):
            terms = set(tokenize(cand.text)) | cand.heading_terms
            values: list[float] = []
            for k, words in enumerate(wanted):
                overlap = len(words & terms) / len(words) if words else 0.0
                heading = len(words & cand.section_terms) / len(words) if words else 0.0
                values.append(w * max(0.0, float(cosines[k, i])) + (1 - w) * overlap + _HEADING_BONUS * heading)
            # The retrieval's own judgement of the chunk: the right section is usually ranked first.
            value = values[0] + (0.0 if cand.hit.chunk_id in by_part else _CHUNK_WEIGHT * cand.hit.score)
            if shape.wants_list and cand.unit.items:
                value += _LIST_BONUS
            overlap0 = len(wanted[0] & terms) / len(wanted[0]) if wanted[0] else 0.0
            # A part's statement is judged like the whole question's: with its chunk's retrieval score.
            parts = tuple(v + _CHUNK_WEIGHT * cand.hit.score for v in values[1:])
            scored.append(Scored(cand.hit, cand.unit, cand.text, value, max(0.0, float(cosines[0, i])), overlap0,
                                 cand.spans, terms, parts, frozenset(cand.section_terms), cand.follow))
        scored.sort(key=lambda s: s.score, reverse=True)
        return scored

    def _cosines(self, queries: list[str], units: list[_Candidate]) -> np.ndarray:
        """queries x units cosine matrix."""
        if not self._local:
            # A remote embedder's document calls run the ingest retry policy (long waits): not on a
            # request path. Each unit then inherits its chunk's similarity; overlap ranks within it.
            row = np.asarray([u.hit.score for u in units], dtype=np.float32)
            return np.tile(row, (len(queries), 1))
        q_vecs = np.asarray([self.retriever.embed_query(q) for q in queries])
        texts = [u.text for u in units]
        lead_ins = [i for i, u in enumerate(units) if u.unit.items]
        vectors = np.asarray(self.retriever.embed_documents(texts + [units[i].unit.text for i in lead_ins]))
        cosines: np.ndarray = np.asarray(q_vecs @ vectors[: len(texts)].T, dtype=np.float32)
        for j, i in enumerate(lead_ins):  # a list can dilute its lead-in's meaning, or carry it
            cosines[:, i] = np.maximum(cosines[:, i], q_vecs @ vectors[len(texts) + j])
        return cosines

    def select(self, scored: list[Scored], question: str = "") -> list[Scored]:
        """The best unit, the list it introduces or belongs with, a unit for each part of a multi-part
        question, then close runners-up from the sections already chosen."""
        cal = self.calibration
        if not scored or scored[0].score < cal.min_best:
            return []
        shape = QuestionShape.of(question)
        # The answer leads with the section that answers best as a whole (its best unit plus half its
        # second best), not with a stray sentence elsewhere that happens to share the question's words.
        tops: dict[tuple[str, str], list[float]] = {}
        for s in scored:
            top = tops.setdefault(_section(s), [])
            if len(top) < 2:
                top.append(s.score)
        lead = max(tops, key=lambda k: tops[k][0] + _SECOND_WEIGHT * (tops[k][1] if len(tops[k]) > 1 else 0.0))
        best = next(s for s in scored if _section(s) == lead)
        chosen = [best]

        def add(candidate: Scored) -> None:
            if len(chosen) < cal.max_units and not any(_redundant(candidate, c) for c in chosen):
                chosen.append(candidate)

        # A list or table is the answer to "what parts / which steps": keep it whole, beside its definition.
        if shape.wants_list and not best.unit.items:
            lists = [s for s in scored if s is not best and s.unit.items and s.score >= _LIST_RATIO * best.score
                     and _section(s) == _section(best)]
            if lists:
                add(lists[0])
        # A page's introduction (no heading of its own below the title) names the page's topics; the
        # page's sections whose own headings name what the question asks about say more: their best
        # statements join it.
        if not best.section_terms:
            asked = set(tokenize(question))
            titled: set[tuple[str, str]] = set()
            for s in scored:
                if (s.hit.source_file == best.hit.source_file and s.section_terms & asked
                        and s.score >= max(cal.min_best, _INTRO_RATIO * best.score) and _section(s) not in titled):
                    titled.add(_section(s))
                    add(s)
        # Each part of "the difference between A and B" gets its own best statement.
        for k in range(len(shape.parts)):
            best_for_part = max(scored, key=lambda s: s.part_scores[k] if len(s.part_scores) > k else 0.0)
            if best_for_part.part_scores[k] >= cal.min_keep and best_for_part not in chosen:
                add(best_for_part)
        floor = max(cal.min_keep, cal.keep_ratio * best.score)
        sections = {_section(c) for c in chosen}
        top_score = scored[0].score
        # A list and its definition are the whole answer to a list question; elsewhere a lead-in with
        # its items is one statement among others.
        has_list = shape.wants_list and any(c.unit.items for c in chosen)
        for candidate in scored:
            if candidate in chosen:
                continue
            if len(chosen) >= (_MAX_WITH_LIST if has_list else cal.max_units):
                break
            if candidate.score < cal.min_keep or (candidate.score < floor and len(chosen) >= cal.min_units):
                break
            if _section(candidate) not in sections and candidate.score < _OTHER_SECTION_RATIO * top_score:
                continue  # off the focus: another section's statement that merely scores well enough
            add(candidate)
        chosen[0] = _continued(best, chosen)
        return chosen

    def compose(self, chosen: list[Scored], hits: list[SearchHit]) -> Draft:
        """Best section first, then the others by their best unit; the book's order within a section.
        Each unit is followed by the marker of the chunk it quotes; `Draft.spans` holds its spans."""
        docs = DocumentSet()
        docs.add(hits)
        label_of = {hit.chunk_id: label for label, hit in docs.by_label.items()}
        rank_of: dict[tuple[str, str], int] = {}
        for item in chosen:  # chosen is in decreasing importance
            rank_of.setdefault(_section(item), len(rank_of))
        ordered = sorted(chosen, key=lambda s: (rank_of[_section(s)], s.hit.chunk_index, s.unit.position))
        parts: list[str] = []
        spans: dict[str, list[tuple[int, int]]] = {}
        for item in ordered:
            parts.append(f"{item.text} [{label_of[item.hit.chunk_id]}]")
            spans.setdefault(item.hit.chunk_id, []).extend(item.spans)
        return Draft(" ".join(parts), citations=docs.citations(), spans=spans)




@dataclass(frozen=True, slots=True)
class _Candidate:
    hit: SearchHit
    unit: Unit
    text: str
    spans: tuple[tuple[int, int], ...]
    heading_terms: set[str]
    section_terms: set[str]
    follow: Unit | None = None


def _follow(text: str, unit: Unit, nxt: Unit | None) -> Unit | None:
    """`nxt` when it is the sentence after `unit` in the same paragraph."""
    if nxt is None or unit.kind != "sentence" or unit.items or nxt.kind != "sentence" or nxt.items:
        return None
    return None if "\n\n" in text[unit.end:nxt.start] else nxt


def _continued(best: Scored, chosen: list[Scored]) -> Scored:
    """The lead statement with the sentence after it when that sentence names what its section is
    about and the answer does not yet: "Writing them out by hand duplicates hundreds of lines." is
    the problem; the next sentence, "Xacro (XML macros) adds ... macros", under the heading "Xacro:
    macros for URDF", is the answer."""
    nxt = best.follow
    if nxt is None or len(best.text) + len(nxt.text) > _MAX_CONTINUED_CHARS:
        return best
    said = {t for c in chosen for t in tokenize(c.text)}
    if not (set(tokenize(nxt.text)) & best.section_terms) - said:
        return best
    if any(nxt.start <= a and b <= nxt.end for c in chosen if c.hit.chunk_id == best.hit.chunk_id
           for a, b in c.spans):
        return best  # already quoted
    return replace(best, text=f"{best.text} {nxt.text}", spans=(*best.spans, (nxt.start, nxt.end)),
                   terms=set(best.terms) | set(tokenize(nxt.text)))


def _section(s: Scored) -> tuple[str, str]:
    return s.hit.source_file, s.hit.section_heading


def _quoted(unit: Unit) -> str:
    if not unit.items:
        return unit.text
    items = [i.rstrip(".") for i in unit.items]
    full = f"{unit.text} {'; '.join(items)}."
    if len(full) <= _MAX_LIST_CHARS:
        return full
    heads = [re.split(r"\s+[—–-]\s+|:\s", i, maxsplit=1)[0] for i in items]
    return f"{unit.text} {'; '.join(heads)}."


def _redundant(a: Scored, b: Scored) -> bool:
    if a.hit.chunk_id == b.hit.chunk_id and set(a.spans) & set(b.spans):
        return True
    if a.hit.chunk_id == b.hit.chunk_id and a.unit.text in b.unit.items:
        return True  # an item already quoted with its lead-in
    if b.hit.chunk_id == a.hit.chunk_id and b.unit.text in a.unit.items:
        return True
    if a.unit.text in b.text or b.unit.text in a.text:
        return True  # one quotes the other (a sentence and the same sentence with its context)
    ta, tb = set(tokenize(a.text)), set(tokenize(b.text))
    if not ta or not tb:
        return False
    return len(ta & tb) / len(ta | tb) > 0.6
