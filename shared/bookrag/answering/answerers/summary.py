"""A question that asks for the gist of a page or a part of the book ("can you summarize module 3",
"tl;dr of the style guide", "what's the essentials tutorial part 6 about"): answered from that page's own
opening and the first sentence of each of its sections, never from a page that only names it ("proceed to
Module 3").

The page is the one whose title and path name the most of the subject's words, every number of the subject
among them ("part 6" is not "part 3"); among equals, the first in the book's order (a part's index page
before its chapters). Its chunks come through the agent's `retrieve`, so they are retrieved and may be cited
like any other: the page's own chunks searched by its title, and its opening chunks read in its order, up to
the first that holds a statement (a long page's introduction, after its title and the admonitions over it, is
seldom among the chunks nearest its title).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from bookrag.answering.answerers.base import Retrieve
from bookrag.answering.answerers.candidates import Candidate, candidates
from bookrag.answering.answerers.composition import Scored
from bookrag.answering.answerers.questions import QuestionShape, summary_subject, title_words
from bookrag.answering.gate import asked_about
from bookrag.domain.models import SearchHit
from bookrag.text.bm25 import tokenize
from bookrag.text.markdown.inline import clean_inline
from bookrag.text.sentences import SECTION_NUMBER

__all__ = ["book_opening", "names_the_book", "page_hits", "page_named", "summary"]

# A folder's own page by the names sites give it: Docusaurus's category index (index, README) and the
# overview or introduction a course opens a module with. Among pages that name a subject equally well it is
# the one that sums up the others ("module 3": its overview, not its assignment, first in file order).
_FOLDER_PAGE = frozenset({"index", "readme", "overview", "intro", "introduction"})
_MIN_COVER = 0.5  # the page's title and path name at least half of the subject's words
_MAX_SECTIONS = 4  # statements: the opening, then the page's most central ones
_SUMMARY_CHARS = 600  # about a paragraph, as the answerer's other answers
_OPENING = 2  # statements of the page's opening section
_MIN_WORDS = 6  # a sentence shorter than this says too little to stand for its section
_OPENING_CHUNKS = 3  # at most, read for the page's opening: its title's chunk, an admonition's, its introduction
_BOOK_OPENINGS = 3  # pages tried for the book's own summary (a folder page may hold only links)


def page_named(subject: str, pages: Sequence[tuple[str, str]]) -> str | None:
    """The source file of the page `subject` names, else None."""
    want, numbers = title_words(subject)
    if not want and not numbers:
        return None
    best: tuple[float, bool] = (_MIN_COVER, False)
    found = None
    for source, title in pages:  # in the book's order: among equals, the first
        have, have_numbers = _page_words(source, title)
        if not numbers <= have_numbers | {n.rsplit(" ", 1)[-1] for n in have_numbers}:
            continue
        cover = (len(want & have) + len(numbers)) / (len(want) + len(numbers))
        key = (cover, source.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower() in _FOLDER_PAGE)
        if key > best or (found is None and key >= best):
            best, found = key, source
    return found


def names_the_book(subject: str, pages: Sequence[tuple[str, str]]) -> bool:
    """Whether a summary's subject is the book as a whole: it names the book ("this whole course", "the docs",
    "this book") and nothing a page's title or path names besides ("the docs pls", not "the course schedule")."""
    rest = asked_about(subject)
    if rest == subject:
        return False
    named = set().union(*(_page_words(source, title)[0] for source, title in pages))
    return not set(tokenize(rest)) & named


