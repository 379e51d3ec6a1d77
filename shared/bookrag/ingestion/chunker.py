"""Docusaurus Markdown/MDX parsing and heading-aware chunking.

`parse_document` turns one source file into a `ParsedDocument`: front matter read by a tiny
`key: value` parser (PyYAML is only a dev dependency, and a book's front matter needs scalars only),
the route Docusaurus serves the page at, and a body with the MDX machinery removed (imports, exports,
JSX/HTML tags, comments) but every piece of readable text kept.

`chunk_document` splits that body at ATX headings and packs each section's blocks (paragraphs, lists,
tables, fenced code) into chunks of at most `max_tokens`. A code block is never cut into an invalid
fence: each piece is re-opened and re-closed with the block's fence. Consecutive prose chunks of a
section share a few whole trailing sentences, and near-empty sections are folded into a neighbour.

The input is whatever sits in the book's repository, so everything here is iterative (no recursion
whose depth the input controls) and every regular expression is written so that a 1 MB line, thousands
of headings or an unclosed fence cannot make it quadratic.
"""

from __future__ import annotations

import html
import math
import posixpath
import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from bookrag.errors import DocumentError
from bookrag.text.sentence_splitter import SentenceSplitter
from bookrag.text.tokens import approx_token_count

__all__ = [
    "ChunkDraft",
    "ParsedDocument",
    "approx_token_count",
    "chunk_document",
    "heading_anchor",
    "parse_document",
]


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    """One Docusaurus doc, front matter read and MDX machinery removed from `body`."""

    rel_path: str
    title: str
    slug: str | None
    sidebar_position: float | None
    route: str
    body: str
    description: str | None = None


@dataclass(frozen=True, slots=True)
class ChunkDraft:
    """A chunk before it is embedded: its text and where in the doc it comes from."""

    text: str
    heading_path: tuple[str, ...]
    section_heading: str
    anchor: str
    token_count: int


# --- tuning -------------------------------------------------------------------------------------

# A section smaller than this (heading line included) is folded into a neighbour, so a heading that
# is immediately followed by a subheading does not become a chunk of its own.
_TINY_SECTION_TOKENS = 25
# The default counter (and a wordpiece tokenizer, which maps a >100-char word to one [UNK]) can see a
# huge run of characters as a single token, so chunks are also capped in characters.
_CHARS_PER_TOKEN_CAP = 16
# Headings end up in every chunk's payload; a hostile 1 MB heading must not.
_MAX_HEADING_CHARS = 200
# Longest span a JSX/HTML tag may cover; a longer "tag" is more likely a stray `<` in prose.
_MAX_TAG_CHARS = 4096
# ESM statements we look through; beyond this an unbalanced `export` is treated as ending early.
_MAX_ESM_LINES = 500
_MAX_ESM_LINE_CHARS = 2000

_SEP = "\n\n"  # between blocks of a chunk

# Unit kinds. Only PROSE is overlapped: repeating code or table rows adds noise, not context.
_HEADING = "heading"
_PROSE = "prose"
_LIST = "list"
_TABLE = "table"
_CODE = "code"
_OVERLAP = "overlap"

# Inline code spans are swapped for these while tags and comments are stripped, so `<Tabs>` written
# as code survives. Private-use characters; parse_document removes any the source itself contains.
_PH_OPEN = "\ue000"
_PH_CLOSE = "\ue001"
# Where a tag was removed: a block tag (div, p, TabItem...) becomes a space, a phrasing tag (em, a...)
# nothing. Marked first so a line that only lost its leading tags can also lose the JSX indentation.
_GAP = "\ue002"
_JOIN = "\ue003"
_PRIVATE_MARKS = str.maketrans("", "", _PH_OPEN + _PH_CLOSE + _GAP + _JOIN)


# --- front matter -------------------------------------------------------------------------------

_FM_KEY = re.compile(r"([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(.*))?$")
_FM_BLOCK_SCALAR = re.compile(r"[|>][1-9+-]{0,2}(?:[ \t]+#.*)?")
_FM_NESTED = re.compile(r"-(?:[ \t]|$)|[\w-]+[ \t]*:(?:[ \t]|$)")
_FM_NULLS = frozenset({"", "~", "null", "Null", "NULL"})


def _split_front_matter(text: str) -> tuple[dict[str, str | None], str]:
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


