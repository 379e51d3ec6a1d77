"""MDX `import`/`export` statements: found, removed from the text, and read for local Markdown imports.

MDX reads a line that starts with `import` or `export` as the start of an ESM block that runs to the next
blank line (further while its brackets are open), so one block may hold several statements on one line,
a statement wrapped over lines (Prettier) or an `export const` component. The block is code the page runs,
never text. A block must look like ESM (a module string, or an export keyword) to be taken: "import the
data first." at the start of a paragraph of a plain `.md` book stays text.

`local_imports` reads the blocks for what a partial include needs: the name a page gives a local
Markdown/MDX file it imports (`import Setup from './_setup.mdx'`), so `<Setup />` can be rendered in place.
Every scan is linear in the block's size.
"""

from __future__ import annotations

import re

__all__ = ["LOCAL_DOC", "SITE_ALIAS", "local_imports", "split_esm"]

# Longest ESM block we look through; past this an `export` whose brackets never close ends at a blank line.
_MAX_ESM_LINES = 500
_MAX_ESM_LINE_CHARS = 2000

_IMPORT_START = re.compile(r"""import(?:\s+|(?=["'{*]))(?:type\s+)?[\w$*{"']""")
_EXPORT_START = re.compile(r"export\s+(?:default\b|const\b|let\b|var\b|function\b|async\b|class\b|\{|\*)")
_MODULE_STRING = re.compile(r"""\bfrom\s*["'][^"'\n]+["']|^import\s*["'][^"'\n]+["']""")
# Continuation lines of a statement: indented, closing a bracket, a module string, or the next statement.
_CONTINUES = ("import", "export", " ", "\t", "}", ")", "]", "'", '"', "from")
# Local Markdown a page imports as a component: the default import, or `{default as Name}`. Relative to
# the page, or to the site folder through Docusaurus's `@site/` alias. The path is a JavaScript string:
# Prettier escapes a Markdown-special `_` in it (`'./\_partial.md'`), which JavaScript reads as `_`.
SITE_ALIAS = "@site/"
LOCAL_DOC = r"""["']((?:\.{1,2}|@site)/[^"'\n]*\.mdx?)["']"""
_JS_ESCAPE = re.compile(r"\\(.)")
_DEFAULT_IMPORT = re.compile(r"import\s+([A-Za-z_$][\w$]*)\s+from\s*" + LOCAL_DOC)
_NAMED_DEFAULT = re.compile(r"import\s*\{\s*default\s+as\s+([A-Za-z_$][\w$]*)\s*\}\s*from\s*" + LOCAL_DOC)


def _starts_esm(line: str) -> bool:
    if len(line) > _MAX_ESM_LINE_CHARS:
        return False
    if line.startswith("import"):
        return _IMPORT_START.match(line) is not None
    return line.startswith("export") and _EXPORT_START.match(line) is not None


def _depth(line: str) -> int:
    return sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")


def _complete(text: str) -> bool:
    """A statement that could end here: not after `from`, a comma, an operator or an open bracket."""
    tail = text.rstrip()
    return not tail.endswith(("from", ",", "=", "=>", "(", "{", "[", "import", "export"))


def _block_end(lines: list[str], start: int) -> int:
    """Index just past the ESM block that starts at `start`."""
    depth = 0
    limit = min(len(lines), start + _MAX_ESM_LINES)
    j = start
    while j < limit:
        line = lines[j]
        depth += _depth(line)
        j += 1
        if j == len(lines) or not lines[j].strip():
            if depth <= 0:
                return j
            continue  # an open bracket carries the block over a blank line
        if depth <= 0 and _complete(line) and not lines[j].startswith(_CONTINUES):
            return j  # the next line is the page's text, not more of this statement
    # Brackets that never close: the block ends at the next blank line, as MDX would read it.
    for k in range(start + 1, len(lines)):
        if not lines[k].strip():
            return k
    return len(lines)


def split_esm(lines: list[str]) -> tuple[list[str], list[str]]:
    """(the lines that are not ESM, the ESM blocks' text). `lines` hold no fenced code."""
    kept: list[str] = []
    blocks: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not _starts_esm(line):
            kept.append(line)
            i += 1
            continue
        end = _block_end(lines, i)
        block = "\n".join(lines[i:end])
        if line.startswith("import") and _MODULE_STRING.search(block) is None:
            kept.extend(lines[i:end])  # "import" opening a sentence, not a statement
            i = end
            continue
        blocks.append(block)
        i = end
    return kept, blocks


def local_imports(blocks: list[str]) -> dict[str, str]:
    """Component name -> the local `.md`/`.mdx` path it was imported from, as written."""
    found: dict[str, str] = {}
    for block in blocks:
        for pattern in (_DEFAULT_IMPORT, _NAMED_DEFAULT):
            for m in pattern.finditer(block):
                found[m.group(1)] = _JS_ESCAPE.sub(r"\1", m.group(2))
    return found
