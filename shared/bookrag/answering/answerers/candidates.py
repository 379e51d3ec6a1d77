"""The statements an extractive answer may quote (`candidates`): every unit of the retrieved chunks
(`text.sentences`), with what scoring and composition need to know of it: the text it is scored and
quoted as (a lead-in with its items; "It runs ..." with the sentence before it), its raw spans, the
sentence that continues it, its list or code block as shown, whether it is course scaffolding or
defines the question's term, the label an item is shown with, and the sides (`text.facets`) its
labels and headings name. A lead-in whose list fell into the next chunk, the cut-off tail of a
sentence at a chunk's start, a repeat from chunk overlap and a bare item of under five words are
not statements."""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, replace

from bookrag.answering.answerers.questions import QuestionShape, asked_words, defines
from bookrag.answering.answerers.scaffolding import asks, is_scaffolding
from bookrag.domain.models import SearchHit
from bookrag.text.bm25 import tokenize
from bookrag.text.facets import facets, without_facet_words
from bookrag.text.sentences import SECTION_NUMBER, Unit, extract_units

__all__ = ["Candidate", "candidates", "opening_label", "opens_with_anaphor", "own_headings"]

# "This chapter introduces ..." points at the book, not at the sentence before it.
_ANAPHOR = re.compile(r"^(It|Its|This|That|These|Those|They|Their|Such|Both|Each of them)\b"
                      r"(?!\s+(?:chapter|section|module|lesson|lab|book|page|course|part)\b)")
_MAX_LIST_CHARS = 700
# A block of one or two lines is shown to any question: a formula ("ẋ = J(θ) * θ̇", which the next sentence's
# "Where J(θ) is ..." explains) or a single command reads as part of the prose; a longer block is code, shown
# only to a question that asks for code.
_SHORT_BLOCK = 2
_MIN_ITEM_WORDS = 5
_MAX_LABEL_CHARS = 40  # a colon further in ends a clause, not a label


@dataclass(frozen=True, slots=True)
class Candidate:
    hit: SearchHit
    unit: Unit
    text: str
    spans: tuple[tuple[int, int], ...]
    heading_terms: set[str]
    section_terms: set[str]
    follow: Unit | None = None
    block: str = ""
    scaffold: bool = False
    defines: bool = False
    label: str = ""
    sides: frozenset[str] = frozenset()
    terms: frozenset[str] = frozenset()  # its stems and facets, with its headings' words: what a question meets


def candidates(hits: list[SearchHit], shape: QuestionShape) -> list[Candidate]:
    """Every unit of `hits` that is a statement, in the hits' order (see the module docstring)."""
    units: list[Candidate] = []
    seen: set[str] = set()
    for hit in hits:
        path = list(hit.payload.heading_path)
        headings = {hit.section_heading, hit.payload.doc_title, *path}
        heading_terms = set().union(*(asked_words(h) for h in headings if h))
        # A page's own title matches every question about the page: only a section's heading
        # says which part of the page answers.
        title = hit.payload.doc_title
        section_terms = set().union(*(asked_words(h) for h in [hit.section_heading, *path[1:]] if h and h != title))
        around = facets(" / ".join([hit.section_heading, *path[1:]]))  # the sides its headings name
        previous: Unit | None = None
        extracted = extract_units(hit.text, headings)
        for at, unit in enumerate(extracted):
            follow = _follow(hit.text, unit, extracted[at + 1] if at + 1 < len(extracted) else None)
            hidden = unit.code and not shape.wants_code and not _commentary(unit) and len(unit.items) > _SHORT_BLOCK \
                and not (shape.code_terms and shape.code_terms & _code_words(unit))  # a block read for a how-to only
            if hidden and not unit.text.endswith(":"):
                # An example the sentence does not introduce with ':' (`text.sentences`): the sentence alone.
                unit = replace(unit, items=(), item_spans=(), code=False, end=unit.lead_end)
            text = _quoted(unit)
            spans = [(unit.start, unit.end)]
            block = _block(hit.text, unit) if unit.items else ""
            if hidden and unit.items:
                # Code only for a question that asks for code: its lead-in says what the code does.
                text, block = unit.text[:-1].rstrip() + ".", ""
                spans = [(unit.start, unit.lead_end)]
            label = _label(unit, hit)
            if unit.kind == "sentence" and previous is not None and previous.under == unit.under \
                    and _ANAPHOR.match(unit.text):
                text = f"{previous.text} {text}"  # "It runs ..." needs the sentence that says what "it" is
                spans.insert(0, (previous.start, previous.end))
            elif unit.kind == "sentence" and not label and opens_with_anaphor(unit.text) and (
                    at == 0 or extracted[at - 1].label != unit.label or extracted[at - 1].under != unit.under):
                label = _heading_over(unit, hit)  # "These simulators are ..." opening a section: which ones
            previous = unit if unit.kind == "sentence" and not unit.items else None
            key = " ".join(text.lower().split())
            if (unit.text.endswith(":") and not unit.items) or key in seen:
                continue  # a lead-in whose list fell into the next chunk; a repeat from chunk overlap
            if unit.start <= 1 and unit.text[:1].islower():
                continue  # the tail of a sentence cut at the chunk's start ("goals. Under the hood ...")
            if unit.kind == "item" and len(unit.text.split()) < _MIN_ITEM_WORDS:
                continue  # "Isaac ROS Visual SLAM." informs only as part of its list
            seen.add(key)
            # The heading over a unit inside the chunk counts too ("Assessment Criteria" over its bullets).
            headed = [hit.section_heading, *path[1:], unit.label, unit.text if _heading_lead_in(unit) else ""]
            scaffold = asks(_listed(unit)) or is_scaffolding(unit.text, headed)
            lead = bool(shape.term) and not unit.items and defines(unit.text, shape.term)
            terms = frozenset(set(tokenize(text)) | facets(text) | heading_terms)
            units.append(Candidate(hit, unit, text, tuple(spans), heading_terms, section_terms, follow,
                                   block, scaffold, lead, label, _sides(unit, around), terms))
    return units


