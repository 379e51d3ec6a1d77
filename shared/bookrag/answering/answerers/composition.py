"""Which scored statements make the extractive answer, and in what order (`choose`, `compose`).

1. (Whether to answer at all is decided before: `answering.gate.silent`.)
2. It leads with the section that answers best as a whole (its best unit plus half its
   second best), among the sections whose best unit is within `_LEAD_MARGIN` of the best of all (a
   list of middling bullets does not outvote the sentence that answers), takes that section's best
   unit (with the sentence after it when that one continues it: "It's the point where ..."), the
   list in that section when a list is asked
   for (a list and its definition are the whole answer to a list question), when the lead is a
   page's introduction the best unit of each section of that page whose own heading shares the
   question's words (at `_INTRO_RATIO` of the lead), the best unit for each part of a
   multi-part question, then close runners-up (>= `min_keep` and `keep_ratio` of the best) from the
   sections already chosen, or from another section only at 90 % of the best score (and its whole
   list only under a heading that shares the question's words, or when a list is asked for); near-duplicates
   are skipped, at most 4 units. The lead unit keeps the next sentence of its paragraph when that
   sentence names its section's subject (a word of the section's own heading the answer lacks:
   "... duplicates hundreds of lines." + "Xacro (XML macros) adds ..."). The answer lists the lead
   section first, then the others (a multi-part question's sections in the order of the parts they
   answer), each in the book's order, with the citation marker of its chunk
   after every unit, and `Draft.spans` carrying each unit's raw span for the span citations
   (`answerers.spans`).
3. Issue 24's shapes: course scaffolding (`answerers.scaffolding`) never leads unless the question
   asks about it (and scores lower as a runner-up: its fitted weight, `answerers.scoring`); a "What is
   X?" question leads with the book's definition of X (X the subject of a defining verb), from a section
   whose heading names X first; an item quoted alone names what it is about ("Simbody — Pros: ..."); a
   lead-in's items stand as a Markdown list, one per line, and a code block as a fenced block, only when
   the question asks for code or configuration, or is a how-to whose words the block writes (or the block
   is comments only, or a line or two: a formula). The citation marker follows the lead-in, so every
   sentence the citation check reads still carries or precedes its marker.

4. The lead section then fills the answer, in the book's order, to about a paragraph (`_FILL_CHARS`).

Scores are the fitted model's (`answerers.scoring`): `min_keep` comes with its weights;
whether to answer at all is the gate's (`answering.gate.silent`), so `choose` refuses only when nothing
was scored. With a remote embedder (Cohere) sentences are not embedded (its document calls follow the
ingest retry policy, whose waits do not fit in a request): each unit takes its chunk's cosine and the
other features rank units within a chunk. Refit with a Cohere key at hand to calibrate that case.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bookrag.answering.answerers.base import DocumentSet, Draft
from bookrag.answering.answerers.candidates import opening_label
from bookrag.answering.answerers.questions import QuestionShape, asked_words
from bookrag.answering.answerers.scaffolding import asks_about_scaffolding
from bookrag.answering.answerers.scoring import weights
from bookrag.domain.models import SearchHit
from bookrag.text.bm25 import tokenize
from bookrag.text.sentences import Unit

_MAX_CONTINUED_CHARS = 400  # the lead statement and the sentence that continues it
_LIST_RATIO = 0.75  # a list in the best unit's section joins it if it scores this share of the best
_MAX_WITH_LIST = 2  # a list and its definition are enough
_OTHER_SECTION_RATIO = 0.9  # another section's unit needs this share of the best score (focus)
_SECOND_WEIGHT = 0.5  # a section's second-best unit, in the section's score
_INTRO_RATIO = 0.75  # a titled section of the page joins the page's introduction from this share of its score
_DEFINITION_RATIO = 0.7  # "What is X?": the book's definition of X leads from this share of the best score
_INTRO_LEAD_RATIO = 0.9  # a titled section's statement leads over its page's introduction from this share
_LEAD_MARGIN = 0.1  # a section leads only if its best statement is this close to the best of all
_FULLER_MARGIN = 0.05  # a statement with the sentence that continues it, taken at this cost
_FILL_CHARS = 600  # about a paragraph: the lead section fills the answer up to this many characters
_MAX_FILLED = 2  # statements the lead section may add beyond `max_units`


@dataclass(frozen=True, slots=True)
class Calibration:
    min_keep: float
    keep_ratio: float
    max_units: int = 4
    min_units: int = 2


def fitted_calibration() -> Calibration:
    """The bars of the fitted score (`answerers.scoring`): never keep a statement below `min_keep`. Whether to
    answer at all is the gate's (`answering.gate.silent`), so no best score refuses here."""
    return Calibration(min_keep=weights().min_keep, keep_ratio=0.7)


