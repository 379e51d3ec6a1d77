"""The offline answerer: quotes the book's statements that answer the question, cited span by span, or refuses.

How it decides (deterministic, no network beyond the configured embedder and store):

1. Every retrieved chunk is split into units (`answerers.candidates`, `text.sentences`): prose sentences, list items,
   table rows read as sentences; a sentence ending in ':' carries the list, rows or short command
   block it introduces; so does a run of definition lines ("**Term**: ..."), and a list directly
   under its heading takes the heading as its lead-in. A chunk's cut-off first fragment (lower-case
   start at offset 0) is dropped. Each unit knows its raw span in the chunk's `content_text`.
2. The question's shape (`QuestionShape`): does it ask for a list ("what parts / which layers make
   up / what are the four ..."), and which parts must a complete answer cover ("the difference
   between A and B", "compare A with B", "A vs B", "What is X, and what Y?", two questions).
3. Each unit is scored against the question:
   `score = w * cosine(question, unit) + (1 - w) * overlap + 0.15 * heading + 0.5 * chunk_cosine
   (+ 0.2 when the question names every word of the heading the unit sits under: "Materials",
   "During Development"; + 0.1 more when that heading is the kind the question asks for by name, "What
   materials ...?"; + 0.2 when the question asks for a side, "downsides", that labels the unit, its items
   or headings, "**Limitations**:" (`text.facets`); + 0.05 for a lead-in with its list when a list is
   asked for; - 0.1 when the unit's page, as far as it was retrieved, never says a name the question
   gives: "Isaac" of "Isaac ROS")`, where the cosine comes from the local embedder (one batched
   `embed_documents` call per question), `overlap` is the share of the question's stemmed content words
   (`bookrag.text.bm25.tokenize`) found in the unit or its headings, `heading` the share found in its
   own section heading, and `chunk_cosine` the retrieval's score for the unit's chunk (the right section
   is usually ranked first).
   Each part of a multi-part question is scored the same way on its own (its chunk's retrieval score
   included). A clause of a question that asks two things is also searched on its own (`part_hits`): its
   chunks compete for that clause, without their retrieval score for the whole question.
4. It refuses (`weak_evidence`) when the question is about something the book never mentions:
   its words are looked up in the retrieved chunks, then (at most 8 lookups, within the request's
   deadline) in the book's sparse index, which holds every stemmed term of the book. Off-book if
   any *named* term is unknown (a proper noun, acronym, version or model number: "Melodic",
   "18.04", "PID", "PX4", "RT-2"; a hyphenated name is known when each of its parts is, since the
   book may write "Denavit–Hartenberg" with an en dash), or if at least a third of the question's
   content words are (the "poem" in "Write me a poem about robots"), unless the gate excuses it
   (`answering.gate.excuses`: only ordinary words unknown, and a name of the question heads or labels
   the first chunk: "downsides" in "What are the downsides of Simbody?").
5. `composition` chooses the statements that make the answer, and their order, or none (a refusal)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from bookrag.answering.answerers.base import Draft, Retrieve, run_within
from bookrag.answering.answerers.candidates import Candidate, candidates, own_headings
from bookrag.answering.answerers.composition import CALIBRATION, Calibration, Scored, choose, compose
from bookrag.answering.answerers.questions import QuestionShape, Unknown, asked_words, named_terms
from bookrag.answering.gate import asked_about, excuses, lift
from bookrag.contracts.agent import REFUSAL
from bookrag.domain.deadline import Deadline
from bookrag.domain.models import SearchHit
from bookrag.errors import StoreTimeoutError
from bookrag.text.bm25 import tokenize
from bookrag.text.facets import facets

if TYPE_CHECKING:
    from bookrag.retrieval.retriever import Retriever


_MAX_TERM_LOOKUPS = 8
_CHUNK_WEIGHT = 0.5  # times the chunk's retrieval cosine, added to each of its units' scores
_HEADING_BONUS = 0.15  # share of the question's words in the unit's section heading, weighted
_NAMED_HEADING_BONUS = 0.2  # the question names every word of the unit's own section heading
_LIST_BONUS = 0.05  # a lead-in with its list, for a question that asks for a list
_TYPE_BONUS = 0.1  # the unit's own heading is the kind asked for by name ("What materials ...?", "Materials")
_FACET_BONUS = 0.2  # the question asks for a side ("downsides") that labels the unit ("**Limitations**:")
_UNNAMED_PENALTY = 0.1  # the unit's page never says a name the question gives ("Isaac" of "Isaac ROS")
_MIN_PART_TERMS = 3  # a clause with fewer content words is not searched on its own
_PART_TOP_K = 3  # chunks kept per searched clause
_MIN_PART_BUDGET_S = 2.0  # the request's deadline must leave this much for a clause's search




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


class ExtractiveAnswerer:
    """Answers by quoting retrieved sentences; see the module docstring for the calibration."""

    name = "extractive"
    # It scores every statement of the chunks it is given, so it may choose from more than a model is shown:
    # a short section whose heading answers ("When to Use Services") often ranks 6th to 8th behind longer
    # ones sharing the question's words. On textbook-2's answer set, 8 instead of 5: the gold section leads
    # 38 answers instead of 36, keyword recall 0.83 -> 0.87; the sample book's answers are unchanged.
    context_size = 8

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
        unknown = self.unknown_terms(question, hits, deadline)
        names = named_terms(question)
        if unknown.off_book and not excuses(hits, unknown.words, unknown.named, names):
            return Draft(REFUSAL, refused=True, reason="weak_evidence")
        part_hits = self.part_hits(question, hits, retrieve, deadline)
        scored = self.score(question, hits, part_hits)
        chosen = self.select(scored, question, self._bar(question, scored, names))
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
            found = tokenize(f"{hit.text} {hit.citation_label} {headings}")
            evidence.update(found)
            # "GUI" in GZ_GUI_PLUGIN_CAMERA_TRACKER_ENABLED, "biomechanics" in "biomechanics-oriented": the
            # parts of an identifier or a hyphenated word are words the book uses.
            joined = " ".join(t for t in found if "_" in t or "-" in t)
            evidence.update(tokenize(re.sub(r"[-_]", " ", joined)) if joined else ())
        words = list(dict.fromkeys(tokenize(asked_about(question))))
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
        by_part = {h.chunk_id for h in part_hits}
        shape = QuestionShape.of(question)
        kind = asked_words(shape.kind)
        units = candidates([*hits, *part_hits], shape)
        names = set(named_terms(question))
        said: dict[str, set[str]] = {}  # per page: the words of its retrieved chunks and their headings
        for hit in [*hits, *part_hits]:
            said.setdefault(hit.source_file, set()).update(
                tokenize(" ".join([hit.text, hit.citation_label, *hit.payload.heading_path])))
        if not units:
            return []
        w = self.calibration.semantic_weight
        queries = [question, *shape.parts]
        cosines = self._cosines(queries, units)
        wanted = [asked_words(q) for q in queries]
        scored = []
        for i, cand in enumerate(units):
            terms = set(tokenize(cand.text)) | facets(cand.text) | cand.heading_terms
            owns = own_headings(cand.hit, cand.unit)
            values: list[float] = []
            for k, words in enumerate(wanted):
                overlap = len(words & terms) / len(words) if words else 0.0
                heading = len(words & cand.section_terms) / len(words) if words else 0.0
                # A short section whose own heading the question names ("Materials", "During Development")
                # is about what is asked, though its bullets embed weakly.
                # Every word of it: a heading that merely shares "humanoid" with the question says nothing.
                named = any(own <= words for own in owns)
                typed = k == 0 and bool(kind) and any(own == kind for own in owns)
                values.append(w * max(0.0, float(cosines[k, i])) + (1 - w) * overlap + _HEADING_BONUS * heading
                              + _NAMED_HEADING_BONUS * named + _FACET_BONUS * bool(words & cand.sides)
                              + _TYPE_BONUS * typed)
            # The retrieval's own judgement of the chunk: the right section is usually ranked first.
            value = values[0] + (0.0 if cand.hit.chunk_id in by_part else _CHUNK_WEIGHT * cand.hit.score)
            if not names <= said[cand.hit.source_file]:
                # "the recommended way to install Isaac ROS": a page that never says "Isaac" (ROS 2's own
                # installation) is not about it. A page, not a chunk: its sections need not repeat "ROS".
                value -= _UNNAMED_PENALTY
            if shape.wants_list and cand.unit.items:
                value += _LIST_BONUS
            overlap0 = len(wanted[0] & terms) / len(wanted[0]) if wanted[0] else 0.0
            # A part's statement is judged like the whole question's: with its chunk's retrieval score.
            parts = tuple(v + _CHUNK_WEIGHT * cand.hit.score for v in values[1:])
            scored.append(Scored(cand.hit, cand.unit, cand.text, value, max(0.0, float(cosines[0, i])), overlap0,
                                 cand.spans, terms, parts, frozenset(cand.section_terms), cand.follow,
                                 cand.block, cand.scaffold, cand.defines, cand.label))
        scored.sort(key=lambda s: s.score, reverse=True)
        return scored

    def _cosines(self, queries: list[str], units: list[Candidate]) -> np.ndarray:
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


    def _bar(self, question: str, scored: list[Scored], names: list[str]) -> Calibration:
        """The calibration, its refusal bar met when the best statement's chunk has headings or labels
        that name the question's subject (`answering.gate.lift`, weighted as the chunk's retrieval
        score is): a labelled bullet embeds weakly. Unchanged for a statement that clears it alone."""
        cal = self.calibration
        if not scored or scored[0].score >= cal.min_best:
            return cal
        if scored[0].score + _CHUNK_WEIGHT * lift(question, scored[0].hit, names) < cal.min_best:
            return cal
        return replace(cal, min_best=scored[0].score)

    def select(self, scored: list[Scored], question: str = "", calibration: Calibration | None = None) -> list[Scored]:
        """The statements that make the answer (`composition.choose`), or none: a refusal."""
        return choose(scored, question, calibration or self.calibration)

    def compose(self, chosen: list[Scored], hits: list[SearchHit]) -> Draft:
        return compose(chosen, hits)