def _listed(unit: Unit) -> tuple[str, ...]:
    """What a unit lists: a lead-in's items (not a code block's lines), an item itself, else nothing."""
    return unit.items if unit.items and not unit.code else (unit.text,) if unit.kind == "item" else ()


def _sides(unit: Unit, around: set[str]) -> frozenset[str]:
    """The facets that label a unit (`text.facets`): its item's label ("**Limitations**: May require ..."),
    its items' labels (a lead-in), the heading over it, or `around`, its section's ("Cloud > Disadvantages")."""
    return frozenset(facets(" / ".join([*map(opening_label, _listed(unit)), unit.label])) | around)


def opens_with_anaphor(text: str) -> bool:
    """Whether a sentence opens by pointing back ("It ...", "These simulators ..."), not at the book ("This
    chapter ..."): it goes on about the sentence before it, or, opening a section, about what its heading names."""
    return _ANAPHOR.match(text) is not None


def opening_label(text: str) -> str:
    """The label a statement opens with ("Limitations" of "Limitations: May require ..."), else ''."""
    return text.split(":", 1)[0] if ":" in text[:_MAX_LABEL_CHARS] else ""


class Rarity:
    """How much a question's word, or a heading it names, tells the retrieved sections apart. Read from the
    retrieved chunks alone, it means the same in any book and needs nothing stored at ingest.

    A word every chunk holds ("redux" in the Redux docs, the question's subject once retrieval has done its
    work) says little about which statement answers; one only a few hold says more: `weight`, the smooth
    inverse document frequency of TF-IDF, ln((1 + n) / (1 + df)) + 1, which keeps a common word's weight at 1
    and a rare one's at most 1 + ln((1 + n) / 2). A question that names a section's heading ("What materials
    ...?" over "## Materials") points at that section, unless the other retrieved sections are about the same
    word: among a middleware page's sections, "## Middleware" names what they all discuss (`specific`)."""

    def __init__(self, units: Sequence[Candidate]) -> None:
        chunks: dict[str, set[str]] = {}
        self._headed: dict[str, set[str]] = {}
        for c in units:
            chunks.setdefault(c.hit.chunk_id, set()).update(c.terms, c.section_terms, c.heading_terms)
            self._headed.setdefault(c.hit.chunk_id, set()).update(c.section_terms)
        self._chunks = list(chunks.values())
        self._weights: dict[str, float] = {}

    def weight(self, word: str) -> float:
        """0 for a word no chunk holds: it tells no statement from another (the reader's own "people talk
        about"), and whether the book knows it at all is the gate's question."""
        if word not in self._weights:
            df, n = sum(word in c for c in self._chunks), len(self._chunks)
            self._weights[word] = math.log((1 + n) / (1 + df)) + 1.0 if df else 0.0
        return self._weights[word]

    def covered(self, found: set[str] | frozenset[str], words: set[str]) -> float:
        """The weighted share of `words` that `found` holds."""
        total = sum(self.weight(w) for w in words)
        return sum(self.weight(w) for w in words & found) / total if total else 0.0

    def specific(self, heading: set[str], chunk_id: str) -> float:
        """For a statement of chunk `chunk_id`: the share of the other chunks whose own headings lack the
        heading's rarest word ("Simbody" among simulators' sections: most; "Middleware" among the sections of
        a page on middleware: few). Headings, not text: a section that mentions "materials" in passing is not
        about them. Alone, a heading is as specific as can be."""
        others = [h for c, h in self._headed.items() if c != chunk_id]
        if not others:
            return 1.0
        return 1.0 - min((sum(w in h for h in others) / len(others) for w in heading), default=1.0)


