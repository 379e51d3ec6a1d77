"""A selection is user input. It counts as the book's text only where it matches an indexed
chunk (`match_selection`): words compared after Unicode folding (quotes, dashes, case, markup and
spacing do not matter), with `difflib` allowing small copy/paste differences. A matched selection
anchors retrieval on its chunk and the rest of its section, and the answer stays there unless the
question reaches beyond the passage ("Where else does the book use this?": then its file's other chunks
and the book at large follow); an unmatched one is only more words of the question: it is never a
source, so it can never be cited as the book.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bookrag.answering.conversation import answered, earlier_subject
from bookrag.domain.conversation import Selection, Turn
from bookrag.domain.models import Filters, SearchHit
from bookrag.domain.query import POLICIES
from bookrag.retrieval.retriever import Retriever, SearchOptions
from bookrag.text.bm25 import words

MAX_QUERY_CHARS = POLICIES["agent"].max_query_chars

# A selection counts as the book's text when at least this share of its words match a chunk in order
# (difflib's matching blocks): a copy/paste that lost a footnote mark or a line break still matches,
# a paraphrase does not.
MATCH_COVERAGE = 0.85
MIN_MATCH_WORDS = 4
_FOLD = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "\u00a0": " "})


def _words(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", text).translate(_FOLD).casefold()
    return words(folded)  # letters and digits of any script


def coverage(selection: Sequence[str], text: Sequence[str]) -> float:
    """Share of the selection's words that appear, in order, in `text` (0..1)."""
    if not selection:
        return 0.0
    matcher = difflib.SequenceMatcher(None, selection, text, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / len(selection)


@dataclass(frozen=True, slots=True)
class SelectionMatch:
    hit: SearchHit
    coverage: float


def _page(url: str) -> str:
    return url.split("#", 1)[0].split("?", 1)[0].rstrip("/")


def match_selection(retriever: Retriever, selection: Selection) -> SelectionMatch | None:
    """The indexed chunk the selection was copied from, or None (then it is not the book's text)."""
    words = _words(selection.text)
    if len(words) < MIN_MATCH_WORDS:
        return None
    probe = selection.text[:MAX_QUERY_CHARS]
    scopes = [Filters(source_file=selection.source_file)] if selection.source_file else []
    scopes.append(Filters())
    page = _page(selection.source_url) if selection.source_url else ""
    for scope in scopes:
        hits = retriever.search(probe, SearchOptions(top_k=5, min_score=0.0, filters=scope or None,
                                                     diversify=False)).hits
        if page:  # the client told us the page: its chunks first
            hits.sort(key=lambda h: _page(h.payload.source_url) != page)
        best: SelectionMatch | None = None
        for hit in hits:
            score = coverage(words, _words(hit.text))
            if MATCH_COVERAGE > score >= 0.3:  # maybe it runs across a chunk boundary
                score = max(score, coverage(words, _words(retriever.neighbours(hit))))
            if score >= MATCH_COVERAGE and (best is None or score > best.coverage):
                best = SelectionMatch(hit, score)
        if best is not None:
            return best
    return None


SCOPED_RESULTS = 6
MAX_SELECTION_HITS = 8


Section = tuple[str, tuple[str, ...]]  # a page and the heading path of one of its sections


def section_of(hit: SearchHit) -> Section:
    return hit.source_file, tuple(hit.payload.heading_path)


def in_section(hit: SearchHit, section: Section) -> bool:
    return section_of(hit) == section


Hits = list[SearchHit]


def passage_context(retriever: Retriever, selection: Selection, question: str, retrieve: Callable[[str], Hits],
                    record: Callable[[Hits], Hits]) -> tuple[Hits, bool, Section | None]:
    """(the hits to answer from, whether the passage is the book's text, the section the answer stays
    in). The book's passage: its chunk and section first (`record`ed as retrieved), then, for a question
    that reaches beyond it, the book at large (`retrieve`); otherwise only its section, so another topic
    never slips in. A passage that is not the book's text: the question and the passage, searched."""
    match = match_selection(retriever, selection)
    search_text = f"{question} {selection.text}"
    if match is None:
        return retrieve(search_text), False, None
    beyond = reaches_beyond(question)
    scoped = record(selection_hits(retriever, match, search_text, beyond))
    if not beyond:
        return scoped, True, section_of(match.hit)
    ids = {h.chunk_id for h in scoped}
    return [*scoped, *[h for h in retrieve(question) if h.chunk_id not in ids]], True, None


def selection_hits(retriever: Retriever, match: SelectionMatch, search_text: str,
                   beyond: bool = True) -> list[SearchHit]:
    """The passage's chunk, then its neighbours and the rest of its file as ranked for the question;
    not `beyond` its section: the passage's chunk and the rest of its section only."""
    anchor = match.hit
    scoped = retriever.search(search_text, SearchOptions(
        top_k=SCOPED_RESULTS, min_score=0.0, filters=Filters(source_file=anchor.source_file), diversify=False)).hits
    if not beyond:
        scoped = [h for h in scoped if in_section(h, section_of(anchor))]
    near = [h for h in scoped if h.chunk_id != anchor.chunk_id and abs(h.chunk_index - anchor.chunk_index) <= 1]
    rest = [h for h in scoped if h.chunk_id != anchor.chunk_id and h not in near]
    return [anchor, *near, *rest][:MAX_SELECTION_HITS]


# "Where else does the book use this?", "How does this compare to ...?": a question about a passage that
# asks beyond it. Any other ("Explain this more simply", "Why does this matter?") is answered from the
# passage and its section: another section's sentence is another topic.
_BEYOND = re.compile(r"\b(?:where\s+else|elsewhere|else\s+in\s+the\s+book|other\s+(?:places?|chapters?|sections?|"
                     r"examples?|parts?)|compare[sd]?|comparison|relate[sd]?|relation|related|connect(?:s|ed)?|"
                     r"differ(?:s|ent|ence)?|versus|vs\.?|alternatives?|instead)\b", re.IGNORECASE)


def reaches_beyond(question: str) -> bool:
    """Whether a question about a selected passage asks about more than the passage's section."""
    return _BEYOND.search(question) is not None


def with_selection(question: str, selection: Selection) -> str:
    """The question an answerer sees: the reader's words, then the passage they selected, quoted."""
    return f'{question}\n\nThe reader selected this passage: "{selection.text}"'


# "How does this relate to what you said before?": a question about a selection that brings in the
# conversation. Without such words, a selection's "this" is the passage, not the earlier subject.
_REFERS_BACK = re.compile(r"\b(?:you\s+(?:just\s+)?(?:said|mentioned|described|explained|wrote|told|showed)"
                          r"|your\s+(?:last\s+|previous\s+|earlier\s+)?answer|(?:last|previous|earlier)\s+answer"
                          r"|we\s+(?:just\s+)?(?:discussed|talked|covered)|(?:said|mentioned|discussed|asked)\s+"
                          r"(?:before|earlier|previously)|earlier|previously|before\s*[?.!]*\s*$)", re.IGNORECASE)


def about_selection(question: str, history: Sequence[Turn]) -> str:
    """The question to search with a selection: as asked, or, when it refers back to the conversation
    ("... what you said before?"), with the earlier subject (or the entity its answer picked) added."""
    subject, _, focus = earlier_subject(answered(history))
    if not subject or not _REFERS_BACK.search(question):
        return question
    return f"{question.rstrip(' ?.!')} ({focus or subject})?"
