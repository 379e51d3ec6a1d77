"""Block-level Markdown: code fences, list items and table delimiter rows.

Fences matter most: text inside one is code, so a `# comment` there is not a heading and `<Tabs>`
there is not a tag. The cleaner, the heading scan and the chunker all need the same answer to "is
this line inside a fence?", hence one set of rules. Every test here is a single pass over a line
(no regex that a 1 MB line or a long run of `|` can make quadratic).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = [
    "LIST_ITEM",
    "Fence",
    "closes_fence",
    "compact_table_sep",
    "defuse_fence",
    "defuse_lines",
    "deindent",
    "indices_outside_fences",
    "is_table_sep",
    "is_table_syntax",
    "iter_outside_fences",
    "open_fence",
]

_FENCE_OPEN = re.compile(r"([ \t]*)(`{3,}|~{3,})(.*)$")
_TABLE_CELL_SEP = re.compile(r":?-+:?")
# The first line of a list item: a bullet or an ordered marker, then text.
LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S")


@dataclass(frozen=True, slots=True)
class Fence:
    indent: int
    char: str
    length: int
    open_line: str  # the opening line without its indentation (fence and info string)


def open_fence(line: str) -> Fence | None:
    """The fence this line opens, else None."""
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
    return Fence(len(m.group(1).expandtabs(4)), marks[0], len(marks), line.strip())


def closes_fence(line: str, fence: Fence) -> bool:
    """Whether `line` closes `fence`: the same character, at least as many, nothing else."""
    stripped = line.strip()
    return len(stripped) >= fence.length and stripped.strip(fence.char) == "" and stripped[0] == fence.char


def deindent(line: str, width: int) -> str:
    """Remove up to `width` columns of leading spaces (the fence's own indentation)."""
    i = 0
    while i < len(line) and i < width and line[i] == " ":
        i += 1
    return line[i:]


def indices_outside_fences(lines: list[str]) -> Iterator[int]:
    """Indices of the lines that are not fenced code (fence lines themselves excluded)."""
    fence: Fence | None = None
    for i, line in enumerate(lines):
        if fence is not None:
            if closes_fence(line, fence):
                fence = None
            continue
        fence = open_fence(line)
        if fence is None:
            yield i


def iter_outside_fences(lines: list[str]) -> Iterator[str]:
    """The lines that are not fenced code (fence lines themselves excluded)."""
    return (lines[i] for i in indices_outside_fences(lines))


def defuse_fence(line: str) -> str:
    """Backslash-escape a line of prose that would read as a code fence.

    Whole prose lines never can (they would have opened a fence), but a sentence or a slice cut out of
    one ("Done. ```js") may land at the start of a chunk line and open a fence nobody closes.
    """
    if open_fence(line) is None:
        return line
    stripped = line.lstrip()
    return line[: len(line) - len(stripped)] + "\\" + stripped


def defuse_lines(text: str) -> str:
    """`defuse_fence` on every line of `text`."""
    if "```" not in text and "~~~" not in text:
        return text
    return "\n".join(defuse_fence(line) for line in text.split("\n"))


def is_table_sep(line: str) -> bool:
    """A GFM table delimiter row (`|---|:--:|`); split by hand, a regex here can go quadratic."""
    row = line.strip()
    if "|" not in row or "-" not in row:
        return False
    row = row.removeprefix("|").removesuffix("|")
    return all(_TABLE_CELL_SEP.fullmatch(cell.strip()) for cell in row.split("|"))


def compact_table_sep(line: str) -> str:
    """A delimiter row no longer than `| --- | :---: |`: the table renders the same, and a row Prettier
    padded to a wide column's width costs a token per dash, enough to push a table's header past half a
    chunk and leave the row alone in a chunk of dashes. A row already that short is kept as written."""
    cells = line.strip().removeprefix("|").removesuffix("|").split("|")
    out = []
    for cell in cells:
        c = cell.strip()
        out.append((":" if c.startswith(":") else "") + "---" + (":" if c.endswith(":") and len(c) > 1 else ""))
    compact = "| " + " | ".join(out) + " |"
    return compact if len(compact) < len(line) else line


def is_table_syntax(text: str) -> bool:
    """Only pipes, dashes, colons and whitespace: table syntax with nothing for a reader."""
    return not text.strip(" \t\n|-:")
