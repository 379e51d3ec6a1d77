"""ATX headings: what they say, and the anchor Docusaurus gives them.

A chunk's source URL ends in its section's anchor, so the anchor must be the id Docusaurus renders
(github-slugger over the heading's plain text, an explicit `{#id}` winning, repeats numbered per
page); a wrong one still loads the page but lands the reader at the top. Only ATX (`#`) headings are
read: setext headings are rare in Docusaurus books and ambiguous with tables and front matter.
"""

from __future__ import annotations

import re

from bookrag.text.markdown.blocks import iter_outside_fences
from bookrag.text.markdown.inline import plain_inline
from bookrag.text.markdown.marks import HEADING_TAG, PARTIAL_END, PARTIAL_START

__all__ = ["Slugger", "first_h1", "heading_anchor", "heading_texts", "parse_heading"]

# Headings end up in every chunk's payload; a hostile 1 MB heading must not.
_MAX_HEADING_CHARS = 200

_SLUG_DROP = re.compile(r"[^\w\- ]")
_CUSTOM_ID = re.compile(r"[^{}]+")


def _split_custom_id(text: str) -> tuple[str, str | None]:
    """`Foo {#bar}` -> ("Foo", "bar") (Docusaurus explicit heading id); string ops keep it linear."""
    stripped = text.rstrip()
    if not stripped.endswith("}"):
        return text, None
    at = stripped.rfind("{#")
    if at == -1:
        return text, None
    ident = stripped[at + 2 : -1].strip()
    if not ident or not _CUSTOM_ID.fullmatch(ident):
        return text, None
    return stripped[:at].rstrip(), ident


def heading_anchor(text: str) -> str:
    """The id Docusaurus gives a heading (github-slugger), before de-duplication.

    An explicit `{#custom-id}` wins. Otherwise: formatting removed (links and code keep their text; a
    tag's mark, where `clean_body` removed one, is dropped after the trim, so "Props <Badge/>" keeps the
    space before the tag and gives "props-", as Docusaurus does),
    lowercased, every character but letters, digits, `_`, `-` and spaces dropped, and each space
    turned into `-` (not collapsed: "A & B" -> "a--b", as on GitHub). `chunk_document` adds the
    "-1", "-2" suffixes for repeated headings within a doc.
    """
    body, custom = _split_custom_id(text)
    if custom is not None:
        return custom
    slug = _SLUG_DROP.sub("", plain_inline(body.strip()).lower())
    return slug.replace(" ", "-")


class Slugger:
    """Per-document de-duplication exactly as github-slugger does it."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def slug(self, base: str) -> str:
        result = base
        while result in self._seen:
            self._seen[base] += 1
            result = f"{base}-{self._seen[base]}"
        self._seen[result] = 0
        return result


def parse_heading(line: str) -> tuple[int, str] | None:
    """(level, raw text) of an ATX heading line, else None. Up to 3 spaces of indentation."""
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3 or not stripped.startswith("#"):
        return None
    level = len(stripped) - len(stripped.lstrip("#"))
    rest = stripped[level:]
    if level > 6 or (rest and rest[0] not in " \t"):
        return None
    rest = rest.strip()
    closing = rest.rstrip("#")  # optional closing sequence: "## Foo ##"
    if not closing:
        rest = ""
    elif closing != rest and closing[-1] in " \t":
        rest = closing.rstrip()
    return level, rest


def heading_texts(raw: str) -> tuple[str, str, bool]:
    """(display text, anchor, explicit id?) of a heading's raw text; absurd lengths are truncated."""
    body, custom = _split_custom_id(raw)
    body = body[: _MAX_HEADING_CHARS * 4]
    display = " ".join(plain_inline(body).replace(HEADING_TAG, " ").split())
    if len(display) > _MAX_HEADING_CHARS:
        display = display[: _MAX_HEADING_CHARS - 1].rstrip() + "…"
    anchor = custom if custom is not None else heading_anchor(body)
    return display, anchor[: _MAX_HEADING_CHARS * 2], custom is not None


def first_h1(body: str) -> str | None:
    """Display text of the first non-empty H1 outside fenced code (Docusaurus' title fallback).

    Only the page's own text titles it: Docusaurus reads the title from the page's source, so an H1 a
    partial brings in (between the partial marks) is rendered but never names the page."""
    depth = 0
    for line in iter_outside_fences(body.split("\n")):
        if line in (PARTIAL_START, PARTIAL_END):
            depth = depth + 1 if line == PARTIAL_START else max(0, depth - 1)
            continue
        if depth:
            continue
        heading = parse_heading(line)
        if heading is not None and heading[0] == 1:
            display = heading_texts(heading[1])[0]
            if display:
                return display
    return None
