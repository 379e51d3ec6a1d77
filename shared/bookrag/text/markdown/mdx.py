"""MDX body -> readable Markdown: the page's machinery removed, every piece of its text kept.

An MDX page is partly a program: `import`/`export` statements, JSX components and comments are code
the page runs, not text a reader sees, and left in they would be embedded and quoted as if the book
said them. What a component wraps (a `<TabItem>`'s content, an admonition's body) is text and stays.
Fenced code is copied verbatim, and inline code spans are shielded, so `<Tabs>` written as code
survives.

The input is whatever sits in the book's repository, so every step is a linear scan: no regex here
can be made quadratic by a 1 MB line, an unclosed comment or thousands of unmatched backticks.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_left

from bookrag.text.markdown.blocks import closes_fence, open_fence
from bookrag.text.markdown.esm import split_esm
from bookrag.text.markdown.headings import parse_heading
from bookrag.text.markdown.jsx import INLINE_TAGS, tag_text
from bookrag.text.markdown.marks import CODE_CLOSE as _PH_CLOSE
from bookrag.text.markdown.marks import CODE_OPEN as _PH_OPEN
from bookrag.text.markdown.marks import GAP as _GAP
from bookrag.text.markdown.marks import HEADING_TAG
from bookrag.text.markdown.marks import JOIN as _JOIN

__all__ = ["clean_body"]

# Longest span a JSX/HTML tag may cover; a longer "tag" is more likely a stray `<` in prose.
_MAX_TAG_CHARS = 4096
_JSX_COMMENT_OPEN = re.compile(r"\{[ \t\n]*/\*")
_JSX_COMMENT_CLOSE = re.compile(r"[ \t\n]*\}")
_AUTOLINK = re.compile(r"<((?:https?|ftp)://[^\s<>]*|mailto:[^\s<>]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)>")
# An opening, closing or self-closing JSX/HTML tag, or a fragment. No part of it may contain `<`, so
# a failed attempt never scans past the next `<` and stripping stays linear. Attribute values may be
# quoted strings or `{...}` expressions nested once (style={{...}}), which may themselves hold `>`.
_TAG = re.compile(
    r"""<(?:
        /(?P<close>[A-Za-z][\w.:-]*)\s*
      | (?P<open>[A-Za-z][\w.:-]*)
        (?:\s(?:[^<>"'{}]|"[^"<]*"|'[^'<]*'|\{(?:[^{}<]|\{[^{}<]*\})*\})*)?/?
      | /?
    )>""",
    re.VERBOSE,
)
# `<summary>` heads the hidden text of a `<details>`: it stays as a label line. Bounded, tag-free text.
_SUMMARY = re.compile(r"<summary\b[^<>]{0,200}>[ \t]*([^<\n]{1,500}?)[ \t]*</summary\s*>")
# A link reference definition (`[//]: # 'comment'`, `[x]: <> (note)`): never rendered, the usual comment.
_LINK_DEFINITION = re.compile(
    r""" {0,3}\[[^\]\n]{1,999}\]:[ \t]*(?:<[^<>\n]*>|\S+)"""
    r"""(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*"""
)
# `## Heading {/* #custom-id */}`: the MDX-safe way Docusaurus writes an explicit heading id.
_COMMENT_ID = re.compile(r"\{/\*[ \t]*#([^\s*{}]+)[ \t]*\*/\}[ \t]*$")
# Docusaurus's `:::note Title` and MkDocs' `!!! note "Title"` (`???` collapsible): the same box in two syntaxes.
_ADMONITION = re.compile(r"([ \t>]*)(?::{3,}|!!!|\?{3}\+?)[ \t]*([A-Za-z][\w-]*)?(.*)$")
_OPENERS = (":::", "!!!", "???")
_MKDOCS_INDENT = 4  # MkDocs indents a box's content by four spaces
_ADMONITION_TITLE_ATTR = re.compile(r"""title=(["'])([^"'\n]*)\1""")
_PLACEHOLDER = re.compile(_PH_OPEN + r"(\d+)" + _PH_CLOSE)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def clean_body(body: str) -> str:
    """Strip MDX machinery outside fenced code; code is copied verbatim."""
    lines = body.split("\n")
    out: list[str] = []
    prose: list[str] = []
    i = 0
    while i < len(lines):
        fence = open_fence(lines[i])
        if fence is None:
            prose.append(lines[i])
            i += 1
            continue
        out.extend(_clean_prose(prose))
        prose = []
        out.append(lines[i])
        i += 1
        while i < len(lines):
            out.append(lines[i])
            i += 1
            if closes_fence(out[-1], fence):
                break
    out.extend(_clean_prose(prose))
    return "\n".join(out).strip("\n")


def _drop_link_definitions(lines: list[str]) -> list[str]:
    """Link reference definitions go: the page never shows them, and `[//]: # 'x'` is a comment."""
    out: list[str] = []
    may_start = True  # a definition cannot interrupt a paragraph, but may follow another definition
    for line in lines:
        if may_start and line.lstrip(" ").startswith("[") and _LINK_DEFINITION.fullmatch(line):
            continue
        out.append(line)
        may_start = not line.strip()
    return out


def _heading_lines(text: str) -> str:
    """Headings read as Docusaurus reads them: `{/* #id */}` is the explicit id, and a tag inside
    contributes only its children's text (no space, no props)."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not line.lstrip(" ").startswith("#") or parse_heading(line) is None:
            continue
        line = _COMMENT_ID.sub(r"{#\1}", line)
        lines[i] = _TAG.sub(lambda m: HEADING_TAG if m.end() - m.start() <= _MAX_TAG_CHARS else m.group(0), line)
    return "\n".join(lines)


def _protect_code_spans(text: str) -> tuple[str, list[str]]:
    """Swap inline code spans for placeholders (CommonMark pairing of equal-length backtick runs).

    Each run is paired with the next run of the same length unless a blank line lies between; a
    per-length cursor keeps this linear even with thousands of unmatched runs.
    """
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", text)]
    if len(runs) < 2:
        return text, []
    blanks = [m.start() for m in _BLANK_LINE.finditer(text)]
    by_len: dict[int, list[int]] = {}
    for idx, (s, e) in enumerate(runs):
        by_len.setdefault(e - s, []).append(idx)
    cursor: dict[int, int] = dict.fromkeys(by_len, 0)
    spans: list[str] = []
    out: list[str] = []
    pos = 0
    i = 0
    while i < len(runs):
        s, e = runs[i]
        n = e - s
        same = by_len[n]
        c = cursor[n]
        while c < len(same) and same[c] <= i:
            c += 1
        cursor[n] = c
        if c < len(same):
            j = same[c]
            close_start, close_end = runs[j]
            k = bisect_left(blanks, e)
            if k == len(blanks) or blanks[k] >= close_start:
                out.append(text[pos:s])
                out.append(f"{_PH_OPEN}{len(spans)}{_PH_CLOSE}")
                spans.append(text[s:close_end])
                pos = close_end
                i = j + 1
                continue
        i += 1
    out.append(text[pos:])
    return "".join(out), spans


def _remove_jsx_comments(text: str) -> str:
    out: list[str] = []
    pos = 0
    known_end = -1  # first "*/" at or after the last position searched; reused so this stays linear
    for m in _JSX_COMMENT_OPEN.finditer(text):
        if m.start() < pos:
            continue
        if known_end < m.end():
            known_end = text.find("*/", m.end())
            if known_end == -1:
                break
        close = _JSX_COMMENT_CLOSE.match(text, known_end + 2)
        if close is None:
            continue
        out.append(text[pos : m.start()])
        pos = close.end()
    out.append(text[pos:])
    return "".join(out)


def _remove_html_comments(text: str) -> str:
    out: list[str] = []
    pos = 0
    while True:
        start = text.find("<!--", pos)
        if start == -1:
            break
        end = text.find("-->", start + 4)
        if end == -1:
            break  # unclosed: leave the rest as text rather than silently dropping it
        out.append(text[pos:start])
        pos = end + 3
    out.append(text[pos:])
    return "".join(out)


def _tag_replacement(m: re.Match[str]) -> str:
    if m.end() - m.start() > _MAX_TAG_CHARS:
        return m.group(0)
    name = m.group("open") or m.group("close") or ""
    shown = tag_text(m.group(0), name, closing=m.group("close") is not None)
    if shown:
        return f"{_GAP}{shown}{_GAP}"
    return _JOIN if name.lower() in INLINE_TAGS else _GAP


def _summary_label(m: re.Match[str]) -> str:
    text = m.group(1).strip()
    return f"{_GAP}{text}{'' if text[-1:] in '.:?!' else ':'}{_GAP}"


def _admonition_line(line: str) -> str | None:
    """`:::tip[Title]` / `:::tip Title` -> "Tip: Title"; a bare closing `:::` -> None (dropped)."""
    m = _ADMONITION.match(line)
    if m is None:
        return line
    indent, kind, rest = m.group(1), m.group(2), m.group(3).strip()
    if not kind:
        return indent + rest if rest else None
    title = ""
    if rest.startswith("[") and "]" in rest:
        title = rest[1 : rest.rfind("]")]
    elif rest:
        attr = _ADMONITION_TITLE_ATTR.search(rest)
        title = attr.group(2) if attr else re.sub(r"\{[^{}]*\}", "", rest)
    title = title.strip().strip("\"'").strip()
    label = kind[:1].upper() + kind[1:].lower()
    return f"{indent}{label}: {title}" if title else f"{indent}{label}:"


def _clean_prose(lines: list[str]) -> list[str]:
    if not lines:
        return []
    kept, _ = split_esm(lines)
    text = "\n".join(_drop_link_definitions(kept))
    text, spans = _protect_code_spans(text)
    text = _heading_lines(text)
    text = _remove_jsx_comments(text)
    text = _remove_html_comments(text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _SUMMARY.sub(_summary_label, text)
    text = _TAG.sub(_tag_replacement, text)
    text = html.unescape(text)
    out: list[str] = []
    boxed = False  # inside a MkDocs box, whose content is indented: read as the paragraphs it is
    for raw in text.split("\n"):
        line = raw
        if boxed and line.strip() and not line.startswith((" " * _MKDOCS_INDENT, "\t")):
            boxed = False
        if boxed:
            line = line[1:] if line.startswith("\t") else line[_MKDOCS_INDENT:]
        if _GAP in line or _JOIN in line:
            if line.lstrip()[:1] in (_GAP, _JOIN):
                line = line.lstrip(" \t" + _GAP + _JOIN)  # JSX indentation means nothing
            line = line.replace(_GAP, " ").replace(_JOIN, "")
        line = line.rstrip()
        opener = line.lstrip(" \t>")
        if opener.startswith(_OPENERS):
            boxed = not opener.startswith(":::")
            replaced = _admonition_line(line)
            if replaced is None:
                continue
            line = replaced
        if not line and (not out or not out[-1]):
            continue  # collapse runs of blank lines
        out.append(line)
    if spans:
        restored = _PLACEHOLDER.sub(
            lambda m: spans[int(m.group(1))] if int(m.group(1)) < len(spans) else "", "\n".join(out)
        )
        out = restored.split("\n")
    return out
