"""A fenced code block as one chunk unit: its code, and a fence safe to repeat on every piece of it."""

from __future__ import annotations

from collections.abc import Callable

from bookrag.ingestion.packer import CODE, Unit
from bookrag.text.markdown.blocks import Fence, closes_fence, deindent

__all__ = ["code_unit"]


def code_unit(lines: list[str], start: int, fence: Fence, tok: Callable[[str], int], budget: int
              ) -> tuple[Unit | None, int]:
    """(the unit of the block `fence` opens at `start`, or None when it holds no code; the index after it)."""
    body: list[str] = []
    i = start + 1
    while i < len(lines):
        if closes_fence(lines[i], fence):
            i += 1
            break
        body.append(deindent(lines[i], fence.indent))
        i += 1
    # An unclosed fence runs to the end of the document; the chunk closes it so it stays valid.
    lo, hi = 0, len(body)
    while lo < hi and not body[lo].strip():
        lo += 1
    while hi > lo and not body[hi - 1].strip():
        hi -= 1
    if lo == hi:
        return None, i
    code = tuple(body[lo:hi])
    # The fence is repeated on every piece, so a hostile one is shrunk: just long enough that no
    # line of the code closes it, and an info string of sane length (language and a little meta).
    bare = [c.strip() for c in code]
    inner = max((len(b) for b in bare if b and not b.strip(fence.char)), default=0)
    marks = fence.char * min(fence.length, max(3, inner + 1))
    info = fence.open_line.lstrip(fence.char).strip()
    if len(info) > 100 or tok(marks + info) > budget // 4:
        info = (info.split(None, 1) or [""])[0][:40]
    if tok(marks + info) > budget // 4:
        info = ""
    head = marks + info
    text = f"{head}\n" + "\n".join(code) + f"\n{marks}"
    return Unit(text, tok(text), CODE, head, marks, code), i