def own_headings(hit: SearchHit, unit: Unit) -> list[set[str]]:
    """The words of each heading a unit sits under, without numbering: the heading over it inside the
    chunk, else its section's (not the page title, which every question about the page names). A
    lead-in that reads as its list's heading ("Actions are appropriate when:") still sits under its
    section's heading ("When to Use Actions"): both count."""
    own = [unit.label] if unit.label else [unit.text, hit.section_heading] if _heading_lead_in(unit) \
        else [hit.section_heading]
    words = [asked_words(SECTION_NUMBER.sub("", h)) for h in own if h and h != hit.payload.doc_title]
    return [w for w in words if w]


def _heading_lead_in(unit: Unit) -> bool:
    """A list's lead-in that is its heading ("Materials:"), not a sentence."""
    return bool(unit.items) and unit.text.endswith(":") and len(unit.text.split()) <= 6


def _follow(text: str, unit: Unit, nxt: Unit | None) -> Unit | None:
    """`nxt` when it is the sentence after `unit` in the same paragraph."""
    if nxt is None or unit.kind != "sentence" or unit.items or nxt.kind != "sentence" or nxt.items:
        return None
    return None if "\n\n" in text[unit.end:nxt.start] else nxt


def _label(unit: Unit, hit: SearchHit) -> str:
    """What an item is about, when its text does not say: the heading above it in the chunk, else its section's
    (not the page title); a table row names itself. A list under a verdict's heading: whose side (`_whose`).
    Shown with the unit, not scored: the heading's words already count."""
    if unit.kind != "item":
        return _whose(unit, hit) if _heading_lead_in(unit) else ""
    return _heading_over(unit, hit)


def _heading_over(unit: Unit, hit: SearchHit) -> str:
    """The heading a unit sits under, without its number ("1.3 The Embodied Cognition Hypothesis"): the one
    above it in the chunk, else its section's (not the page title); '' when the unit's text names it. What
    an item is about, and what a section's opening "These simulators ..." or "It ..." refers to: a sentence
    has no `label`, and the chunk's section is its last one, not always the one the sentence is in."""
    heading = unit.label or unit.under or hit.section_heading
    heading = "" if heading == hit.payload.doc_title and not unit.label else heading
    heading = SECTION_NUMBER.sub("", heading).rstrip(": ")
    return "" if set(tokenize(heading)) <= set(tokenize(unit.text)) else heading


def _whose(unit: Unit, hit: SearchHit) -> str:
    """Whose side a list under a verdict's heading gives ("Challenges", or "Disadvantages" over "Latency"):
    the heading above it, "Hybrid Approach — Challenges:", "Cloud Deployment — Disadvantages — Latency:"."""
    path = [SECTION_NUMBER.sub("", h) for h in hit.payload.heading_path[1:]]
    if len(path) < 2 or path[-1] != unit.text.rstrip(":").strip():
        return ""
    for j in (len(path) - 1, len(path) - 2):
        if j >= 1 and facets(path[j]) and not tokenize(without_facet_words(path[j])):
            return " — ".join(path[j - 1:len(path) - 1])
    return ""


def _quoted(unit: Unit) -> str:
    """The unit as it is scored (and quoted, but for an item's label): a lead-in carries its items."""
    if not unit.items:
        return unit.text
    items = [i.rstrip(".") for i in unit.items]
    full = f"{unit.text} {'; '.join(items)}."
    if len(full) <= _MAX_LIST_CHARS:
        return full
    heads = [re.split(r"\s+[—–-]\s+|:\s", i, maxsplit=1)[0] for i in items]
    return f"{unit.text} {'; '.join(heads)}."


def _code_words(unit: Unit) -> set[str]:
    """The words a code block writes, its identifiers split at dots and underscores ("request.state.http_client")."""
    return set(tokenize(" ".join(unit.items).replace(".", " ").replace("_", " ")))


def _commentary(unit: Unit) -> bool:
    """A code block of comments only ("# Traditional approach: 10-20 FPS on CPU") is prose set as code."""
    return all(item.startswith(("#", "//")) for item in unit.items)


def _block(text: str, unit: Unit) -> str:
    """How a lead-in's items are shown: a code block fenced as in the book, with its indentation; a list
    one item per line (Markdown: the widget renders it)."""
    if not unit.code:
        return "\n".join(f"- {item}" for item in unit.items)
    first = text.rfind("\n", 0, unit.item_spans[0][0]) + 1
    opener = text[:first].rstrip("\n").rsplit("\n", 1)[-1].strip()
    fence = opener if opener.startswith(("```", "~~~")) else "```"
    body = textwrap.dedent(text[first:unit.item_spans[-1][1]])
    rest = text[unit.item_spans[-1][1]:].lstrip(" \t\n")
    closing = re.match(r"`+|~+", fence)
    more = "" if rest.startswith(fence[:3]) else "\n..."  # the block goes on in the book: the citation opens it
    return f"{fence}\n{body}{more}\n{closing.group() if closing else '```'}"
