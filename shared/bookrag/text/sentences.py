"""Chunk text -> answerable units: prose sentences, list items, table rows read as sentences.

Headings, admonition labels, table separators and heading-like lines are skipped, and so are code
blocks, except one (its first 20 lines) that a sentence ending in ':' introduces, or that follows a
sentence right away (its example, whatever the sentence's stop): its lines are carried by that sentence like list items
("It must be initialised once per machine: sudo rosdep init; rosdep update"). An extractive answer quotes
the book's statements, not its formatting.

Every unit knows where it came from: `start`/`end` are character offsets into the chunk text it was
extracted from (`text[start:end]` is the raw markdown the unit reads, emphasis and link syntax
included), so a citation can quote the book's exact span. Cleaning keeps a per-character map back
to the raw text for that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Inline cleanup (shared with heading anchors) and the sentence splitter (shared with the chunker and
# the citation check) live in their own modules; both stay importable from here under their old names.
from bookrag.text.markdown.inline import CLEAN_RULES, clean_inline
from bookrag.text.sentence_splitter import PROSE, split_sentences

__all__ = ["BLOCKQUOTE", "LIST_ITEM", "MD_HEADING", "SECTION_NUMBER", "TABLE_ROW", "TABLE_SEPARATOR", "Unit",
           "clean_inline", "extract_units", "split_sentences"]

_FENCE = re.compile(r"^\s*(```+|~~~+)")
MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")  # an ATX heading line
_ADMONITION_LABEL = re.compile(
    r"^(Note|Tip|Info|Warning|Danger|Caution|Important|Success|Secondary|Example)\s*:[^.!?]*$", re.IGNORECASE)
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
# Quiz options ("a) ... b) ...") and questions are the book asking, not telling.
_OPTIONS = re.compile(r"(?:^|\s)[a-dA-D]\)\s.*\s[a-dA-D]\)\s")
TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
BLOCKQUOTE = re.compile(r"^\s{0,3}>\s?")  # a quote's marker: the page shows the words, not the '>'
SECTION_NUMBER = re.compile(r"^\s*(?:\d+(?:\.\d+)*\.?|[A-Z]\.)\s+")  # a heading's number: "2.1.1 ", "A. "
TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_MAX_CODE_LINES = 20  # the lines of a code block an answer quotes
_TERMINAL = re.compile(r"[.!?:;)\]`*\"']$")
# An item that ends its sentence: a stop, perhaps inside a closing bracket, quote or mark ("(see below).",
# "**Done.**"). A bare closing bracket does not: "Keep it short (under a few seconds)" is quoted with a stop added.
_STOPPED = re.compile(r"[.!?:;][)\]`*\"']*$")
# A line that opens with emphasis, an image or a link ("**Similarities**", "![RTK Query data in the store](...)"):
# the page's own text, a label or a figure's alt text, not a heading line the chunker writes (its plain text).
_MARKED = re.compile(r"\s*(?:[*_]|!?\[|<)")
# A definition line: a paragraph that opens with a bold term and a colon or dash ("**Depth Maps**:
# Accurate depth ..."). A run of them after a lead-in reads as that lead-in's list.
_DEFINITION = re.compile(r"^\s*(\*\*|__)[^*_\n]{1,60}\1\s*(?::|\s[—–-]\s)")
# A list item that is one link and nothing else ("- [Thunks in Redux: the basics](https://...)"): a pointer to
# another page, not a statement of this one; "- [`compose`](compose.md): combines ..." is a statement.
_BARE_LINK = re.compile(r"^[*_\s\"']*\[[^\]]+\]\([^()\s]*\)[*_\s\"'.,;]*$")


@dataclass(frozen=True, slots=True)
class Unit:
    """One answerable statement; `items` are the list items or table rows a lead-in sentence introduces.

    `start`/`end`: the unit's raw span in the chunk text (for a lead-in, its items included);
    `item_spans`: each item's raw span; `label`: the heading above an item or row in the chunk
    ("Simbody" over "- **Pros**: Highly accurate"), '' when the chunk shows none; `under`: the heading
    any unit sits under in the chunk (the last heading line before it, not a lead-in such as "Pros:"), ''
    when none comes before it: a chunk may hold the end of one short section and the next; `code`: the
    items are the lines of a code block.
    """

    text: str
    kind: str  # "sentence" | "item" | "row" | "code" (a line of a short code block)
    position: int
    items: tuple[str, ...] = ()
    start: int = 0
    end: int = 0
    item_spans: tuple[tuple[int, int], ...] = ()
    label: str = ""
    code: bool = False
    under: str = ""
    lead_end: int = 0  # where the sentence itself ends, when it carries items


@dataclass(frozen=True, slots=True)
class _Mapped:
    """Text with, for each character, its offset in the raw chunk text."""

    s: str
    at: tuple[int, ...]

    def span(self) -> tuple[int, int]:
        return (self.at[0], self.at[-1] + 1) if self.at else (0, 0)


def _sub(pattern: re.Pattern[str], text: _Mapped, group: int | None) -> _Mapped:
    """`pattern.sub` keeping the map: a match becomes its `group` (or one space when None)."""
    out: list[str] = []
    at: list[int] = []
    pos = 0
    for m in pattern.finditer(text.s):
        out.append(text.s[pos:m.start()])
        at.extend(text.at[pos:m.start()])
        if group is None or m.group(group) is None:
            out.append(" ")
            at.append(text.at[m.start()] if m.start() < len(text.at) else (text.at[-1] if text.at else 0))
        else:
            out.append(m.group(group))
            at.extend(text.at[m.start(group):m.end(group)])
        pos = m.end()
    out.append(text.s[pos:])
    at.extend(text.at[pos:])
    return _Mapped("".join(out), tuple(at))


def _squash(text: _Mapped) -> _Mapped:
    """Whitespace runs -> one space, ends stripped (as `" ".join(text.split())`)."""
    out: list[str] = []
    at: list[int] = []
    for m in re.finditer(r"\S+", text.s):
        if out:
            out.append(" ")
            at.append(text.at[m.start() - 1])
        out.append(m.group())
        at.extend(text.at[m.start():m.end()])
    return _Mapped("".join(out), tuple(at))


def _clean_mapped(text: _Mapped) -> _Mapped:
    """`clean_inline`, keeping the map."""
    for pattern, group in CLEAN_RULES:
        text = _sub(pattern, text, group)
    return _squash(text)


def _split_mapped(paragraph: _Mapped) -> list[_Mapped]:
    """The one sentence splitter's sentences (`PROSE`), keeping the map."""
    pieces = [_Mapped(paragraph.s[a:b], paragraph.at[a:b]) for a, b in PROSE.spans(paragraph.s)]
    return [_squash(p) for p in pieces if p.s.strip()]