def _to_float(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.replace("_", ""))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _non_blank(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    return value or None


# --- routes -------------------------------------------------------------------------------------

# Docusaurus' DefaultNumberPrefixParser: "01-intro" -> "intro", but dates and versions are kept.
_NUMBER_PREFIX = re.compile(r"\d+\s*[-_.]+\s*([^-_.\s].*)")
_DATE_OR_VERSION = re.compile(r"(?:\d{2}|\d{4})[-_.]\d{2}(?:[-_.](?:\d{2}|\d{4}))?|\d+[-_.]\d+")


def _strip_number_prefix(name: str) -> str:
    if _DATE_OR_VERSION.match(name):
        return name
    m = _NUMBER_PREFIX.fullmatch(name)
    return m.group(1) if m else name


def _split_rel_path(rel_path: str) -> tuple[list[str], str]:
    """(directories, file stem) of a docs-relative path, posix or Windows separators."""
    parts = [p for p in rel_path.replace("\\", "/").split("/") if p not in ("", ".")]
    filename = parts[-1] if parts else ""
    dot = filename.rfind(".")
    stem = filename[:dot] if dot > 0 else filename
    return parts[:-1], stem


def _is_category_index(stem: str, dirs: list[str]) -> bool:
    # Docusaurus' isCategoryIndex compares the raw names (number prefixes included).
    lowered = stem.lower()
    return lowered in ("index", "readme") or bool(dirs and lowered == dirs[-1].lower())


def _compute_route(rel_path: str, slug: str | None, doc_id: str | None) -> str:
    """The doc's route as Docusaurus computes it (docs plugin getSlug), without the route base path."""
    dirs, stem = _split_rel_path(rel_path)
    dir_slug = "/" + "".join(_strip_number_prefix(d) + "/" for d in dirs)
    if slug and slug.startswith("/"):
        route = slug
    elif not slug and _is_category_index(stem, dirs):
        route = dir_slug
    else:
        base = slug or doc_id or _strip_number_prefix(stem)
        route = posixpath.normpath(posixpath.join(dir_slug, base))
    route = "/" + "/".join(p for p in route.split("/") if p)
    return route


def _pretty_name(rel_path: str) -> str:
    """Title of last resort, from the file (or, for an index file, its folder) name."""
    dirs, stem = _split_rel_path(rel_path)
    name = stem
    if stem.lower() in ("index", "readme") or (dirs and stem.lower() == dirs[-1].lower()):
        name = dirs[-1] if dirs else "Home"
    words = re.split(r"[-_\s]+", _strip_number_prefix(name))
    return " ".join(w[:1].upper() + w[1:] for w in words if w) or "Untitled"


# --- fences -------------------------------------------------------------------------------------

_FENCE_OPEN = re.compile(r"([ \t]*)(`{3,}|~{3,})(.*)$")


@dataclass(frozen=True, slots=True)
class _Fence:
    indent: int
    char: str
    length: int
    open_line: str  # the opening line without its indentation (fence and info string)


def _open_fence(line: str) -> _Fence | None:
    # Any indentation is accepted: fences inside list items are commonly indented 3-4 spaces, and
    # missing one would turn the `# comment` lines of its code into headings.
    if "```" not in line and "~~~" not in line:
        return None
    m = _FENCE_OPEN.match(line)
    if m is None:
        return None
    marks = m.group(2)
    if marks[0] == "`" and "`" in m.group(3):
        return None  # CommonMark: a backtick fence's info string has no backticks (inline code)
    return _Fence(len(m.group(1).expandtabs(4)), marks[0], len(marks), line.strip())


def _closes(line: str, fence: _Fence) -> bool:
    stripped = line.strip()
    return len(stripped) >= fence.length and stripped.strip(fence.char) == "" and stripped[0] == fence.char


def _dedent(line: str, width: int) -> str:
    """Remove up to `width` columns of leading spaces (the fence's own indentation)."""
    i = 0
    while i < len(line) and i < width and line[i] == " ":
        i += 1
    return line[i:]


# --- body cleaning (MDX -> readable markdown) ----------------------------------------------------

_IMPORT_LINE = re.compile(r"""import\s+(?:type\s+)?(?:[\w$*{},\s]+?\s+from\s+)?["'][^"'\n]+["']\s*;?\s*""")
_IMPORT_OPEN = re.compile(r"""import\s+(?:type\s+)?(?:[\w$]+\s*,\s*)?\{[^}]*""")
_IMPORT_CLOSE = re.compile(r"""[^{]*\}\s*from\s+["'][^"'\n]+["']\s*;?\s*""")
_EXPORT_START = re.compile(r"export\s+(?:default\b|const\b|let\b|var\b|function\b|async\b|class\b|\{|\*)")
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
# Phrasing tags vanish without a trace; any other tag leaves a space so words do not run together.
_INLINE_TAGS = frozenset(
    {"a", "abbr", "b", "bdi", "bdo", "cite", "code", "del", "dfn", "em", "i", "ins", "kbd", "mark", "q"}
    | {"s", "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var"}
)
_ADMONITION = re.compile(r"([ \t>]*):{3,}[ \t]*([A-Za-z][\w-]*)?(.*)$")
_ADMONITION_TITLE_ATTR = re.compile(r"""title=(["'])([^"'\n]*)\1""")
_PLACEHOLDER = re.compile(_PH_OPEN + r"(\d+)" + _PH_CLOSE)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")


def _clean_body(body: str) -> str:
    """Strip MDX machinery outside fenced code; code is copied verbatim."""
    lines = body.split("\n")
    out: list[str] = []
    prose: list[str] = []
    i = 0
    while i < len(lines):
        fence = _open_fence(lines[i])
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
            if _closes(out[-1], fence):
                break
    out.extend(_clean_prose(prose))
    return "\n".join(out).strip("\n")


def _drop_esm(lines: list[str]) -> list[str]:
    """Remove MDX `import`/`export` statements (they are code the page runs, not text)."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith(("import", "export")) or len(line) > _MAX_ESM_LINE_CHARS:
            out.append(line)
            i += 1
            continue
        if _IMPORT_LINE.fullmatch(line):
            i += 1
            continue
        if _IMPORT_OPEN.fullmatch(line):
            end = next(
                (
                    j
                    for j in range(i + 1, min(len(lines), i + _MAX_ESM_LINES))
                    if len(lines[j]) <= _MAX_ESM_LINE_CHARS and _IMPORT_CLOSE.fullmatch(lines[j])
                ),
                None,
            )
            if end is not None:
                i = end + 1
                continue
        elif _EXPORT_START.match(line):
            i = _export_end(lines, i)
            continue
        out.append(line)
        i += 1
    return out


def _export_end(lines: list[str], start: int) -> int:
    """Index after an `export` statement: brackets balanced, or (if they never balance) a blank line."""
    depth = 0
    limit = min(len(lines), start + _MAX_ESM_LINES)
    for j in range(start, limit):
        line = lines[j]
        depth += sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")
        if depth <= 0:
            return j + 1
    for j in range(start + 1, len(lines)):
        if not lines[j].strip():
            return j
    return len(lines)


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
    name = (m.group("open") or m.group("close") or "").lower()
    return _JOIN if name in _INLINE_TAGS else _GAP


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
    title = title.strip()
    label = kind[:1].upper() + kind[1:].lower()
    return f"{indent}{label}: {title}" if title else f"{indent}{label}:"


def _clean_prose(lines: list[str]) -> list[str]:
    if not lines:
        return []
    text = "\n".join(_drop_esm(lines))
    text, spans = _protect_code_spans(text)
    text = _remove_jsx_comments(text)
    text = _remove_html_comments(text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _TAG.sub(_tag_replacement, text)
    text = html.unescape(text)
    out: list[str] = []
    for raw in text.split("\n"):
        line = raw
        if _GAP in line or _JOIN in line:
            if line.lstrip()[:1] in (_GAP, _JOIN):
                line = line.lstrip(" \t" + _GAP + _JOIN)  # JSX indentation means nothing
            line = line.replace(_GAP, " ").replace(_JOIN, "")
        line = line.rstrip()
        if ":::" in line and line.lstrip(" \t>").startswith(":::"):
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


# --- headings -----------------------------------------------------------------------------------

_IMAGE = re.compile(r"!\[([^\[\]]*)\]\([^()]*\)")
_LINK = re.compile(r"\[([^\[\]]*)\]\([^()]*\)")
_REF_LINK = re.compile(r"\[([^\[\]]*)\]\[[^\[\]]*\]")
_SIMPLE_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_EDGE_UNDERSCORES = re.compile(r"(?<!\w)_+(?=\w)|(?<=\w)_+(?!\w)")
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


def _plain_inline(text: str) -> str:
    """Markdown inline formatting removed, text kept (links, images' alt, code, emphasis)."""
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _REF_LINK.sub(r"\1", text)
    text = _SIMPLE_TAG.sub("", text)
    text = text.replace("`", "").replace("*", "").replace("~~", "")
    return _EDGE_UNDERSCORES.sub("", text)


def heading_anchor(text: str) -> str:
    """The id Docusaurus gives a heading (github-slugger), before de-duplication.

    An explicit `{#custom-id}` wins. Otherwise: formatting removed (links and code keep their text),
    lowercased, every character but letters, digits, `_`, `-` and spaces dropped, and each space
    turned into `-` (not collapsed: "A & B" -> "a--b", as on GitHub). `chunk_document` adds the
    "-1", "-2" suffixes for repeated headings within a doc.
    """
    body, custom = _split_custom_id(text)
    if custom is not None:
        return custom
    slug = _SLUG_DROP.sub("", _plain_inline(body.strip()).lower())
    return slug.replace(" ", "-")


class _Slugger:
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


def _parse_heading(line: str) -> tuple[int, str] | None:
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


def _heading_texts(raw: str) -> tuple[str, str, bool]:
    """(display text, anchor, explicit id?) of a heading's raw text; absurd lengths are truncated."""
    body, custom = _split_custom_id(raw)
    body = body[: _MAX_HEADING_CHARS * 4]
    display = " ".join(_plain_inline(body).split())
    if len(display) > _MAX_HEADING_CHARS:
        display = display[: _MAX_HEADING_CHARS - 1].rstrip() + "…"
    anchor = custom if custom is not None else heading_anchor(body)
    return display, anchor[: _MAX_HEADING_CHARS * 2], custom is not None


def _iter_outside_fences(lines: list[str]) -> Iterator[str]:
    fence: _Fence | None = None
    for line in lines:
        if fence is not None:
            if _closes(line, fence):
                fence = None
            continue
        fence = _open_fence(line)
        if fence is None:
            yield line


def _first_h1(body: str) -> str | None:
    for line in _iter_outside_fences(body.split("\n")):
        heading = _parse_heading(line)
        if heading is not None and heading[0] == 1:
            display = _heading_texts(heading[1])[0]
            if display:
                return display
    return None


# --- parse_document -----------------------------------------------------------------------------


def parse_document(text: str, rel_path: str) -> ParsedDocument:
    """Parse one Docusaurus Markdown/MDX file; `rel_path` is relative to the docs folder.

    Raises DocumentError for a file with nothing to index (empty, only front matter or components)
    or one that looks binary.
    """
    if "\x00" in text:
        raise DocumentError(f"{rel_path}: looks like a binary file", details={"rel_path": rel_path})
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    text = text.translate(_PRIVATE_MARKS)
    front, rest = _split_front_matter(text)
    body = _clean_body(rest)
    if not body.strip():
        raise DocumentError(
            f"{rel_path}: document is empty (only whitespace, front matter or components)",
            details={"rel_path": rel_path},
        )
    slug = _non_blank(front.get("slug"))
    title = _non_blank(front.get("title")) or _first_h1(body) or _pretty_name(rel_path)
    return ParsedDocument(
        rel_path=rel_path,
        title=title,
        slug=slug,
        sidebar_position=_to_float(front.get("sidebar_position")),
        route=_compute_route(rel_path, slug, _non_blank(front.get("id"))),
        body=body,
        description=_non_blank(front.get("description")),
    )


# --- chunking -----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Unit:
    """A piece of a chunk: a block, part of a split block, a heading line or an overlap."""

    text: str
    tokens: int
    kind: str
    fence_open: str = ""
    fence_close: str = ""
    code_lines: tuple[str, ...] = ()


@dataclass(slots=True)
class _Section:
    level: int  # 0 for text before the first heading
    path: tuple[str, ...]
    anchor: str
    units: list[_Unit]


_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S")
_TABLE_CELL_SEP = re.compile(r":?-+:?")
_WORD_WITH_SPACE = re.compile(r"\s*\S+")

_Atom = tuple[str, str, int]  # (separator before it, text, tokens)
_Limits = tuple[int, int]  # (tokens, characters)

# Overlap and over-long lines are cut at sentence ends. A stop inside a closing quote counts; nothing
# else is second-guessed ("e.g. x" may end a piece): a cut only has to fall between words.
_SENTENCES = SentenceSplitter(closers=True)


def _defuse_fence(line: str) -> str:
    """Backslash-escape a line of prose that would read as a code fence.

    Whole prose lines never can (they would have opened a fence), but a sentence or a slice cut out of
    one ("Done. ```js") may land at the start of a chunk line and open a fence nobody closes.
    """
    if _open_fence(line) is None:
        return line
    stripped = line.lstrip()
    return line[: len(line) - len(stripped)] + "\\" + stripped


def _defuse_lines(text: str) -> str:
    if "```" not in text and "~~~" not in text:
        return text
    return "\n".join(_defuse_fence(line) for line in text.split("\n"))


def _is_table_sep(line: str) -> bool:
    """A GFM table delimiter row (`|---|:--:|`); split by hand, a regex here can go quadratic."""
    row = line.strip()
    if "|" not in row or "-" not in row:
        return False
    row = row.removeprefix("|").removesuffix("|")
    return all(_TABLE_CELL_SEP.fullmatch(cell.strip()) for cell in row.split("|"))


def _trim_blank_lines(text: str) -> str:
    lines = text.split("\n")
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end])