def book_opening(pages: Sequence[tuple[str, str]]) -> list[str]:
    """The pages a book opens with, the likeliest first, from its structure alone: the docs folder's own page
    ("intro.md", "index.md"), else the pages of its introduction folder ("introduction/README.md", then the
    others in the book's order: a site without sidebar positions still has one), and the book's first page."""
    def rank(source: str) -> tuple[int, bool] | None:
        parts = source.rsplit(".", 1)[0].lower().split("/")
        if len(parts) == 1:
            return (0, False) if parts[0] in _FOLDER_PAGE else None
        return (1, parts[1] not in _FOLDER_PAGE) if len(parts) == 2 and parts[0] in _FOLDER_PAGE else None

    ranked = sorted((key, at) for at, (source, _) in enumerate(pages) if (key := rank(source)) is not None)
    first = [pages[0][0]] if pages else []
    return list(dict.fromkeys([*(pages[at][0] for _, at in ranked[:_BOOK_OPENINGS - 1]), *first]))


def _page_words(source: str, title: str) -> tuple[set[str], set[str]]:
    """What a page's title and path name (`questions.title_words`)."""
    return title_words(f"{title} {source.rsplit('.', 1)[0]}")


def _pages_for(subject: str, pages: Sequence[tuple[str, str]]) -> list[str]:
    """The pages that may sum `subject` up, the first that holds a statement answering: the book's opening for
    the book, else the one page it names (none when it names none)."""
    if names_the_book(subject, pages):
        return book_opening(pages)
    named = page_named(subject, pages)
    return [named] if named is not None else []


def page_hits(question: str, pages: Sequence[tuple[str, str]], retrieve: Retrieve) -> list[SearchHit]:
    """For a request for a summary whose words retrieve nothing ("can you summarize part 3 for me"), the chunks
    of the page it names, searched by its title; [] for any other question."""
    subject = summary_subject(question)
    titles = dict(pages)
    for source in _pages_for(subject, pages) if subject else []:
        found = retrieve(titles[source] or subject, page=source)
        if found:
            return found
    return []


def summary(subject: str, pages: Sequence[tuple[str, str]], hits: Sequence[SearchHit], retrieve: Retrieve,
            embed: Callable[[list[str]], np.ndarray] | None = None) -> tuple[list[Scored], list[SearchHit]] | None:
    """The statements that sum up the page `subject` names (the book's opening for the book), in its order, and
    the hits they come from; None when no page is named or none of its text was retrieved.

    With `embed` (a local embedder), the page's opening and the statements nearest to what the page says as a
    whole (the centroid of its statements, with its title): a module's "This module covers Gazebo, Unity and
    Isaac Sim", not its duration. Without, the first statement of each section."""
    titles = dict(pages)
    for source in _pages_for(subject, pages):
        summed = _summary_of(source, titles[source], subject, hits, retrieve, embed)
        if summed is not None:
            return summed
    return None


