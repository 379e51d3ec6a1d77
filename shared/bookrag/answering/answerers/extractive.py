"""The offline answerer: quotes the book's statements that answer the question, cited span by span, or refuses.

How it decides (deterministic, no network beyond the configured embedder and store):

1. Every retrieved chunk is split into units (`answerers.candidates`, `text.sentences`): prose sentences, list
   items, table rows read as sentences; a sentence ending in ':' carries the list, rows or short command block it
   introduces, and any sentence the code block right after it; so does a run of definition lines ("**Term**: ..."),
   and a list directly under its heading takes the heading as its lead-in. A chunk's cut-off first fragment
   (lower-case start at offset 0) is dropped. Each unit knows its raw span in the chunk's `content_text`.
2. The question as typed is respelt (`questions.respell`): a word no English lexicon and no page knows is
   the book's word it misspells ("reducr" -> "reducer"). Its shape (`QuestionShape`): does it ask for a
   list, which parts a complete answer covers ("the difference between A and B", "A vs B", two
   questions), does it ask for a summary of a page ("summarize module 3": `answerers.summary` answers it
   from that page's opening and the first sentence of its sections).
3. Each unit is scored by one fitted model (`answerers.scoring`): a logistic regression over features that
   mean the same in any book (the dense cosine from the local embedder, one batched `embed_documents` call
   per question; the share of the question's stemmed words and facets in the unit, its headings, its own
   section heading, each word weighted by how few retrieved chunks hold it (`candidates.Rarity`); the chunk's
   retrieval score and rank; the unit's kind and place; the page's kind), weights fit on our own books' answer
   sets (`make refit`). Each part of a multi-part question is scored the same way on its own. A clause of a
   question that asks two things is also searched on its own (`part_hits`): its chunks compete for that
   clause, without their retrieval score for the whole question.
4. It refuses (`weak_evidence`) when the book is silent (`answering.gate.silent`, fit with the scores):
   from the best statement's score, the retrieval's, and the question's words the book never uses (looked
   up in the retrieved chunks, then, at most 8 lookups within the request's deadline, in the book's sparse
   index), and whether one of those is a name (capitalised, an acronym or version, or no English word:
   "svelte", `text.lexicon`). A reader's own words ("downsides", "really") weigh less than a product the
   book never mentions.
5. `composition` chooses the statements that make the answer, and their order, or none (a refusal)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from bookrag.answering.answerers.base import Draft, Retrieve, run_within
from bookrag.answering.answerers.candidates import Candidate, Rarity, candidates, own_headings
from bookrag.answering.answerers.composition import Calibration, Scored, choose, compose, fitted_calibration
from bookrag.answering.answerers.questions import (
    QuestionShape,
    Unknown,
    asked_words,
    named_terms,
    numbered_names,
    respell,
    summary_subject,
    typed_words,
)
from bookrag.answering.answerers.scaffolding import asks_about_scaffolding
from bookrag.answering.answerers.scoring import FEATURES, weights
from bookrag.answering.answerers.summary import summary
from bookrag.answering.gate import asked_about, silence_features, silent
from bookrag.contracts.agent import REFUSAL
from bookrag.domain.deadline import Deadline
from bookrag.domain.models import SearchHit
from bookrag.errors import StoreTimeoutError
from bookrag.text.bm25 import tokenize
from bookrag.text.facets import without_facet_words
from bookrag.text.lexicon import abbreviates, english

if TYPE_CHECKING:
    from bookrag.retrieval.retriever import Retriever


_MAX_TERM_LOOKUPS = 8
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
        self._local = retriever.embeds_locally
        self._calibration = calibration

    @property
    def calibration(self) -> Calibration:
        """Read on first use: the fitted weights come with it (`answerers.scoring`)."""
        if self._calibration is None:
            self._calibration = fitted_calibration()
        return self._calibration

    # --- the Answerer protocol ---------------------------------------------------------------

    def answer(self, question: str, hits: list[SearchHit], retrieve: Retrieve, deadline: Deadline) -> Draft:
        """Raises `EmbeddingError` (scoring embeds the sentences) and store errors (term lookups)."""
        if not hits:
            return Draft(REFUSAL, refused=True, reason="no_relevant_context")
        question = respell(question, hits, self.retriever.vocabulary)
        subject = summary_subject(question)
        summed = summary(subject, self.retriever.pages(), hits, retrieve,
                         self.retriever.embed_documents if self._local else None) if subject else None
        if summed is not None:
            return self.compose(*summed)
        unknown, part_hits = self.evidence(question, hits, retrieve, deadline)
        scored = self.score(question, hits, part_hits)
        if silent(silence_features(scored[0].score if scored else 0.0, len(unknown.words), unknown.total,
                                   bool(unknown.named), hits)):
            return Draft(REFUSAL, refused=True, reason="weak_evidence")
        chosen = self.select(scored, question)
        if not chosen:
            return Draft(REFUSAL, refused=True, reason="weak_evidence")
        return self.compose(chosen, [*hits, *part_hits])

    def evidence(self, question: str, hits: list[SearchHit], retrieve: Retrieve,
                 deadline: Deadline) -> tuple[Unknown, list[SearchHit]]:
        """What the answer is decided on besides `hits`: the question's words the book never uses, and the
        chunks retrieved for each of its clauses. `question` as respelt (`questions.respell`)."""
        return self.unknown_terms(question, hits, deadline), self.part_hits(question, hits, retrieve, deadline)

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
        read: list[str] = []  # the retrieved text as written, headings too
        for hit in hits:
            headings = " ".join(hit.payload.heading_path)
            read.append(f"{hit.text} {hit.citation_label} {headings}")
            found = tokenize(read[-1])
            evidence.update(found)
            # "GUI" in GZ_GUI_PLUGIN_CAMERA_TRACKER_ENABLED, "biomechanics" in "biomechanics-oriented": the
            # parts of an identifier or a hyphenated word are words the book uses.
            joined = " ".join(t for t in found if "_" in t or "-" in t)
            evidence.update(tokenize(re.sub(r"[-_]", " ", joined)) if joined else ())
        asked = asked_about(question)
        words = list(dict.fromkeys(tokenize(without_facet_words(asked))))
        names = set(named_terms(question))
        # Named terms first: one of them unknown settles it, and lookups are capped.
        absent = sorted((t for t in words if t not in evidence), key=lambda t: t not in names)
        surface = {stem: w for w in typed_words(asked) for stem in tokenize(w)}

        @cache
        def written() -> frozenset[str]:  # the passages' words as written, read for a possible short form only
            return frozenset(w.lower() for text in read for w in typed_words(text))

        def known(term: str) -> bool:
            # "std" where the passages write "standard", "deps" for "dependencies": a reader's short form.
            if abbreviates(surface.get(term, term), written):
                return True
            # "denavit-hartenberg" where the book writes "Denavit–Hartenberg": every part is known.
            parts = [p for p in re.split(r"[-_.]", term) if len(p) > 1]
            if len(parts) > 1 and all(p in evidence for p in parts):
                return True
            # "ros1" where the book writes "ROS 1", "react18" for "React 18": a name and its version typed as one
            # word, known when the retrieved text writes the two together ("ROS 3" is still a version it never names).
            glued = re.fullmatch(r"([a-z]{2,})(\d+)", term)
            if glued and any(re.search(rf"\b{glued[1]}[\s-]?{glued[2]}\b", text, re.IGNORECASE) for text in read):
                return True
            return self._in_book(term)

        def lookup() -> list[str]:
            return [t for t in absent[:_MAX_TERM_LOOKUPS] if not known(t)]

        try:
            unknown = run_within(lookup, deadline.remaining()) if deadline and absent else lookup()
        except TimeoutError:
            raise StoreTimeoutError() from None
        # A name the book never uses ("svelte", "Kalibr", "ORB-SLAM3"): capitalised, or no English word.
        named = [t for t in unknown if t in names or _unlisted(surface.get(t, t))]
        return Unknown(words=unknown, named=named, total=len(words))

    def _in_book(self, term: str) -> bool:
        return self.retriever.uses_term(term)

    def score(self, question: str, hits: list[SearchHit], part_hits: Sequence[SearchHit] = ()) -> list[Scored]:
        """Every unit of `hits` and `part_hits`, best first, scored by the fitted model (`answerers.scoring`).
        Raises `EmbeddingError`.

        A unit of `part_hits` (retrieved for one clause of the question) competes for its clause; for the
        whole question its chunk's retrieval score, which measured the clause, is not counted."""
        units, x = self.features(question, hits, part_hits)
        if not units:
            return []
        model = weights()
        scores = [model.score(x[k]) for k in range(x.shape[0])]
        cosine = FEATURES.index("cosine")
        scored = []
        for i, cand in enumerate(units):
            parts = tuple(float(scores[k][i]) for k in range(1, len(scores)))
            scored.append(Scored(cand.hit, cand.unit, cand.text, float(scores[0][i]), float(x[0, i, cosine]),
                                 cand.spans, cand.terms, parts, frozenset(cand.section_terms), cand.follow,
                                 cand.block, cand.scaffold, cand.defines, cand.label))
        scored.sort(key=lambda s: s.score, reverse=True)
        return scored

    def features(self, question: str, hits: list[SearchHit],
                 part_hits: Sequence[SearchHit] = ()) -> tuple[list[Candidate], np.ndarray]:
        """The statements of `hits` and `part_hits` and their features (`scoring.FEATURES`), one matrix per
        query: the question, then each of its parts (queries x statements x features)."""
        by_part = {h.chunk_id for h in part_hits}
        shape = QuestionShape.of(question)
        # Scaffolding answers a question about it ("How often is it audited?": "Audit schedule — ...").
        asks_scaffolding = asks_about_scaffolding(question)
        all_hits = [*hits, *part_hits]
        units = candidates(all_hits, shape)
        if not units:
            return [], np.zeros((1 + len(shape.parts), 0, len(FEATURES)))
        # What the question names, a numbered name among them ("module 3" of "how long is the module 3 lab?": a
        # page about module 4's lab says the rest as well)
        names = set(named_terms(question)) | {n for n in numbered_names(question) if " " in n}
        said: dict[str, set[str]] = {}  # per page: the words of its retrieved chunks and their headings
        for hit in all_hits:
            text = " ".join([hit.text, hit.citation_label, *hit.payload.heading_path])
            said.setdefault(hit.source_file, set()).update(
                tokenize(text), numbered_names(f"{text} {hit.source_file.rsplit('.', 1)[0]}"))
        queries = [question, *shape.parts]
        cosines = self._cosines(queries, units)
        wanted = [asked_words(q) for q in queries]
        rarity = Rarity(units)
        x = np.zeros((len(queries), len(units), len(FEATURES)))
        for i, cand in enumerate(units):
            terms = cand.terms
            owns = own_headings(cand.hit, cand.unit)
            unit = cand.unit
            common = {"unnamed": float(not names <= said[cand.hit.source_file]),
                      "list_asked": float(shape.wants_list and bool(unit.items)),
                      "scaffold": float(cand.scaffold and not asks_scaffolding)}
            for k, words in enumerate(wanted):
                row = {**common,
                       "cosine": max(0.0, float(cosines[k, i])),
                       "overlap": rarity.covered(terms, words),
                       "heading": rarity.covered(cand.section_terms, words),
                       # Every word of it: a heading that merely shares "humanoid" with the question says nothing;
                       # nor does one every retrieved chunk shares ("Middleware" for a middleware question).
                       "named_heading": max((rarity.specific(own, cand.hit.chunk_id) for own in owns if own <= words),
                                            default=0.0),
                       "facet": float(bool(words & cand.sides)),
                       # A part's statement is judged with its chunk's retrieval score; for the whole
                       # question, a chunk found for one clause measured that clause, not the question.
                       "chunk": 0.0 if k == 0 and cand.hit.chunk_id in by_part else cand.hit.score}
                x[k, i] = [row[f] for f in FEATURES]
        return units, x

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
        vectors = np.asarray(self.retriever.embed_documents(_embedded(units)))
        cosines: np.ndarray = np.asarray(q_vecs @ vectors[: len(texts)].T, dtype=np.float32)
        for j, i in enumerate(lead_ins):  # a list can dilute its lead-in's meaning, or carry it
            cosines[:, i] = np.maximum(cosines[:, i], q_vecs @ vectors[len(texts) + j])
        return cosines

    def statements(self, question: str, hits: list[SearchHit]) -> list[str]:
        """The texts a local answer to `question` over `hits` embeds (without the chunks its clauses find): many
        answers' statements can then be embedded ahead in one call (`services.suggesting`), where an answer's
        own call, a few short texts of uneven length, pays mostly for padding."""
        return _embedded(candidates(hits, QuestionShape.of(question)))

    def select(self, scored: list[Scored], question: str = "", calibration: Calibration | None = None) -> list[Scored]:
        """The statements that make the answer (`composition.choose`), or none: a refusal."""
        return choose(scored, question, calibration or self.calibration)

    def compose(self, chosen: list[Scored], hits: list[SearchHit]) -> Draft:
        return compose(chosen, hits)


def _embedded(units: list[Candidate]) -> list[str]:
    """What `_cosines` embeds: each statement as scored, then each list's lead-in on its own."""
    return [u.text for u in units] + [u.unit.text for u in units if u.unit.items]


def _unlisted(word: str) -> bool:
    """A word of letters that no English lexicon lists: a name ("svelte"); or an identifier, which names a
    package or a function in any book ("robot_localization", "useQuery"). Digits alone are a phone number's or
    a figure's, not a name (versions and model numbers are `named_terms`)."""
    letters, bare = re.sub(r"[^A-Za-z-]", "", word), word.strip(".")
    if not letters:
        return False
    if bare.replace("_", "") == letters and ("_" in bare or any(c.isupper() for c in letters[1:])):
        return True  # an identifier: words joined by underscores, or a capital inside ("useQuery")
    return letters == bare and not english(letters.lower())