def _fence_charge(sep: str, text: str, starts_group: bool) -> int:
    """1 for an atom that starts a line with a backtick or tilde: the line may need a backslash."""
    return 1 if (starts_group or "\n" in sep) and text.lstrip()[:1] in ("`", "~") else 0


def _pack_atoms(
    atoms: list[_Atom], first: _Limits, rest: _Limits, min_tail: int = 0, guard: bool = False
) -> list[tuple[str, int]]:
    """Greedy packing: the first piece within `first`, later ones within `rest`.

    If the last piece ends up under `min_tail` tokens, atoms move to it from the piece before (within
    `rest`), so splitting a block does not leave a near-empty tail chunk behind. With `guard`, every
    line that starts with a backtick or tilde is charged one token and one character, room for the
    backslash `_defuse_lines` may add once pieces are joined.
    """

    def cost(group: list[int]) -> tuple[int, int]:
        tokens = chars = 0
        for pos, i in enumerate(group):
            sep, text, n = atoms[i]
            charge = _fence_charge(sep, text, pos == 0) if guard else 0
            tokens += n + charge
            chars += len(text) + charge + (len(sep) if pos else 0)
        return tokens, chars

    groups: list[list[int]] = []
    buf: list[int] = []
    used_t = used_c = 0
    lim_t, lim_c = first
    for idx, (sep, text, tokens) in enumerate(atoms):
        charge = _fence_charge(sep, text, not buf) if guard else 0
        if not buf and not groups and (tokens + charge > lim_t or len(text) + charge > lim_c):
            lim_t, lim_c = rest  # not even one atom fits the first slot: start with a full one
        extra = len(text) + charge + (len(sep) if buf else 0)
        if buf and (used_t + tokens + charge > lim_t or used_c + extra > lim_c):
            groups.append(buf)
            buf, used_t, used_c = [], 0, 0
            lim_t, lim_c = rest
            charge = _fence_charge(sep, text, True) if guard else 0
            extra = len(text) + charge
        buf.append(idx)
        used_t += tokens + charge
        used_c += extra
    if buf:
        groups.append(buf)
    if len(groups) >= 2 and min_tail > 0:
        prev, last = groups[-2], groups[-1]
        while len(prev) > 1 and cost(last)[0] < min_tail:
            moved_t, moved_c = cost([prev[-1], *last])
            if moved_t > rest[0] or moved_c > rest[1]:
                break
            last.insert(0, prev.pop())
    pieces: list[tuple[str, int]] = []
    for group in groups:
        parts = [atoms[group[0]][1]]
        for i in group[1:]:
            parts.append(atoms[i][0])
            parts.append(atoms[i][1])
        pieces.append(("".join(parts), cost(group)[0]))
    return pieces


