"""Chunk text -> answerable units: prose sentences, list items, table rows read as sentences.

Code blocks, headings, admonition labels, table separators and heading-like lines are skipped: an
extractive answer quotes the book's statements, not its formatting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Inline cleanup (shared with heading anchors) and the sentence splitter (shared with the chunker and
# the citation check) live in their own modules; both stay importable from here under their old names.
from bookrag.text.markdown.inline import clean_inline
from bookrag.text.sentence_splitter import split_sentences

_FENCE = re.compile(r"^\s*(```+|~~~+)")
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_ADMONITION_LABEL = re.compile(
    r"^(Note|Tip|Info|Warning|Danger|Caution|Important|Success|Secondary|Example)\s*:[^.!?]*$", re.IGNORECASE)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
# Quiz options ("a) ... b) ...") and questions are the book asking, not telling.
_OPTIONS = re.compile(r"(?:^|\s)[a-dA-D]\)\s.*\s[a-dA-D]\)\s")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_TERMINAL = re.compile(r"[.!?:;)\]`*\"']$")


@dataclass(frozen=True, slots=True)
class Unit:
    """One answerable statement; `items` are the list items or table rows a lead-in sentence introduces."""

    text: str
    kind: str  # "sentence" | "item" | "row"
    position: int
    items: tuple[str, ...] = ()


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
    blocks: list[tuple[str, str]] = []  # (kind, text) with kind in paragraph/item/row/header
    paragraph: list[str] = []
    item: list[str] | None = None
    header: list[str] = []
    in_fence: str | None = None

    def flush() -> None:
        nonlocal paragraph, item
        if item is not None:
            blocks.append(("item", " ".join(item)))
            item = None
        if paragraph:
            blocks.append(("paragraph", " ".join(paragraph)))
            paragraph = []

    for raw in text.splitlines():
        fence = _FENCE.match(raw)
        if in_fence is not None:
            if fence and fence.group(1)[0] == in_fence[0] and len(fence.group(1)) >= len(in_fence):
                in_fence = None
            continue
        if fence:
            flush()
            in_fence = fence.group(1)
            continue
        line = raw.strip()
        if not line or _RULE.match(line):
            flush()
            header = []
            continue
        if _MD_HEADING.match(raw) or _ADMONITION_LABEL.match(line):
            flush()
            continue
        if _TABLE_ROW.match(line):
            flush()
            if _TABLE_SEPARATOR.match(line):
                continue
            cells = _cells(line)
            if not header:
                header = cells
            else:
                blocks.append(("row", _row_sentence(header, cells)))
            continue
        header = []
        if _LIST_ITEM.match(raw):
            flush()
            item = [_LIST_ITEM.sub("", raw, count=1).strip()]
            continue
        if item is not None and (raw.startswith((" ", "\t"))):
            item.append(line)
            continue
        if item is not None:
            flush()
        paragraph.append(line)
    flush()

    units: list[Unit] = []
    for kind, block in blocks:
        cleaned = clean_inline(block)
        if not cleaned or len(cleaned) < 12 or _OPTIONS.search(cleaned):
            continue
        if kind == "row":
            units.append(Unit(cleaned, "row", len(units)))
        elif kind == "item":
            if cleaned.rstrip(":").lower() in known:
                continue
            units.append(Unit(cleaned if _TERMINAL.search(cleaned) else cleaned + ".", "item", len(units)))
        else:
            if _is_heading_like(cleaned, known):
                continue
            units.extend(Unit(s, "sentence", len(units) + i) for i, s in enumerate(split_sentences(cleaned))
                         if not s.endswith("?"))
    return _attach_lists(units)


def _attach_lists(units: list[Unit]) -> list[Unit]:
    """A sentence ending in ':' introduces the items or rows after it; it carries them along."""
    out: list[Unit] = []
    for i, unit in enumerate(units):
        if unit.kind == "sentence" and unit.text.endswith(":"):
            following: list[str] = []
            for nxt in units[i + 1:]:
                if nxt.kind == "sentence":
                    break
                following.append(nxt.text)
            if following:
                unit = Unit(unit.text, unit.kind, unit.position, tuple(following))
        out.append(unit)
    return out