@dataclass(frozen=True, slots=True)
class Scored:
    hit: SearchHit
    unit: Unit
    text: str  # the unit as it will be quoted (a lead-in with its items)
    score: float
    cosine: float
    spans: tuple[tuple[int, int], ...] = ()  # raw spans of `hit.text` that `text` reads
    terms: frozenset[str] | set[str] = frozenset()  # stems of the unit and its headings
    part_scores: tuple[float, ...] = ()  # the same score against each part of a multi-part question
    section_terms: frozenset[str] = frozenset()  # stems of its own section heading (not the page title)
    follow: Unit | None = None  # the next sentence of the same paragraph
    block: str = ""  # the lead-in's items as shown: a Markdown list, or a fenced code block
    scaffold: bool = False  # course scaffolding (`answerers.scaffolding`)
    defines: bool = False  # defines the X of "What is X?"
    label: str = ""  # what an item is about, named before it ("Simbody — Pros: ...")


def choose(scored: list[Scored], question: str, cal: Calibration) -> list[Scored]:
    """The best unit, the list it introduces or belongs with, a unit for each part of a multi-part
    question, then close runners-up from the sections already chosen."""
    if not scored or scored[0].score < 0.0:  # the gate decided to answer; a negative best says nothing
        return []
    shape = QuestionShape.of(question)
    if not asks_about_scaffolding(question):
        # Objectives, schedules and lab steps share a chapter's words but do not answer about its subject:
        # they neither lead nor join an answer when the book says something else worth keeping
        # ("Assessment Criteria — ...", a grade scale for "what is it good for?"); else they rank lower.
        taught = [s for s in scored if not s.scaffold]
        scored = taught if taught and taught[0].score >= cal.min_keep else scored
    # The answer leads with the section that answers best as a whole (its best unit plus half its
    # second best), not with a stray sentence elsewhere that happens to share the question's words.
    # Only sections whose best statement is close to the best one compete: three middling bullets
    # must not outvote the sentence that answers ("The reality gap refers to ...").
    tops: dict[tuple[str, str], list[float]] = {}
    for s in scored:
        top = tops.setdefault(_section(s), [])
        if len(top) < 2 and (top or s.score >= scored[0].score - _LEAD_MARGIN):
            top.append(s.score)
    lead = max((k for k in tops if tops[k]),
               key=lambda k: tops[k][0] + _SECOND_WEIGHT * (tops[k][1] if len(tops[k]) > 1 else 0.0))
    if scored[0].hit.score >= max(s.hit.score for s in scored):
        lead = _section(scored[0])  # the best statement, in the chunk retrieval ranked first: both agree
    best = _fuller(next(s for s in scored if _section(s) == lead), scored)
    if not best.section_terms and not shape.term:
        best = _past_the_introduction(best, scored)
    definition = _definition(scored, shape.term, cal)
    if definition is not None:
        best = definition
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
                    and s.score >= max(0.0, _INTRO_RATIO * best.score) and _section(s) not in titled):
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
    asked = asked_words(question)
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
        named = bool(_headed(candidate) & asked)
        if _section(candidate) not in sections and (candidate.score < _OTHER_SECTION_RATIO * top_score
                                                   or (candidate.unit.items and not shape.wants_list and not named)
                                                   or (candidate.hit.source_file != best.hit.source_file
                                                       and not named)):
            # Off the focus: another section's statement that merely scores well enough, or its whole list
            # under a heading the question does not name ("Common Issues and Solutions" sharing only
            # "blocking" with "Which pattern blocks the caller?"; not "Materials" for "What materials ...?"),
            # or another page's statement under such a heading (the demo's balance answer quoted
            # "Singularities": "Humanoid walking controllers usually keep the knees slightly bent ...").
            continue
        if (not candidate.section_terms and best.section_terms
                and candidate.hit.source_file == best.hit.source_file):
            # The page's introduction motivates ("Walking on two legs looks effortless ..."); a titled
            # section of the page answers (as for the lead: `_past_the_introduction`).
            continue
        add(candidate)
    if not has_list:  # a list and its definition are the whole answer to a list question
        _fill(chosen, scored, cal)
    chosen[0] = _continued(best, chosen)
    return _in_question_order(chosen, len(shape.parts))


def _fill(chosen: list[Scored], scored: list[Scored], cal: Calibration) -> None:
    """The statements that follow the lead in its section, in the book's order, until the answer reads
    about a paragraph (`_FILL_CHARS`): the section that answers says more than its best sentence, and a
    reader gets what the book says next instead of one line out of context. Sentences and whole lists only
    (an item alone would break its list), never what comes before the lead (it leads)."""
    lead = chosen[0]
    said = sum(len(c.text) for c in chosen)
    after = (lead.hit.chunk_index, lead.unit.position)
    rest = sorted((s for s in scored if _section(s) == _section(lead) and s not in chosen and not s.scaffold
                   and not (s.unit.kind == "item" and not s.unit.items)
                   and (s.hit.chunk_index, s.unit.position) > after),
                  key=lambda s: (s.hit.chunk_index, s.unit.position))
    for s in rest:
        if said >= _FILL_CHARS or len(chosen) >= cal.max_units + _MAX_FILLED:
            break
        if not any(_redundant(s, c) for c in chosen):
            chosen.append(s)
            said += len(s.text)


