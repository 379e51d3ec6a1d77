"""What of an MDX page's machinery a chunk still holds: the check behind the MDX benchmark and tests.

A reader of the rendered page never sees an `import` line, a comment, a raw JSX tag or a table's
delimiter row on its own; a chunk holding one is quoted and embedded as if the book said it. Fenced
code and inline code spans are skipped: a book may show all of these as code.
"""

from __future__ import annotations

import re

from bookrag.text.markdown.blocks import iter_outside_fences

__all__ = ["KINDS", "artefacts"]

KINDS = ("esm", "comment", "jsx", "table_shard")

_CODE_SPAN = re.compile(r"(`+)[^`]*?\1")
_ESM = re.compile(
    r"""\s*(?:import\s+(?:[\w$*{},\s]+\s+from\s*)?["']|import\s*\{|export\s+(?:default|const|let|var|function|class|async|\{|\*))"""
    r"""|.*\}\s*from\s*["']"""
)
_COMMENT = re.compile(r"\{\s*/\*|\*/\s*\}|<!--|-->|^\s{0,3}\[[^\]]*\]:\s*(?:#|<>)")
_JSX = re.compile(r"</?[A-Za-z][\w.:-]*(?:\s[^<>]*)?/?>")
_AUTOLINK = re.compile(r"<(?:https?|ftp|mailto):[^\s<>]*>|<[\w.+-]+@[\w-]+(?:\.[\w-]+)+>")
# Only pipes, dashes, colons and spaces. Written here, not imported from the chunker's `blocks.is_table_syntax`:
# the judge stays apart from the code it judges, and `benchmarks/mdx/measure.py` loads this file to judge
# the code from before issue 28 too, which has no such function.
_TABLE_SYNTAX = " \t|-:"


def artefacts(text: str, heading: str = "") -> list[str]:
    """The kinds of MDX artefact in one chunk's text (each kind once, in `KINDS` order).

    `heading` is the chunk's section heading: the chunk's first line when it opens the section, and
    not part of the table a chunk may otherwise hold only the syntax of.
    """
    found: set[str] = set()
    lines = list(iter_outside_fences(text.split("\n")))
    for raw in lines:
        line = _CODE_SPAN.sub("", raw)
        if _ESM.match(line):
            found.add("esm")
        if _COMMENT.search(line):
            found.add("comment")
        if _JSX.search(_AUTOLINK.sub("", line)):
            found.add("jsx")
    body = [line for line in lines if line.strip()]
    if body and heading and body[0].strip() == heading.strip():
        body = body[1:]
    if body and all(("|" in line or "-" in line) and not line.strip(_TABLE_SYNTAX) for line in body):
        found.add("table_shard")
    return [kind for kind in KINDS if kind in found]
