"""Docusaurus front matter, read by a tiny `key: value` parser.

PyYAML is only a dev dependency, and a book's front matter needs scalars only (title, slug, id,
sidebar_position, description): lists and nested mappings are recognised just well enough to be
skipped. The input is whatever sits in the book's repository, so the parser is a single forward pass.
"""

from __future__ import annotations

import math
import re

__all__ = ["non_blank", "split_front_matter", "to_float"]

_FM_KEY = re.compile(r"([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(.*))?$")
_FM_BLOCK_SCALAR = re.compile(r"[|>][1-9+-]{0,2}(?:[ \t]+#.*)?")
_FM_NESTED = re.compile(r"-(?:[ \t]|$)|[\w-]+[ \t]*:(?:[ \t]|$)")
_FM_NULLS = frozenset({"", "~", "null", "Null", "NULL"})


def split_front_matter(text: str) -> tuple[dict[str, str | None], str]:
    """Return (front matter, rest). Only a `---` first line opens it, as in Docusaurus."""
    first_nl = text.find("\n")
    if first_nl == -1 or text[:first_nl].rstrip(" \t") != "---":
        return {}, text
    pos = first_nl + 1
    while pos <= len(text):
        nl = text.find("\n", pos)
        end = len(text) if nl == -1 else nl
        if text[pos:end].rstrip(" \t") == "---":
            return _parse_front_matter(text[first_nl + 1 : pos]), text[end + 1 :]
        if nl == -1:
            break
        pos = nl + 1
    # Never closed: then it was a thematic break, not front matter.
    return {}, text


def _parse_front_matter(block: str) -> dict[str, str | None]:
    """Top-level `key: value` scalars; lists and nested mappings are read as None."""
    lines = block.split("\n")
    out: dict[str, str | None] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line[0] in " \t-#":
            continue  # blank, comment, or part of a value we do not read
        m = _FM_KEY.match(line.rstrip())
        if m is None:
            continue
        cont: list[str] = []
        while i < len(lines) and (not lines[i].strip() or lines[i][0] in " \t"):
            cont.append(lines[i])
            i += 1
        out[m.group(1)] = _fm_value((m.group(2) or "").strip(), cont)
    return out


def _fm_value(raw: str, cont: list[str]) -> str | None:
    filled = [c for c in cont if c.strip()]
    if _FM_BLOCK_SCALAR.fullmatch(raw):
        if not filled:
            return None
        indent = min(len(c) - len(c.lstrip()) for c in filled)
        body = [c[indent:].rstrip() for c in cont]
        while body and not body[-1]:
            body.pop()
        text = "\n".join(body)
        if raw.startswith(">"):  # folded: lines join with spaces, blank lines stay line breaks
            text = re.sub(r"(?<!\n)\n(?!\n)", " ", text)
        return text.strip() or None
    if not raw:
        if not filled or any(_FM_NESTED.match(c.strip()) for c in filled):
            return None  # a nested mapping or a list
        raw = " ".join(c.strip() for c in filled)
        filled = []
    if raw[0] in "[{":
        return None  # flow list / mapping
    if filled:  # a scalar folded over indented continuation lines
        raw = raw + " " + " ".join(c.strip() for c in filled)
    if raw[0] in "\"'":
        return _unquote(raw)
    hash_at = raw.find(" #")
    if hash_at != -1:
        raw = raw[:hash_at].rstrip()
    return None if raw in _FM_NULLS else raw


_DQ_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "/": "/", " ": " "}


def _unquote(raw: str) -> str:
    """A YAML single- or double-quoted scalar; an unterminated one runs to the end of the value."""
    quote = raw[0]
    out: list[str] = []
    i = 1
    while i < len(raw):
        ch = raw[i]
        if ch == quote:
            if quote == "'" and raw.startswith("''", i):
                out.append("'")
                i += 2
                continue
            break
        if quote == '"' and ch == "\\" and i + 1 < len(raw):
            nxt = raw[i + 1]
            if nxt == "u" and re.fullmatch(r"[0-9A-Fa-f]{4}", raw[i + 2 : i + 6]):
                out.append(chr(int(raw[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append(_DQ_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def to_float(value: str | None) -> float | None:
    """A front matter number (`sidebar_position: 2.5`); anything unreadable or infinite is None."""
    if value is None:
        return None
    try:
        number = float(value.replace("_", ""))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def non_blank(value: str | None) -> str | None:
    """A front matter string stripped, or None when nothing is left (`title: "  "` sets no title)."""
    if value is None:
        return None
    value = value.strip()
    return value or None