class _Chunker:
    def __init__(self, count: Callable[[str], int], max_tokens: int, overlap_tokens: int) -> None:
        self.count_raw = count
        self.max_tokens = max_tokens
        # A tokenizer counter may charge fixed tokens ([CLS], [SEP]) per call; measure them once so
        # summing per-unit counts does not charge them once per unit.
        self.base = max(0, count(""))
        self.budget = max(1, max_tokens - self.base)
        self.char_cap = max(64, max_tokens * _CHARS_PER_TOKEN_CAP)
        self.overlap = min(overlap_tokens, self.budget // 2)
        self.tiny = min(_TINY_SECTION_TOKENS, max(1, self.budget // 4))
        self.min_first_chars = min(256, self.char_cap // 4)
        self.slugger = _Slugger()

    def tok(self, text: str) -> int:
        return max(0, self.count_raw(text) - self.base)

    # -- sections and blocks ----------------------------------------------------------------

    def sections(self, body: str) -> list[_Section]:
        lines = body.replace("\r\n", "\n").split("\n")
        sections = [_Section(0, (), "", [])]
        stack: list[tuple[int, str]] = []
        para: list[str] = []
        i = 0
        while i < len(lines):
            line = lines[i]
            fence = _open_fence(line)
            if fence is not None:
                self._end_paragraph(para, sections[-1].units)
                i = self._code_block(lines, i, fence, sections[-1].units)
                continue
            heading = _parse_heading(line)
            if heading is not None:
                self._end_paragraph(para, sections[-1].units)
                i += 1
                level, raw = heading
                display, anchor, explicit = _heading_texts(raw)
                if not display:
                    continue  # an empty heading ("#") carries nothing to index
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, display))
                if not explicit:  # Docusaurus does not enter explicit ids in its slugger
                    anchor = self.slugger.slug(anchor)
                path = tuple(t for _, t in stack)
                sections.append(_Section(level, path, anchor, [_Unit(display, self.tok(display), _HEADING)]))
                continue
            if line.strip():
                para.append(line.rstrip())
            else:
                self._end_paragraph(para, sections[-1].units)
            i += 1
        self._end_paragraph(para, sections[-1].units)
        return [s for s in sections if s.units]

    def _code_block(self, lines: list[str], start: int, fence: _Fence, units: list[_Unit]) -> int:
        body: list[str] = []
        i = start + 1
        while i < len(lines):
            if _closes(lines[i], fence):
                i += 1
                break
            body.append(_dedent(lines[i], fence.indent))
            i += 1
        # An unclosed fence runs to the end of the document; the chunk closes it so it stays valid.
        lo, hi = 0, len(body)
        while lo < hi and not body[lo].strip():
            lo += 1
        while hi > lo and not body[hi - 1].strip():
            hi -= 1
        if lo == hi:
            return i
        code = tuple(body[lo:hi])
        # The fence is repeated on every piece, so a hostile one is shrunk: just long enough that no
        # line of the code closes it, and an info string of sane length (language and a little meta).
        bare = [c.strip() for c in code]
        inner = max((len(b) for b in bare if b and not b.strip(fence.char)), default=0)
        marks = fence.char * min(fence.length, max(3, inner + 1))
        info = fence.open_line.lstrip(fence.char).strip()
        if len(info) > 100 or self.tok(marks + info) > self.budget // 4:
            info = (info.split(None, 1) or [""])[0][:40]
        if self.tok(marks + info) > self.budget // 4:
            info = ""
        head = marks + info
        text = f"{head}\n" + "\n".join(code) + f"\n{marks}"
        units.append(_Unit(text, self.tok(text), _CODE, head, marks, code))
        return i

    def _end_paragraph(self, para: list[str], units: list[_Unit]) -> None:
        if not para:
            return
        text = "\n".join(para)
        para.clear()
        first = text.split("\n", 1)[0]
        second = text.split("\n", 2)[1] if "\n" in text else ""
        if first.lstrip().startswith("|") or ("|" in first and _is_table_sep(second)):
            kind = _TABLE
        elif _LIST_ITEM.match(first):
            kind = _LIST
        else:
            kind = _PROSE
        tokens = self.tok(text)
        prev = units[-1] if units else None
        # A loose list (items separated by blank lines, indented continuations) stays one block.
        if prev is not None and prev.kind == _LIST and (kind == _LIST or first[:1] in " \t"):
            units[-1] = _Unit(prev.text + _SEP + text, prev.tokens + tokens, _LIST)
            return
        units.append(_Unit(text, tokens, kind))

    # -- splitting an oversized block -----------------------------------------------------------

    def split(self, unit: _Unit, first: _Limits) -> list[_Unit]:
        if unit.kind == _CODE:
            return self._split_code(unit, first, (self.budget, self.char_cap))
        if unit.kind == _TABLE:
            return self._split_table(unit, first, (self.budget, self.char_cap))
        # Prose pieces leave room for the overlap the next chunk will start with.
        rest = (self.budget - self.overlap, max(1, self.char_cap - self.overlap * _CHARS_PER_TOKEN_CAP))
        if unit.kind != _PROSE:
            rest = (self.budget, self.char_cap)
        atoms = self._text_atoms(unit.text, rest)
        return self._prose_units(_pack_atoms(atoms, first, rest, self.tiny, guard=True), unit.kind)

    def _prose_units(self, pieces: list[tuple[str, int]], kind: str, prefix: str = "") -> list[_Unit]:
        """Units from packed pieces of text, lines that would read as a fence defused (budgeted for
        by `guard=True` packing)."""
        units: list[_Unit] = []
        for text, tokens in pieces:
            if not text.strip():
                continue
            fixed = _defuse_lines(text)
            if fixed != text:
                tokens = self.tok(fixed)
            if prefix:
                fixed = f"{prefix}\n{fixed}"
                tokens += self.tok(prefix)
            units.append(_Unit(fixed, tokens, kind))
        return units

    def _text_atoms(self, text: str, limit: _Limits) -> list[_Atom]:
        """Lines, else sentences, else words, else character slices: the largest that fit.

        One token and one character of `limit` are kept spare for the fence charge of `_pack_atoms`.
        """
        limit = (max(1, limit[0] - 1), max(1, limit[1] - 1))
        atoms: list[_Atom] = []
        sep = ""
        for line in text.split("\n"):
            if not line.strip():
                sep = "\n\n"
                continue
            tokens = self.tok(line)
            if tokens <= limit[0] and len(line) <= limit[1]:
                atoms.append((sep, line, tokens))
            else:
                for s_idx, sentence in enumerate(_SENTENCES.split(line)):
                    s_sep = sep if s_idx == 0 else " "
                    s_tokens = self.tok(sentence)
                    if s_tokens <= limit[0] and len(sentence) <= limit[1]:
                        atoms.append((s_sep, sentence, s_tokens))
                        continue
                    for w_idx, word in enumerate(sentence.split()):
                        w_sep = s_sep if w_idx == 0 else " "
                        atoms.extend(self._word_atoms(word, w_sep, limit))
            sep = "\n"
        return atoms

    def _word_atoms(self, word: str, sep: str, limit: _Limits) -> list[_Atom]:
        tokens = self.tok(word)
        if tokens <= limit[0] and len(word) <= limit[1]:
            return [(sep, word, tokens)]
        pieces = self._hard_split(word, limit)
        return [(sep if k == 0 else "", piece, self.tok(piece)) for k, piece in enumerate(pieces)]

    def _hard_split(self, word: str, limit: _Limits) -> list[str]:
        """Cut a run with no whitespace into slices within the limits (one char is the floor)."""
        pieces: list[str] = []
        guess = limit[1]  # adapted to the last slice, so a dense run is not re-counted in full each time
        i = 0
        while i < len(word):
            size = max(1, min(guess, len(word) - i))
            tokens = self.tok(word[i : i + size])
            while size > 1 and tokens > limit[0]:
                size = max(1, min(size - 1, size * limit[0] // max(tokens, 1)))
                tokens = self.tok(word[i : i + size])
            pieces.append(word[i : i + size])
            i += size
            guess = min(limit[1], size * 2)
        return pieces

    def _split_code(self, unit: _Unit, first: _Limits, rest: _Limits) -> list[_Unit]:
        head, tail = unit.fence_open, unit.fence_close
        fence_t = self.tok(head) + self.tok(tail)
        fence_c = len(head) + len(tail) + 2
        inner_first = (first[0] - fence_t, first[1] - fence_c)
        inner_rest = (max(1, rest[0] - fence_t), max(1, rest[1] - fence_c))
        atoms: list[_Atom] = []
        for line in unit.code_lines:
            tokens = self.tok(line)
            if tokens <= inner_rest[0] and len(line) <= inner_rest[1]:
                atoms.append(("\n", line, tokens))
                continue
            # An over-long code line is cut between words (each cut keeps its leading whitespace),
            # else mid-word; every piece becomes a line of its own.
            parts: list[_Atom] = []
            for m in _WORD_WITH_SPACE.finditer(line):
                parts.extend(self._word_atoms(m.group(0), "", inner_rest))
            atoms.extend(("\n", text, n) for text, n in _pack_atoms(parts, inner_rest, inner_rest))
        # Cutting a long line can leave a piece made only of fence characters; the fence must outgrow
        # it or that piece would close the block early.
        char = tail[0]
        longest = max((len(a[1].strip()) for a in atoms if a[1].strip() and not a[1].strip(char)), default=0)
        if longest >= len(tail):
            tail = char * (longest + 1)
            head = tail + head.lstrip(char)
            fence_t = self.tok(head) + self.tok(tail)
        units: list[_Unit] = []
        for body, tokens in _pack_atoms(atoms, inner_first, inner_rest, self.tiny):
            body = _trim_blank_lines(body)
            if body.strip():
                text = f"{head}\n{body}\n{tail}"
                units.append(_Unit(text, tokens + fence_t, _CODE, head, tail, tuple(body.split("\n"))))
        return units

    def _split_table(self, unit: _Unit, first: _Limits, rest: _Limits) -> list[_Unit]:
        lines = unit.text.split("\n")
        header = "\n".join(lines[:2]) if len(lines) > 2 and _is_table_sep(lines[1]) else ""
        head_t = self.tok(header)
        if not header or head_t > rest[0] // 2 or len(header) > rest[1] // 2:
            atoms = self._text_atoms(unit.text, rest)
            return self._prose_units(_pack_atoms(atoms, first, rest, self.tiny, guard=True), _TABLE)
        # Every piece repeats the header row, so each is a readable table on its own.
        inner_first = (first[0] - head_t, first[1] - len(header) - 1)
        inner_rest = (rest[0] - head_t, rest[1] - len(header) - 1)
        atoms = self._text_atoms("\n".join(lines[2:]), inner_rest)
        pieces = _pack_atoms(atoms, inner_first, inner_rest, self.tiny, guard=True)
        return self._prose_units(pieces, _TABLE, prefix=header)

    # -- overlap and packing ---------------------------------------------------------------------

    def overlap_unit(self, last: _Unit) -> _Unit | None:
        """Whole trailing sentences of a prose unit, at most `overlap` tokens in all."""
        if self.overlap <= 0 or last.kind != _PROSE:
            return None
        taken: list[str] = []
        total = 0
        for line in reversed(last.text.split("\n")):
            for sentence in reversed(_SENTENCES.split(line)):
                tokens = self.tok(sentence)
                if total + tokens > self.overlap:
                    return self._overlap_from(taken, total)
                taken.append(sentence)
                total += tokens
        return self._overlap_from(taken, total)

    def _overlap_from(self, taken: list[str], total: int) -> _Unit | None:
        if not taken:
            return None
        text = " ".join(reversed(taken))
        defused = _defuse_fence(text)
        return _Unit(defused, total if defused == text else self.tok(defused), _OVERLAP)

    def pack(self, units: list[_Unit]) -> list[list[_Unit]]:
        packer = _Packer(self)
        for unit in units:
            packer.feed(unit)
        return packer.finish()

    def fits_together(self, a: list[_Unit], b: list[_Unit]) -> bool:
        tokens = sum(u.tokens for u in a) + sum(u.tokens for u in b)
        chars = sum(len(u.text) + len(_SEP) for u in a) + sum(len(u.text) + len(_SEP) for u in b)
        return tokens <= self.budget and chars <= self.char_cap

    def render(self, units: list[_Unit]) -> list[tuple[str, int]]:
        """Chunk texts with their real counts.

        Packing sums per-unit counts. A counter that is not additive (one that charges for the joining
        whitespace, say) can still put a chunk over budget: it is halved by units, and a single unit is
        re-cut with a proportionally smaller limit, until every piece fits or cannot be cut further.
        """
        out: list[tuple[str, int]] = []
        stack = [units]
        while stack:
            group = stack.pop()
            if all(u.kind == _OVERLAP for u in group):
                continue
            text = _SEP.join(u.text for u in group).strip("\n")
            if not text.strip():
                continue
            tokens = self.count_raw(text)
            if tokens > self.max_tokens:
                if len(group) > 1:
                    mid = len(group) // 2
                    stack.append(group[mid:])
                    stack.append(group[:mid])
                    continue
                pieces = self._recut(group[0], max(1, self.budget * self.budget // max(tokens, 1) - 1))
                if len(pieces) > 1 and all(len(p.text) < len(text) for p in pieces):  # so it terminates
                    stack.extend([p] for p in reversed(pieces))
                    continue
            out.append((text, tokens))
        return out

    def _recut(self, unit: _Unit, limit_t: int) -> list[_Unit]:
        limits = (limit_t, self.char_cap)
        if unit.kind == _CODE:
            return self._split_code(unit, limits, limits)
        if unit.kind == _TABLE:
            return self._split_table(unit, limits, limits)
        atoms = self._text_atoms(unit.text, limits)
        kind = _PROSE if unit.kind == _OVERLAP else unit.kind
        return self._prose_units(_pack_atoms(atoms, limits, limits, guard=True), kind)


class _Packer:
    """Greedy packing of one section's units into chunks, splitting blocks that do not fit."""

    def __init__(self, chunker: _Chunker) -> None:
        self.ck = chunker
        self.chunks: list[list[_Unit]] = []
        self.cur: list[_Unit] = []
        self.used_t = 0
        self.used_c = 0

    def _fits(self, unit: _Unit) -> bool:
        tokens_ok = self.used_t + unit.tokens <= self.ck.budget
        return tokens_ok and self.used_c + len(unit.text) + len(_SEP) <= self.ck.char_cap

    def _add(self, unit: _Unit) -> None:
        self.cur.append(unit)
        self.used_t += unit.tokens
        self.used_c += len(unit.text) + len(_SEP)

    def _has_content(self) -> bool:
        return any(u.kind != _OVERLAP for u in self.cur)

    def _flush(self, upcoming: _Unit | None) -> None:
        """Close the current chunk; start the next with an overlap if it leaves room for `upcoming`."""
        overlap = None
        if self._has_content():
            self.chunks.append(self.cur)
            overlap = self.ck.overlap_unit(self.cur[-1])
        self.cur, self.used_t, self.used_c = [], 0, 0
        if overlap is not None and (upcoming is None or self._fits_pair(overlap, upcoming)):
            self._add(overlap)

    def _fits_pair(self, a: _Unit, b: _Unit) -> bool:
        tokens_ok = a.tokens + b.tokens <= self.ck.budget
        return tokens_ok and len(a.text) + len(b.text) + 2 * len(_SEP) <= self.ck.char_cap

    def feed(self, unit: _Unit) -> None:
        if self._fits(unit):
            self._add(unit)
            return
        ck = self.ck
        oversized = unit.tokens > ck.budget or len(unit.text) + len(_SEP) > ck.char_cap
        # Flushing a chunk that holds little more than a heading would leave a near-empty chunk, so
        # a splittable block is cut to fill it instead.
        thin = self._has_content() and self.used_t < ck.tiny and unit.kind != _HEADING
        if not oversized and not thin:
            self._flush(unit)
            self._add(unit)
            return
        if ck.budget - self.used_t < ck.tiny or ck.char_cap - self.used_c < ck.min_first_chars:
            self._flush(None)
        first = (ck.budget - self.used_t, ck.char_cap - self.used_c - len(_SEP))
        for piece in ck.split(unit, first):
            if not self._fits(piece):
                self._flush(piece)
            self._add(piece)  # a piece still over budget here is the documented unsplittable case

    def finish(self) -> list[list[_Unit]]:
        if self._has_content():
            self.chunks.append(self.cur)
        self.cur = []
        return self.chunks


def chunk_document(
    doc: ParsedDocument,
    *,
    max_tokens: int = 200,
    overlap_tokens: int = 32,
    count_tokens: Callable[[str], int] | None = None,
) -> list[ChunkDraft]:
    """Split a parsed doc into heading-aware chunks of at most `max_tokens` (by `count_tokens`).

    - Sections are cut at ATX headings outside fenced code; the first chunk of a section starts with
      its heading as a plain line. `heading_path` lists the markdown headings above the text (an H1
      included); text before the first heading has an empty path, `anchor` "" and the doc title as
      `section_heading`.
    - Blocks (paragraph, list, table, fenced code) are packed whole while they fit. A larger block is
      split: prose by lines, sentences, words, then characters; a table by rows, each piece repeating
      the header; code by lines, each piece re-opened and re-closed with the block's fence and info
      string, so no chunk holds a half-open fence (a needlessly long fence or an info string too
      long to repeat on every piece is shortened; a line longer than the budget is cut into lines).
    - Consecutive chunks of one section share up to `overlap_tokens` of whole trailing prose
      sentences; code, lists and tables are never repeated.
    - A section under ~25 tokens is carried into the next section's first chunk (its heading stays in
      the text as a line; the chunk takes the later section's path and anchor, which is where most
      of its text comes from). Into a new H1/H2 topic it is carried only if both fit in one chunk;
      otherwise it joins the previous chunk if that has room, and only failing both stands alone.
    - Bound: every chunk's `token_count` (= count_tokens(text)) is <= max_tokens, and its text is at
      most max_tokens * 16 characters (so a counter that sees a 1 MB run as one token cannot yield a
      1 MB chunk). The single exception is a piece that cannot be cut further: one character whose
      count alone exceeds the budget, or a code piece whose two fence lines plus one character of code
      do (with the default counter: max_tokens below 7, or a block that itself holds long runs of its
      fence character and so needs a long fence). Such a piece is emitted as is, not dropped.

    Raises DocumentError if the body holds no text, ValueError for a non-positive budget.
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    if overlap_tokens < 0:
        raise ValueError("overlap_tokens must not be negative")
    chunker = _Chunker(count_tokens or approx_token_count, max_tokens, overlap_tokens)
    sections = chunker.sections(doc.body)
    if not sections:
        message = f"{doc.rel_path}: document has no text to chunk"
        raise DocumentError(message, details={"rel_path": doc.rel_path})

    packed: list[tuple[_Section, list[_Unit]]] = []
    carry: list[_Unit] = []
    for idx, section in enumerate(sections):
        units = carry + section.units
        carry = []
        total = sum(u.tokens for u in units)
        if total < chunker.tiny:
            nxt = sections[idx + 1] if idx + 1 < len(sections) else None
            same_topic = nxt is not None and (nxt.level > section.level or nxt.level >= 3)
            if nxt is not None and (same_topic or chunker.fits_together(units, nxt.units)):
                carry = units
                continue
            if packed and chunker.fits_together(packed[-1][1], units):
                packed[-1][1].extend(units)
                continue
        packed.extend((section, chunk) for chunk in chunker.pack(units))

    drafts: list[ChunkDraft] = []
    for section, units in packed:
        heading = section.path[-1] if section.path else doc.title
        for text, tokens in chunker.render(units):
            drafts.append(ChunkDraft(text, section.path, heading, section.anchor, tokens))
    return drafts
