"""Span-level citations: the exact text an answer quotes, where it is in the chunk, and a link to it.

A `Quote` is a slice of a chunk's `content_text`: `content_text[start:end] == text`, always (the raw
markdown, emphasis and link syntax included). Its `fragment_url` is the section's `source_url` with
a URL text fragment (WICG Text Fragments, `#:~:text=...`) that makes a browser scroll to and
highlight the quoted words on the rendered page:

- the directive is built from the rendered words (markup, list bullets and table pipes dropped);
- a short quote on one line is matched whole (`text=start`); a longer one, or one spanning lines
  (a list, table rows), as a range (`text=textStart,textEnd`: its first and last few words, each
  taken within one line, since a single match cannot cross a block boundary);
- the browser highlights the *first* match on the page, so the start must not occur earlier on it
  (`before`: the page's text above the quote: its title and breadcrumbs, earlier sections, the
  quote's own line up to it): a start that does occur earlier grows, word by word, up to its whole
  line, and if that line itself occurs earlier, the words just before the quote become its `prefix-`;
  where even that is not unique (a list of the book's pages, as the sidebar lists them) or the block
  above is a heading, the link is the section's anchor alone: no highlight rather than a wrong one;
- a quote never starts with its heading's own text (a heading line, or its section heading as a label
  "Instructions: ..."): that text is in the sidebar, the breadcrumbs and the table of contents too;
- each value is percent-encoded: everything but ASCII letters, digits and `_.~!*'()` is escaped,
  including `-`, `&` and `,`, which are the directive's own syntax;
- a `source_url` that already ends in `#anchor` keeps it: `#anchor:~:text=...`.

The agent attaches quotes to `Source` (additive field `quotes`); answerers pass raw spans in
`Draft.spans` (label -> [(start, end)]).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote as _percent

from bookrag.contracts.agent import Quote
from bookrag.domain.models import SearchHit
from bookrag.text.bm25 import words
from bookrag.text.markdown.inline import clean_inline, without_marks

# The line rules the answer units were read with, so a fragment reads a quoted line the same way.
from bookrag.text.sentences import BLOCKQUOTE, LIST_ITEM, MD_HEADING, TABLE_ROW, TABLE_SEPARATOR

__all__ = ["Quote", "fragment_directive", "fragment_url", "make_quote", "quotes_for"]

# One text directive value fits these in one piece; past them, a range.
_EXACT_MAX_WORDS = 10
_RANGE_WORDS = 4
_SAFE = "_.~!*'()"  # `quote` also keeps these; `-` must go (it is the prefix/suffix marker)




def encode_fragment_value(text: str) -> str:
    """Percent-encode one text directive value (WICG Text Fragments): `-`, `&`, `,` included."""
    return _percent(text, safe=_SAFE).replace("-", "%2D")


def _segments(raw: str) -> list[str]:
    """The rendered text of each line of a raw span: markup, bullets and table pipes dropped."""
    out: list[str] = []
    for line in raw.splitlines():
        if not line.strip() or TABLE_SEPARATOR.match(line):
            continue
        if TABLE_ROW.match(line):
            out.extend(c for c in (clean_inline(cell) for cell in line.strip().strip("|").split("|")) if c)
            continue
        # Emphasis or code marks whose pair is on another line render as nothing either.
        cleaned = " ".join(without_marks(clean_inline(LIST_ITEM.sub("", BLOCKQUOTE.sub("", line, count=1),
                                                                    count=1))).split())
        if cleaned:
            out.append(cleaned)
    return out


_PREFIX_WORDS = 3
_TITLE_WORDS = 8


def _words(text: str) -> list[str]:
    return [w.casefold() for w in words(text)]


def _occurs(needle: list[str], haystack: list[str]) -> bool:
    """Whether the word sequence `needle` occurs in `haystack` (word-bounded, case-folded)."""
    n = len(needle)
    if not n:
        return False
    # Only where its first word is (found at C speed): a page above a quote runs to thousands of words.
    i, last = 0, len(haystack) - n + 1
    while True:
        try:
            i = haystack.index(needle[0], i, max(last, 0))
        except ValueError:
            return False
        if haystack[i:i + n] == needle:
            return True
        i += 1


def _title_line(lines: list[str]) -> bool:
    """A title (`_is_title`) of its own, before a blank line and more text: a heading as the chunk text
    keeps it (its `#` marks dropped), or a label."""
    return len(lines) > 2 and not lines[1].strip() and _is_title(lines[0])


def _is_title(raw: str) -> bool:
    """A short line with no sentence end, neither a list item nor a table row."""
    line = raw.strip()
    return (0 < len(line.split()) <= _TITLE_WORDS and not LIST_ITEM.match(raw) and not TABLE_ROW.match(raw)
            and line[-1] not in ".!?:;,")


def _without_heading(raw: str, heading: str) -> tuple[str, str]:
    """(what goes, what stays) of `raw`: a leading heading line goes, and so does its section heading
    used as a lead-in label ("Instructions: ...")."""
    lines = raw.splitlines(keepends=True)
    dropped = []
    while len(lines) > 1 and (MD_HEADING.match(lines[0]) or not lines[0].strip() or _title_line(lines)):
        dropped.append(lines.pop(0))
    text = "".join(lines)
    label = _words(heading)
    if label and _words(text)[: len(label)] == label:
        lead = re.match(r"^\W*" + r"\W+".join(re.escape(w) for w in heading.split()) + r"[\s*_:.\-–—]*", text,
                        flags=re.I)
        if lead and len(_words(text[lead.end():])) >= 2:
            dropped.append(text[: lead.end()])
            text = text[lead.end():]
    return "".join(dropped), text


@dataclass(frozen=True, slots=True)
class _Page:
    """The text above a chunk on its page (titles, breadcrumbs, earlier chunks) as a fragment reads it: read
    once for all the quotes of the chunk, not once each (it runs to thousands of words)."""

    text: str = ""
    segments: tuple[str, ...] = ()
    words: tuple[str, ...] = ()

    @classmethod
    def of(cls, text: str) -> _Page:
        segments = tuple(_segments(text))
        return cls(text, segments, tuple(_words(" ".join(segments))))


def fragment_directive(raw: str, before: str = "", heading: str = "", page: _Page | None = None) -> str:
    """`text=...` for a raw span; '' when the span renders to nothing. `before`: the rendered page's text
    above the span (see the module docstring), after `page`'s when given; `heading`: the span's section heading."""
    dropped, kept = _without_heading(raw, heading)
    segments = _segments(kept)
    if not segments:
        return ""
    before = f"{before}\n{dropped}" if dropped else before
    first, last = segments[0].split(), segments[-1].split()
    # Segments and words run line by line: the page's, read once, then the rest's.
    page = page or _Page()
    own = _segments(before)
    above = [*page.segments, *own]
    earlier = [*page.words, *_words(" ".join(own))]
    exact = len(segments) == 1 and len(first) <= _EXACT_MAX_WORDS
    take = len(first) if exact else min(_RANGE_WORDS, len(first))
    while take < len(first) and _occurs(_words(" ".join(first[:take])), earlier):
        take += 1
    start = " ".join(first[:take])
    prefix = ""
    if _occurs(_words(start), earlier):  # its whole line occurs earlier: the words before it decide
        # The block just above (one table cell, one line): a prefix spans no more.
        prefix = " ".join(above[-1].split()[-_PREFIX_WORDS:]) if above else ""
        # The line above, past the quote's own list bullet ("- " left when the span starts after it): the span's
        # own text above, else the page's (its lines split only here: it runs long).
        lines = [*page.text.splitlines(), *before.splitlines()]
        line = next((line for line in reversed(lines) if line.strip() and not LIST_ITEM.fullmatch(line)), "")
        heading_above = bool(MD_HEADING.match(line)) or _is_title(line)
        # Not after a heading (the theme ends it with its hidden anchor link), nor where the block above
        # and the line occur together earlier too (a list of the book's pages, as the sidebar shows them):
        # then the section's anchor alone, which lands on the section without highlighting elsewhere.
        if not prefix or heading_above or _occurs(_words(f"{prefix} {start}"), earlier):
            return ""
    if take == len(first) and len(segments) == 1:
        value = "text=" + encode_fragment_value(start)
    else:
        value = f"text={encode_fragment_value(start)},{encode_fragment_value(' '.join(last[-_RANGE_WORDS:]))}"
    return value.replace("text=", f"text={encode_fragment_value(prefix)}-,", 1) if prefix else value


def fragment_url(source_url: str, raw: str, before: str = "", heading: str = "", page: _Page | None = None) -> str:
    directive = fragment_directive(raw, before, heading, page)
    if not directive or not source_url:
        return source_url
    base = source_url.split(":~:", 1)[0]
    return f"{base}:~:{directive}" if "#" in base else f"{base}#:~:{directive}"


def make_quote(hit: SearchHit, start: int, end: int, support: float | None = None,
               page_before: str = "") -> Quote | None:
    """The quote of `hit.text[start:end]`, or None for an empty or out-of-range span. `support`: a grounded
    draft's score of the span; `page_before`: the page's text above the chunk (its earlier chunks), so that
    the fragment's start is unique on the page."""
    return _quote(hit, start, end, support, _above(hit, page_before))


def _above(hit: SearchHit, page_before: str) -> _Page:
    # What the rendered page shows above the chunk: the sidebar's and breadcrumbs' titles, then the page.
    return _Page.of("\n".join([hit.payload.doc_title, *hit.payload.heading_path, page_before]))


def _quote(hit: SearchHit, start: int, end: int, support: float | None, page: _Page) -> Quote | None:
    text = hit.text
    if not 0 <= start < end <= len(text):
        return None
    raw = text[start:end]
    return Quote(text=raw, start=start, end=end,
                 fragment_url=fragment_url(hit.payload.source_url, raw, text[:start], hit.section_heading, page),
                 support=support)


def quotes_for(hit: SearchHit, spans: list[tuple[int, int]],
               support: dict[tuple[str, int, int], float] | None = None, page_before: str = "") -> list[Quote]:
    """Quotes for `spans` of one chunk, in reading order, each span once; `support`: a grounded
    draft's score of each span, (chunk id, start, end) -> 0..1."""
    out: list[Quote] = []
    page = _above(hit, page_before) if spans else _Page()
    for start, end in sorted(set(spans)):
        q = _quote(hit, start, end, (support or {}).get((hit.chunk_id, start, end)), page)
        if q is not None:
            out.append(q)
    return out
