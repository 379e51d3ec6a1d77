"""The pieces a chunk is made of, and the greedy packing that fills chunks with them.

Packing is kept apart from the rules that produce pieces (`sections.Chunker`): it only sees token
and character counts, so its bound (no chunk over budget unless a single piece cannot be cut) can be
read, and trusted, on its own. `pack_atoms` packs the atoms of one oversized block; `Packer` packs a
section's units into chunks, asking the chunker to split a unit that does not fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "CODE",
    "HEADING",
    "LIST",
    "OVERLAP",
    "PROSE",
    "SEP",
    "TABLE",
    "Atom",
    "Limits",
    "Packer",
    "Unit",
    "pack_atoms",
]

SEP = "\n\n"  # between blocks of a chunk

# Unit kinds. Only PROSE is overlapped: repeating code or table rows adds noise, not context.
HEADING = "heading"
PROSE = "prose"
LIST = "list"
TABLE = "table"
CODE = "code"
OVERLAP = "overlap"

Atom = tuple[str, str, int]  # (separator before it, text, tokens)
Limits = tuple[int, int]  # (tokens, characters)


@dataclass(slots=True)
class Unit:
    """A piece of a chunk: a block, part of a split block, a heading line or an overlap."""

    text: str
    tokens: int
    kind: str
    fence_open: str = ""
    fence_close: str = ""
    code_lines: tuple[str, ...] = ()


def _fence_charge(sep: str, text: str, starts_group: bool) -> int:
    """1 for an atom that starts a line with a backtick or tilde: the line may need a backslash."""
    return 1 if (starts_group or "\n" in sep) and text.lstrip()[:1] in ("`", "~") else 0


def pack_atoms(
    atoms: list[Atom], first: Limits, rest: Limits, min_tail: int = 0, guard: bool = False
) -> list[tuple[str, int]]:
    """Greedy packing: the first piece within `first`, later ones within `rest`.

    If the last piece ends up under `min_tail` tokens, atoms move to it from the piece before (within
    `rest`), so splitting a block does not leave a near-empty tail chunk behind. With `guard`, every
    line that starts with a backtick or tilde is charged one token and one character, room for the
    backslash `defuse_lines` may add once pieces are joined.
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


class Budget(Protocol):
    """What packing asks of the chunker (`sections.Chunker`): its limits, how to split a unit that does
    not fit, and the overlap a chunk carries into the next."""

    budget: int
    char_cap: int
    tiny: int
    min_first_chars: int

    def split(self, unit: Unit, first: Limits) -> list[Unit]: ...

    def overlap_unit(self, last: Unit) -> Unit | None: ...


class Packer:
    """Greedy packing of one section's units into chunks, splitting blocks that do not fit."""

    def __init__(self, chunker: Budget) -> None:
        self.ck = chunker
        self.chunks: list[list[Unit]] = []
        self.cur: list[Unit] = []
        self.used_t = 0
        self.used_c = 0

    def _fits(self, unit: Unit) -> bool:
        tokens_ok = self.used_t + unit.tokens <= self.ck.budget
        return tokens_ok and self.used_c + len(unit.text) + len(SEP) <= self.ck.char_cap

    def _add(self, unit: Unit) -> None:
        self.cur.append(unit)
        self.used_t += unit.tokens
        self.used_c += len(unit.text) + len(SEP)

    def _has_content(self) -> bool:
        return any(u.kind != OVERLAP for u in self.cur)

    def _flush(self, upcoming: Unit | None) -> None:
        """Close the current chunk; start the next with an overlap if it leaves room for `upcoming`."""
        overlap = None
        if self._has_content():
            self.chunks.append(self.cur)
            overlap = self.ck.overlap_unit(self.cur[-1])
        self.cur, self.used_t, self.used_c = [], 0, 0
        if overlap is not None and (upcoming is None or self._fits_pair(overlap, upcoming)):
            self._add(overlap)

    def _fits_pair(self, a: Unit, b: Unit) -> bool:
        tokens_ok = a.tokens + b.tokens <= self.ck.budget
        return tokens_ok and len(a.text) + len(b.text) + 2 * len(SEP) <= self.ck.char_cap

    def feed(self, unit: Unit) -> None:
        if self._fits(unit):
            self._add(unit)
            return
        ck = self.ck
        oversized = unit.tokens > ck.budget or len(unit.text) + len(SEP) > ck.char_cap
        # Flushing a chunk that holds little more than a heading would leave a near-empty chunk, so
        # a splittable block is cut to fill it instead.
        thin = self._has_content() and self.used_t < ck.tiny and unit.kind != HEADING
        if not oversized and not thin:
            self._flush(unit)
            self._add(unit)
            return
        if ck.budget - self.used_t < ck.tiny or ck.char_cap - self.used_c < ck.min_first_chars:
            self._flush(None)
        first = (ck.budget - self.used_t, ck.char_cap - self.used_c - len(SEP))
        for piece in ck.split(unit, first):
            if not self._fits(piece):
                self._flush(piece)
            self._add(piece)  # a piece still over budget here is the documented unsplittable case

    def finish(self) -> list[list[Unit]]:
        if self._has_content():
            self.chunks.append(self.cur)
        self.cur = []
        return self.chunks