def _cells(row: str) -> list[str]:
    return [clean_inline(c) for c in row.strip().strip("|").split("|")]


def _row_sentence(header: list[str], row: list[str]) -> str:
    """`| tiny | 39 M | Jetson |` under `| Size | Parameters | Use |` -> "tiny (Parameters: 39 M; Use: Jetson)."."""
    if not row or not any(row):
        return ""
    first, rest = row[0], row[1:]
    pairs = [f"{h}: {v}" if h else v for h, v in zip(header[1:], rest, strict=False) if v]
    if not pairs:
        return first
    lead = f"{header[0]} {first}" if header and header[0] and len(first.split()) <= 2 else first
    return f"{lead} ({'; '.join(pairs)})."


def _is_heading_like(paragraph: str, headings: set[str]) -> bool:
    flat = paragraph.strip().rstrip(":").lower()
    if flat in headings:
        return True
    # A short line with no sentence punctuation, standing alone, is a title rather than a statement.
    return len(paragraph.split()) <= 8 and not _TERMINAL.search(paragraph.strip())


def extract_units(text: str, headings: set[str] | None = None) -> list[Unit]:
    """Split one chunk's text into units in reading order. `headings` (lower-case) are skipped."""
    known = {h.strip().lower() for h in (headings or set()) if h}
    blocks: list[tuple[str, _Mapped]] = []  # (kind, text) with kind in paragraph/item/row
    paragraph: list[_Mapped] = []
    item: list[_Mapped] | None = None
    definition = False  # `item` is a definition line, not a bullet
    header: list[str] = []
    in_fence: str | None = None
    code: list[_Mapped] = []

    def joined(lines: list[_Mapped]) -> _Mapped:
        s, at = lines[0].s, list(lines[0].at)
        for line in lines[1:]:
            s += " " + line.s
            at.append(at[-1] + 1 if at else 0)
            at.extend(line.at)
        return _Mapped(s, tuple(at))

    def flush() -> None:
        nonlocal paragraph, item, definition
        definition = False
        if item is not None:
            blocks.append(("item", joined(item)))
            item = None
        if paragraph:
            blocks.append(("paragraph", joined(paragraph)))
            paragraph = []

    offset = 0
    for raw_line in text.splitlines(keepends=True):
        base = offset
        offset += len(raw_line)
        raw = raw_line.rstrip("\r\n")
        fence = _FENCE.match(raw)
        if in_fence is not None:
            if fence and fence.group(1)[0] == in_fence[0] and len(fence.group(1)) >= len(in_fence):
                in_fence = None
                # A block reads as the lines its lead-in sentence introduces, its first `_MAX_CODE_LINES` when
                # longer (the answer shows them and says the block goes on): how long a block is, or where the
                # chunker cut it, does not decide whether the sentence that introduces it can answer.
                blocks.extend(("code", c) for c in code[:_MAX_CODE_LINES])
                blocks.append(("fence", _Mapped("", ())))
                code = []
            elif raw.strip():
                lead = len(raw) - len(raw.lstrip())
                code.append(_Mapped(raw.strip(), tuple(range(base + lead, base + lead + len(raw.strip())))))
            continue
        if fence:
            flush()
            in_fence = fence.group(1)
            continue
        line = raw.strip()
        lead = len(raw) - len(raw.lstrip())
        mapped = _Mapped(line, tuple(range(base + lead, base + lead + len(line))))
        if not line or _RULE.match(line):
            flush()
            header = []
            continue
        if MD_HEADING.match(raw):
            flush()
            blocks.append(("heading", _Mapped(line.lstrip("#").strip(), ())))
            continue
        if _ADMONITION_LABEL.match(line):
            flush()
            continue
        if TABLE_ROW.match(line):
            flush()
            if TABLE_SEPARATOR.match(line):
                continue
            cells = _cells(line)
            if not header:
                header = cells
            else:
                sentence = _row_sentence(header, cells)
                blocks.append(("row", _Mapped(sentence, (mapped.at[0],) * max(0, len(sentence) - 1)
                                              + ((mapped.at[-1],) if sentence else ()))))
            continue
        header = []
        quote = BLOCKQUOTE.match(raw)
        if quote:
            body = raw[quote.end():].strip()
            if not body:
                flush()
                continue
            if item is not None:
                flush()
            if not paragraph and blocks and blocks[-1][0] == "paragraph" and blocks[-1][1].s.endswith(":"):
                paragraph = [blocks.pop()[1]]  # "The ZMP criterion states:" and the statement it quotes
            begin = base + len(raw) - len(raw[quote.end():].lstrip())
            paragraph.append(_Mapped(body, tuple(range(begin, begin + len(body)))))
            continue
        bullet = LIST_ITEM.match(raw)
        if bullet:
            flush()
            rest = raw[bullet.end():]
            skip = len(rest) - len(rest.lstrip())
            body = rest.strip()
            item = [_Mapped(body, tuple(range(base + bullet.end() + skip, base + bullet.end() + skip + len(body))))]
            continue
        if item is not None and definition and _DEFINITION.match(line):
            flush()  # the next definition line
        if item is not None and (raw.startswith((" ", "\t")) or definition):
            item.append(mapped)  # an indented continuation, or a definition line wrapped in the source
            continue
        if item is not None:
            flush()
        if not paragraph and _DEFINITION.match(line):
            item = [mapped]  # a definition line reads as an item
            definition = True
            continue
        paragraph.append(mapped)
    flush()

    units: list[Unit] = []
    label = ""  # the last heading read: what the items and rows after it are about
    under = ""  # the last heading line read, a lead-in's "Pros:" aside: the section the units after it are in
    for number, (kind, block) in enumerate(blocks):
        if kind == "fence":
            continue
        if kind == "heading":
            label = under = clean_inline(block.s)
            continue
        if kind == "code":
            units.append(Unit(block.s, "code", len(units), start=block.span()[0], end=block.span()[1],
                              under=under))
            continue
        mapped = block if kind == "row" else _clean_mapped(block)
        cleaned = mapped.s if kind != "row" else " ".join(block.s.split())
        heading_like = kind == "paragraph" and bool(cleaned) and _is_heading_like(cleaned, known)
        if heading_like:
            label = cleaned.rstrip(":")  # "Simbody", however short, names the items under it
            under = under if cleaned.endswith(":") or _MARKED.match(block.s) else cleaned
        if (kind == "paragraph" and cleaned.endswith(":") and number + 1 < len(blocks)
                and blocks[number + 1][0] == "code"):
            # A label over a command ("Yarn:" heading a tab's code): however short, it introduces it.
            start, end = _widen(text, *mapped.span())
            units.append(Unit(cleaned, "sentence", len(units), start=start, end=end, under=under))
            continue
        if not cleaned or (len(cleaned) < 12 and not heading_like) or _OPTIONS.search(cleaned):
            continue
        start, end = _widen(text, *mapped.span())
        if kind == "row":
            units.append(Unit(cleaned, "row", len(units), start=start, end=end, label=label, under=under))
        elif kind == "item":
            if cleaned.rstrip(":").lower() in known or _BARE_LINK.match(block.s):
                continue
            units.append(Unit(cleaned if _STOPPED.search(cleaned) else cleaned + ".", "item", len(units),
                              start=start, end=end, label=label, under=under))
        else:
            if heading_like:
                following = blocks[number + 1] if number + 1 < len(blocks) else None
                # Not over a list of bare links ("**Articles**" over links to read): it would introduce nothing.
                if following and following[0] == "item" and not _BARE_LINK.match(following[1].s) \
                        and not cleaned.endswith("?"):
                    # A list straight under its heading: the heading is the list's lead-in.
                    # Without its number: "Characteristics of Topic Communication:", not "2.1.1 ...".
                    lead_in = SECTION_NUMBER.sub("", cleaned)
                    lead_in = lead_in if lead_in.endswith(":") else lead_in + ":"
                    units.append(Unit(lead_in, "sentence", len(units), start=start, end=end, under=under))
                continue
            sentences = [m for m in _split_mapped(mapped) if not m.s.endswith("?")]
            if sentences and number and blocks[number - 1][0] == "fence" and sentences[0].s[:1].islower():
                # "...the field as a string enum:", a code block, then "instead of an `isLoading` boolean.": the
                # sentence the code interrupted ends here, and this tail alone says nothing.
                sentences = sentences[1:]
            for m in sentences:
                a, b = _widen(text, *m.span())
                units.append(Unit(m.s, "sentence", len(units), start=a, end=b, under=under))
    return _attach_lists(units)


