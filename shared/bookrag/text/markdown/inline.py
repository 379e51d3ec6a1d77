"""Inline Markdown (links, images, emphasis, tags) reduced to the text a reader sees.

Two readings, because the two callers keep different things: a heading becomes an anchor and a
breadcrumb, so every formatting character goes (`plain_inline`, as github-slugger sees it); a
sentence is quoted back to the reader, so `*` and `_` inside words stay and whitespace is collapsed
(`clean_inline`). Both keep a link's or an image's text and drop its target.
"""

from __future__ import annotations

import re
from functools import partial

__all__ = ["CLEAN_RULES", "clean_inline", "plain_inline", "without_marks"]

_IMAGE = re.compile(r"!\[([^\[\]]*)\]\([^()]*\)")
_LINK = re.compile(r"\[([^\[\]]*)\]\([^()]*\)")
# A reference link ("a lightweight [ASGI][asgi] framework", MkDocs' usual form) shows its text. Not an index after a
# name, a bracket or a call ("d[i][j]", `extensions["a"]["b"]`): code, not a link.
_REF_LINK = re.compile(r"(?<![\w\])`])\[([^\[\]`]*)\]\[[^\[\]`\"']*\]")
_SIMPLE_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_EDGE_UNDERSCORES = re.compile(r"(?<!\w)_+(?=\w)|(?<=\w)_+(?!\w)")
_EMPHASIS = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
# A tag, unless it is inline code: "a realistic `<inertial>` block" shows the tag it names.
_BOUNDED_TAG = re.compile(r"(`[^`\n]+`)|</?[A-Za-z][^<>]{0,200}>")
# A `**` left once pairs are unwrapped: a chunk that opens inside a bold passage ("... it manages.** This
# allows ..."); inline code keeps its own ("`x ** 2`").
_STRAY_STRONG = re.compile(r"(`[^`\n]+`)|\*\*")
# Emphasis and code marks at a word's edge, and `**`/`__` anywhere: what a rendered page does not show.
_MARKS = re.compile(r"\*\*|__|(?<!\w)[*_`]|[*_`](?!\w)")


def plain_inline(text: str) -> str:
    """Markdown inline formatting removed, text kept (links, images' alt, code, emphasis)."""
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _REF_LINK.sub(r"\1", text)
    text = _SIMPLE_TAG.sub("", text)
    text = text.replace("`", "").replace("*", "").replace("~~", "")
    return _EDGE_UNDERSCORES.sub("", text)


# `clean_inline`'s rules, in order: (pattern, group kept; None, or a group that did not take part in the
# match: replaced by one space). The extractive answerer applies the same rules while keeping offsets
# into the raw text (`text.sentences`).
CLEAN_RULES: tuple[tuple[re.Pattern[str], int | None], ...] = (
    (_IMAGE, 1), (_LINK, 1), (_REF_LINK, 1), (_BOUNDED_TAG, 1), (_EMPHASIS, 2), (_STRAY_STRONG, 1),
)


def _kept(match: re.Match[str], group: int | None) -> str:
    kept = match.group(group) if group is not None else None
    return " " if kept is None else kept


def clean_inline(text: str) -> str:
    """Links and images as their text, tags as a space, `**strong**` unwrapped, whitespace collapsed."""
    for pattern, group in CLEAN_RULES:
        text = pattern.sub(partial(_kept, group=group), text)
    return " ".join(text.split())


def without_marks(text: str) -> str:
    """`text` without the emphasis and code marks a page renders away ("**Bold** `code`" -> "Bold code"): the
    words a browser's find-in-page sees, for a text fragment to match."""
    return _MARKS.sub("", text)