def _in_question_order(chosen: list[Scored], parts: int) -> list[Scored]:
    """A multi-part question's sections in the order of the parts they answer ("What goes into a digital
    twin, and what earlier ideas did it grow out of?": what goes into it first). A section answers the
    part its best statement answers best, against the best of the chosen for that part: a part's scores
    are not comparable with another's ("it" in the second part matches nothing). Otherwise (and among
    sections of one part) as chosen."""
    if parts < 2 or any(len(c.part_scores) < parts for c in chosen):
        return chosen
    tops = [max(c.part_scores[k] for c in chosen) or 1.0 for k in range(parts)]
    part_of: dict[tuple[str, str], int] = {}
    for c in chosen:  # in decreasing importance: a section's first statement is its best
        part_of.setdefault(_section(c), max(range(parts), key=lambda k: c.part_scores[k] / tops[k]))
    return sorted(chosen, key=lambda c: part_of[_section(c)])


def _headed(s: Scored) -> set[str]:
    """The words of what a statement sits under: its section's heading, the heading over it inside the
    chunk, and its own label ("**Nonlinear Filters:** Extended Kalman Filter, ...")."""
    return asked_words(s.hit.section_heading) | asked_words(s.unit.label) | asked_words(opening_label(s.unit.text))


def _fuller(best: Scored, scored: list[Scored]) -> Scored:
    """`best` with the sentence after it when that sentence continues it ("The ZMP is a critical concept."
    + "It's the point on the ground where ..."): the extractor scores both forms; the bare one often wins
    by a hair, and says nothing."""
    for s in scored:
        if s.score < best.score - _FULLER_MARGIN:
            break
        if s is not best and s.hit.chunk_id == best.hit.chunk_id and s.text.startswith(best.text) \
                and len(s.text) > len(best.text):
            return replace(s, defines=best.defines or s.defines)
    return best


def _past_the_introduction(best: Scored, scored: list[Scored]) -> Scored:
    """A page's introduction motivates ("Walking on two legs looks effortless ...") rather than answers:
    the best statement of a titled section of the same page leads instead when it scores close to it."""
    for s in scored:
        if s.score < _INTRO_LEAD_RATIO * best.score:
            break
        if s.hit.source_file == best.hit.source_file and s.section_terms and not s.scaffold:
            return s
    return best


def _definition(scored: list[Scored], term: str, cal: Calibration) -> Scored | None:
    """The book's definition of `term` to lead a "What is X?" answer: from a section whose heading names
    X when there is one, else the best-scoring one; none below `_DEFINITION_RATIO` of the best."""
    if not term or not scored:
        return None
    floor = max(cal.min_keep, _DEFINITION_RATIO * scored[0].score)
    found = [s for s in scored if s.defines and not s.scaffold and s.score >= floor]
    if not found:
        return None
    named = set(tokenize(term))
    return _fuller(max(found, key=lambda s: (named <= s.section_terms, s.score)), scored)


def compose(chosen: list[Scored], hits: list[SearchHit]) -> Draft:
    """Best section first, then the others by their best unit; the book's order within a section, after its lead
    when that is a definition or a list item.
    Each unit is followed by the marker of the chunk it quotes; `Draft.spans` holds its spans."""
    docs = DocumentSet()
    docs.add(hits)
    label_of = {hit.chunk_id: label for label, hit in docs.by_label.items()}
    rank_of: dict[tuple[str, str], int] = {}
    for item in chosen:  # chosen is in decreasing importance
        rank_of.setdefault(_section(item), len(rank_of))
    lead = chosen[0]

    def place(s: Scored) -> int:
        # A definition leads its section, and so does a list item that leads the answer: a list's items are
        # parallel, their order says nothing about which one answers. Scaffolding follows what the section teaches.
        leads = s is lead and (s.defines or (s.unit.kind == "item" and not s.unit.items))
        return 0 if leads else 2 if s.scaffold else 1

    ordered = sorted(chosen, key=lambda s: (rank_of[_section(s)], place(s), s.hit.chunk_index, s.unit.position))
    text = ""
    spans: dict[str, list[tuple[int, int]]] = {}
    named: tuple[str, tuple[str, str]] | None = None  # the label just said, with its section: said once for both
    for item in ordered:
        said = _lead_in(item) if item.block else item.text
        labelled = (item.label, _section(item)) if item.label else None
        if labelled and labelled != named:
            said = f"{item.label} — {said}"
        named = labelled
        quoted = f"{said} [{label_of[item.hit.chunk_id]}]"
        # A list or a code block stands on its own lines, Markdown the widget renders.
        text += ("" if text.endswith("\n") or not text else " ") + quoted
        if item.block:
            text += f"\n\n{item.block}\n\n"
        spans.setdefault(item.hit.chunk_id, []).extend(item.spans)
    return Draft(text.strip(), citations=docs.citations(), spans=spans)


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


def _lead_in(s: Scored) -> str:
    """The quoted text up to its lead-in's end (with the sentence an anaphoric lead-in needs), its
    items left to the block."""
    at = s.text.find(s.unit.text)
    return s.text[:at + len(s.unit.text)] if at >= 0 else s.unit.text


def _section(s: Scored) -> tuple[str, str]:
    return s.hit.source_file, s.hit.section_heading


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
