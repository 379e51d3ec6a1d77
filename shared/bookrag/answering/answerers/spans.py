"""Span-level citations: the exact text an answer quotes, where it is in the chunk, and a link to it.

A `Quote` is a slice of a chunk's `content_text`: `content_text[start:end] == text`, always (the raw
markdown, emphasis and link syntax included). Its `fragment_url` is the section's `source_url` with
a URL text fragment (WICG Text Fragments, `#:~:text=...`) that makes a browser scroll to and
highlight the quoted words on the rendered page:

- the directive is built from the rendered words (markup, list bullets and table pipes dropped);
- a short quote on one line is matched whole (`text=start`); a longer one, or one spanning lines
  (a list, table rows), as a range (`text=textStart,textEnd`: its first and last few words, each
  taken within one line, since a single match cannot cross a block boundary);
- each value is percent-encoded: everything but ASCII letters, digits and `_.~!*'()` is escaped,
  including `-`, `&` and `,`, which are the directive's own syntax;
- a `source_url` that already ends in `#anchor` keeps it: `#anchor:~:text=...`.

The agent attaches quotes to `Source` (additive field `quotes`); answerers pass raw spans in
`Draft.spans` (label -> [(start, end)]).
"""

from __future__ import annotations

import re
from urllib.parse import quote as _percent

from bookrag.contracts.agent import Quote
from bookrag.domain.models import SearchHit
from bookrag.text.markdown.inline import clean_inline

# The line rules the answer units were read with, so a fragment reads a quoted line the same way.
from bookrag.text.sentences import LIST_ITEM, TABLE_ROW, TABLE_SEPARATOR

__all__ = ["Quote", "fragment_directive", "fragment_url", "make_quote", "quotes_for"]

# One text directive value fits these in one piece; past them, a range.
_EXACT_MAX_WORDS = 10
_RANGE_WORDS = 4
_SAFE = "_.~!*'()"  # `quote` also keeps these; `-` must go (it is the prefix/suffix marker)
_MARKS = re.compile(r"\*\*|__|(?<!\w)[*_`]|[*_`](?!\w)")




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
        cleaned = " ".join(_MARKS.sub("", clean_inline(LIST_ITEM.sub("", line, count=1))).split())
        if cleaned:
            out.append(cleaned)
    return out


def fragment_directive(raw: str) -> str:
    """`text=...` for a raw span; '' when the span renders to nothing."""
    segments = _segments(raw)
    if not segments:
        return ""
    first, last = segments[0].split(), segments[-1].split()
    if len(segments) == 1 and len(first) <= _EXACT_MAX_WORDS:
        return "text=" + encode_fragment_value(segments[0])
    start = " ".join(first[:_RANGE_WORDS])
    end = " ".join(last[-_RANGE_WORDS:])
    return f"text={encode_fragment_value(start)},{encode_fragment_value(end)}"


def fragment_url(source_url: str, raw: str) -> str:
    directive = fragment_directive(raw)
    if not directive or not source_url:
        return source_url
    base = source_url.split(":~:", 1)[0]
    return f"{base}:~:{directive}" if "#" in base else f"{base}#:~:{directive}"


def make_quote(hit: SearchHit, start: int, end: int, support: float | None = None) -> Quote | None:
    """The quote of `hit.text[start:end]`, or None for an empty or out-of-range span."""
    text = hit.text
    if not 0 <= start < end <= len(text):
        return None
    raw = text[start:end]
    return Quote(text=raw, start=start, end=end, fragment_url=fragment_url(hit.payload.source_url, raw),
                 support=support)


def quotes_for(hit: SearchHit, spans: list[tuple[int, int]],
               support: dict[tuple[str, int, int], float] | None = None) -> list[Quote]:
    """Quotes for `spans` of one chunk, in reading order, each span once; `support`: a grounded
    draft's score of each span, (chunk id, start, end) -> 0..1."""
    out: list[Quote] = []
    for start, end in sorted(set(spans)):
        q = make_quote(hit, start, end, (support or {}).get((hit.chunk_id, start, end)))
        if q is not None:
            out.append(q)
    return out