def _summary_of(source: str, title: str, subject: str, hits: Sequence[SearchHit], retrieve: Retrieve,
                embed: Callable[[list[str]], np.ndarray] | None) -> tuple[list[Scored], list[SearchHit]] | None:
    searched = retrieve(title or subject, page=source)
    shape = QuestionShape.of(title)
    read = _page_opening(retrieve(title, page=source, opening=_OPENING_CHUNKS), shape)
    page = {h.chunk_id: h for h in [*read, *hits, *searched] if h.source_file == source}  # a search's hit wins
    ordered = sorted(page.values(), key=lambda h: h.chunk_index)
    units = [c for c in candidates(ordered, shape) if _stands(c)]
    if not units:
        return None
    central = _centrality(title, units, embed) if embed is not None and len(units) > _MAX_SECTIONS \
        else [-float(i) for i in range(len(units))]
    opening = next((i for i, c in enumerate(units) if not c.scaffold), 0)
    sections = [_section(c) for c in units]
    keep = {opening}
    per_section = {sections[opening]: 1}
    size = len(units[opening].text)
    for i in sorted(range(len(units)), key=lambda k: central[k], reverse=True):
        if len(keep) == _MAX_SECTIONS or size >= _SUMMARY_CHARS:
            break
        heading = sections[i]
        # The opening's section may give two statements, any other one; one list in a summary is enough.
        cap = _OPENING if heading == sections[opening] else 1
        if i in keep or per_section.get(heading, 0) >= cap or (units[i].unit.items and any(units[k].unit.items
                                                                                          for k in keep)):
            continue
        shared = {k for k in keep if _shares(units[i], units[k])}
        if any(not _holds(units[i], units[k]) for k in shared):
            continue  # its sentence, or the one it points back to, is quoted already
        # "It lists our recommended patterns ..." is quoted with the sentence its "It" points back to: when that
        # sentence is kept already (the page's opening), the fuller statement takes its place.
        for k in shared:
            per_section[sections[k]] -= 1
            size -= len(units[k].text)
        opening = i if opening in shared else opening
        keep = (keep - shared) | {i}
        size += len(units[i].text)
        per_section[heading] = per_section.get(heading, 0) + 1
    chosen: list[Scored] = []
    labelled: set[str] = set()
    for i in [opening, *sorted(keep - {opening})]:  # the opening first, as a summary starts, then the book's order
        cand, heading = units[i], sections[i]
        label = "" if heading == clean_inline(cand.hit.payload.doc_title) or heading in labelled \
            else SECTION_NUMBER.sub("", heading).strip()
        if _flat(label).lower() == _flat(cand.unit.text).rstrip(":").strip().lower():
            label = ""  # a list under its heading opens with the heading as its lead-in ("Key Terms:"): once
        labelled.add(heading)
        chosen.append(Scored(cand.hit, cand.unit, cand.text, 1.0, 1.0, cand.spans, block=cand.block, label=label))
    return chosen, ordered


def _page_opening(read: list[SearchHit], shape: QuestionShape) -> list[SearchHit]:
    """The page's first chunks `read`, up to the first that holds a statement a summary may open with: a title's
    chunk that holds only scaffolding ("What You'll Learn", a list of prerequisites) is read past, and the chunks
    after the introduction's are left to the search by title."""
    for at, hit in enumerate(read):
        if any(_stands(c) and not c.scaffold for c in candidates([hit], shape)):
            return read[: at + 1]
    return read


def _section(cand: Candidate) -> str:
    """The heading of the section a statement is in: the heading line above it in its chunk, else its chunk's
    section. A chunk may hold a short section and the next ("Inspections ... Smoke ..."), and its
    `section_heading` is the last one's: a sentence under "Inspections" is not about smoke. As the chunk shows it
    (`clean_inline`), so a section is one key whichever of the two names it."""
    return cand.unit.under or clean_inline(cand.hit.section_heading)


def _centrality(title: str, units: list[Candidate], embed: Callable[[list[str]], np.ndarray]) -> list[float]:
    """Each statement's cosine with the page's centroid plus its title's vector."""
    vectors = np.asarray(embed([title, *(c.text for c in units)]), dtype=np.float64)
    centre = vectors[1:].mean(axis=0)
    centre = centre / (np.linalg.norm(centre) or 1.0) + vectors[0]
    return [float(v) for v in vectors[1:] @ centre]


def _holds(cand: Candidate, other: Candidate) -> bool:
    """Whether `cand` quotes all of `other`: a statement with the sentence it points back to holds that sentence
    (`candidates`), and chunk overlap repeats a page's sentences in the next chunk."""
    return _flat(other.text) in _flat(cand.text)


def _shares(a: Candidate, b: Candidate) -> bool:
    """Whether two statements quote a sentence in common: one holds the other, or its own sentence (not the one
    it points back to) is in the other ("It lists ..." in "This is ... It lists ...")."""
    return _holds(a, b) or _holds(b, a) or _flat(a.unit.text) in _flat(b.text) or _flat(b.unit.text) in _flat(a.text)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _stands(cand: Candidate) -> bool:
    """A sentence long enough to stand for its section, or a lead-in with its list."""
    if cand.unit.items:
        return bool(cand.block)
    return cand.unit.kind == "sentence" and len(cand.unit.text.split()) >= _MIN_WORDS