_OPENERS = "*_`["
_CLOSE_LINK = re.compile(r"\]\([^()\s]*\)")


def _widen(raw: str, start: int, end: int) -> tuple[int, int]:
    """Grow a span over the markup around its first and last words (`**`, `` ` ``, a link's `](url)`)."""
    while start > 0 and raw[start - 1] in _OPENERS:
        start -= 1
    while True:
        if end < len(raw) and raw[end] in "*_`":
            end += 1
            continue
        link = _CLOSE_LINK.match(raw, end)
        if link and "[" in raw[start:end]:
            end = link.end()
            continue
        return start, end


def _attach_lists(units: list[Unit]) -> list[Unit]:
    """A sentence ending in ':' introduces the items, rows or command lines after it (one run of one kind); it
    carries them along. So does a sentence right before a code block, whatever its stop ("You can combine this
    application with the routing. ```Mount(...)```"): the block is its example. Code lines no sentence carries
    are dropped: they are not statements."""
    out: list[Unit] = []
    for i, unit in enumerate(units):
        before_code = i + 1 < len(units) and units[i + 1].kind == "code"
        if unit.kind == "sentence" and (unit.text.endswith(":") or before_code):
            following: list[Unit] = []
            for nxt in units[i + 1:]:
                # One run of one kind: a code block after a list is the page's example, not more items.
                if nxt.kind == "sentence" or (following and nxt.kind != following[0].kind):
                    break
                following.append(nxt)
            if following:
                unit = Unit(unit.text, unit.kind, unit.position, tuple(f.text for f in following),
                            start=unit.start, end=following[-1].end,
                            item_spans=tuple((f.start, f.end) for f in following),
                            code=all(f.kind == "code" for f in following), under=unit.under, lead_end=unit.end)
        out.append(unit)
    return [u for u in out if u.kind != "code"]
