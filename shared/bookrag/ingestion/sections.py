"""A document body cut into heading sections of blocks, and blocks cut to fit a token budget.

`Chunker` holds one document's budget (in the caller's tokens and in characters) and the rules that
know Markdown: where a section starts (ATX headings outside fenced code, anchored as Docusaurus does),
what a block is (paragraph, list, table, fenced code), and how a block too big for one chunk is cut so
every piece still reads right: prose by lines, sentences, words, then characters; a table by rows
under a repeated header; code by lines, each piece re-fenced. Packing the pieces is `packer`'s job.

Everything is iterative (no recursion whose depth the input controls) and every scan is linear, so a
1 MB line, thousands of headings or an unclosed fence cannot blow up an ingest.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from bookrag.ingestion.code_units import code_unit
from bookrag.ingestion.packer import (
    CODE,
    HEADING,
    LIST,
    OVERLAP,
    PROSE,
    SEP,
    TABLE,
    Atom,
    Limits,
    Packer,
    Unit,
    pack_atoms,
)
from bookrag.text.markdown.blocks import (
    LIST_ITEM,
    Fence,
    compact_table_sep,
    defuse_fence,
    defuse_lines,
    is_table_sep,
    is_table_syntax,
    open_fence,
)
from bookrag.text.markdown.headings import Slugger, heading_texts, parse_heading
from bookrag.text.markdown.marks import PARTIAL_END, PARTIAL_START
from bookrag.text.sentence_splitter import SentenceSplitter

__all__ = ["Chunker", "Section"]

# A section smaller than this (heading line included) is folded into a neighbour, so a heading that
# is immediately followed by a subheading does not become a chunk of its own.
_TINY_SECTION_TOKENS = 25
# The default counter (and a wordpiece tokenizer, which maps a >100-char word to one [UNK]) can see a
# huge run of characters as a single token, so chunks are also capped in characters.
_CHARS_PER_TOKEN_CAP = 16

_WORD_WITH_SPACE = re.compile(r"\s*\S+")
# A thematic break (`---`, `***`, `___`, spaced or not) draws a rule: no text. Kept, a `---` after a code
# block could be the only thing left of a section once its code is packed, a chunk of dashes.
_THEMATIC_BREAK = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
# Overlap and over-long lines are cut at sentence ends. A stop inside a closing quote counts; nothing
# else is second-guessed ("e.g. x" may end a piece): a cut only has to fall between words.
_SENTENCES = SentenceSplitter(closers=True)


@dataclass(slots=True)
class Section:
    """The units under one heading, that heading's line first; level 0 holds the text before any."""

    level: int  # 0 for text before the first heading
    path: tuple[str, ...]
    anchor: str
    units: list[Unit]


def _trim_blank_lines(text: str) -> str:
    lines = text.split("\n")
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end])


class Chunker:
    """One document's budget and the Markdown rules that cut its body into fitting units."""

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
        self.slugger = Slugger()

    def tok(self, text: str) -> int:
        return max(0, self.count_raw(text) - self.base)

    # -- sections and blocks ----------------------------------------------------------------

    def sections(self, body: str) -> list[Section]:
        lines = body.replace("\r\n", "\n").split("\n")
        sections = [Section(0, (), "", [])]
        stack: list[tuple[int, str]] = []
        para: list[str] = []
        outer: list[Slugger] = []  # the including files' sluggers while a partial's text is read
        i = 0
        while i < len(lines):
            line = lines[i]
            if line in (PARTIAL_START, PARTIAL_END):
                # Docusaurus compiles a partial apart: its heading ids come from a slugger of its own.
                self._end_paragraph(para, sections[-1].units)
                if line == PARTIAL_START:
                    outer.append(self.slugger)
                    self.slugger = Slugger()
                elif outer:
                    self.slugger = outer.pop()
                i += 1
                continue
            fence = open_fence(line)
            if fence is not None:
                self._end_paragraph(para, sections[-1].units)
                i = self._code_block(lines, i, fence, sections[-1].units)
                continue
            heading = parse_heading(line)
            if heading is not None:
                self._end_paragraph(para, sections[-1].units)
                i += 1
                level, raw = heading
                display, anchor, explicit = heading_texts(raw)
                if not display:
                    continue  # an empty heading ("#") carries nothing to index
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, display))
                if not explicit:  # Docusaurus does not enter explicit ids in its slugger
                    anchor = self.slugger.slug(anchor)
                if level == 1:
                    anchor = ""  # the theme renders an H1 without an id: its chunks cite the page's top
                path = tuple(t for _, t in stack)
                sections.append(Section(level, path, anchor, [Unit(display, self.tok(display), HEADING)]))
                continue
            if not para and _THEMATIC_BREAK.fullmatch(line):
                i += 1  # after a paragraph line `---` would underline a heading instead: left to the paragraph
                continue
            if line.strip():
                para.append(line.rstrip())
            else:
                self._end_paragraph(para, sections[-1].units)
            i += 1
        self._end_paragraph(para, sections[-1].units)
        return [s for s in sections if s.units]

    def _code_block(self, lines: list[str], start: int, fence: Fence, units: list[Unit]) -> int:
        unit, end = code_unit(lines, start, fence, self.tok, self.budget)
        if unit is not None:
            units.append(unit)
        return end

    def _end_paragraph(self, para: list[str], units: list[Unit]) -> None:
        if not para:
            return
        text = "\n".join(para)
        para.clear()
        first = text.split("\n", 1)[0]
        second = text.split("\n", 2)[1] if "\n" in text else ""
        separated = is_table_sep(second)
        if first.lstrip().startswith("|") or ("|" in first and separated):
            kind = TABLE
            if separated:
                rows = text.split("\n")
                rows[1] = compact_table_sep(second)
                text = "\n".join(rows)
        elif LIST_ITEM.match(first):
            kind = LIST
        else:
            kind = PROSE
        tokens = self.tok(text)
        prev = units[-1] if units else None
        # A loose list (items separated by blank lines, indented continuations) stays one block.
        if prev is not None and prev.kind == LIST and (kind == LIST or first[:1] in " \t"):
            units[-1] = Unit(prev.text + SEP + text, prev.tokens + tokens, LIST)
            return
        units.append(Unit(text, tokens, kind))

    # -- splitting an oversized block -----------------------------------------------------------

    def split(self, unit: Unit, first: Limits) -> list[Unit]:
        if unit.kind == CODE:
            return self._split_code(unit, first, (self.budget, self.char_cap))
        if unit.kind == TABLE:
            return self._split_table(unit, first, (self.budget, self.char_cap))
        # Prose pieces leave room for the overlap the next chunk will start with.
        rest = (self.budget - self.overlap, max(1, self.char_cap - self.overlap * _CHARS_PER_TOKEN_CAP))
        if unit.kind != PROSE:
            rest = (self.budget, self.char_cap)
        atoms = self._text_atoms(unit.text, rest)
        return self._prose_units(pack_atoms(atoms, first, rest, self.tiny, guard=True), unit.kind)

    def _prose_units(self, pieces: list[tuple[str, int]], kind: str, prefix: str = "") -> list[Unit]:
        """Units from packed pieces of text, lines that would read as a fence defused (budgeted for
        by `guard=True` packing)."""
        units: list[Unit] = []
        for text, tokens in pieces:
            if not text.strip() or (kind == TABLE and is_table_syntax(text)):
                continue  # a piece of a table's syntax alone (its delimiter row) tells a reader nothing
            fixed = defuse_lines(text)
            if fixed != text:
                tokens = self.tok(fixed)
            if prefix:
                fixed = f"{prefix}\n{fixed}"
                tokens += self.tok(prefix)
            units.append(Unit(fixed, tokens, kind))
        return units

    def _text_atoms(self, text: str, limit: Limits) -> list[Atom]:
        """Lines, else sentences, else words, else character slices: the largest that fit.

        One token and one character of `limit` are kept spare for the fence charge of `pack_atoms`.
        """
        limit = (max(1, limit[0] - 1), max(1, limit[1] - 1))
        atoms: list[Atom] = []
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

    def _word_atoms(self, word: str, sep: str, limit: Limits) -> list[Atom]:
        tokens = self.tok(word)
        if tokens <= limit[0] and len(word) <= limit[1]:
            return [(sep, word, tokens)]
        pieces = self._hard_split(word, limit)
        return [(sep if k == 0 else "", piece, self.tok(piece)) for k, piece in enumerate(pieces)]

    def _hard_split(self, word: str, limit: Limits) -> list[str]:
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

    def _split_code(self, unit: Unit, first: Limits, rest: Limits) -> list[Unit]:
        head, tail = unit.fence_open, unit.fence_close
        fence_t = self.tok(head) + self.tok(tail)
        fence_c = len(head) + len(tail) + 2
        inner_first = (first[0] - fence_t, first[1] - fence_c)
        inner_rest = (max(1, rest[0] - fence_t), max(1, rest[1] - fence_c))
        atoms: list[Atom] = []
        for line in unit.code_lines:
            tokens = self.tok(line)
            if tokens <= inner_rest[0] and len(line) <= inner_rest[1]:
                atoms.append(("\n", line, tokens))
                continue
            # An over-long code line is cut between words (each cut keeps its leading whitespace),
            # else mid-word; every piece becomes a line of its own.
            parts: list[Atom] = []
            for m in _WORD_WITH_SPACE.finditer(line):
                parts.extend(self._word_atoms(m.group(0), "", inner_rest))
            atoms.extend(("\n", text, n) for text, n in pack_atoms(parts, inner_rest, inner_rest))
        # Cutting a long line can leave a piece made only of fence characters; the fence must outgrow
        # it or that piece would close the block early.
        char = tail[0]
        longest = max((len(a[1].strip()) for a in atoms if a[1].strip() and not a[1].strip(char)), default=0)
        if longest >= len(tail):
            tail = char * (longest + 1)
            head = tail + head.lstrip(char)
            fence_t = self.tok(head) + self.tok(tail)
        units: list[Unit] = []
        for body, tokens in pack_atoms(atoms, inner_first, inner_rest, self.tiny):
            body = _trim_blank_lines(body)
            if body.strip():
                text = f"{head}\n{body}\n{tail}"
                units.append(Unit(text, tokens + fence_t, CODE, head, tail, tuple(body.split("\n"))))
        return units

    def _split_table(self, unit: Unit, first: Limits, rest: Limits) -> list[Unit]:
        lines = unit.text.split("\n")
        header = "\n".join(lines[:2]) if len(lines) > 2 and is_table_sep(lines[1]) else ""
        head_t = self.tok(header)
        if not header or head_t > rest[0] // 2 or len(header) > rest[1] // 2:
            atoms = self._text_atoms(unit.text, rest)
            return self._prose_units(pack_atoms(atoms, first, rest, self.tiny, guard=True), TABLE)
        # Every piece repeats the header row, so each is a readable table on its own.
        inner_first = (first[0] - head_t, first[1] - len(header) - 1)
        inner_rest = (rest[0] - head_t, rest[1] - len(header) - 1)
        atoms = self._text_atoms("\n".join(lines[2:]), inner_rest)
        pieces = pack_atoms(atoms, inner_first, inner_rest, self.tiny, guard=True)
        return self._prose_units(pieces, TABLE, prefix=header)

    # -- overlap and packing ---------------------------------------------------------------------

    def overlap_unit(self, last: Unit) -> Unit | None:
        """Whole trailing sentences of a prose unit, at most `overlap` tokens in all."""
        if self.overlap <= 0 or last.kind != PROSE:
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

    def _overlap_from(self, taken: list[str], total: int) -> Unit | None:
        if not taken:
            return None
        text = " ".join(reversed(taken))
        defused = defuse_fence(text)
        return Unit(defused, total if defused == text else self.tok(defused), OVERLAP)

    def pack(self, units: list[Unit]) -> list[list[Unit]]:
        packer = Packer(self)
        for unit in units:
            packer.feed(unit)
        return packer.finish()

    def fits_together(self, a: list[Unit], b: list[Unit]) -> bool:
        tokens = sum(u.tokens for u in a) + sum(u.tokens for u in b)
        chars = sum(len(u.text) + len(SEP) for u in a) + sum(len(u.text) + len(SEP) for u in b)
        return tokens <= self.budget and chars <= self.char_cap

    def render(self, units: list[Unit]) -> list[tuple[str, int]]:
        """Chunk texts with their real counts.

        Packing sums per-unit counts. A counter that is not additive (one that charges for the joining
        whitespace, say) can still put a chunk over budget: it is halved by units, and a single unit is
        re-cut with a proportionally smaller limit, until every piece fits or cannot be cut further.
        """
        out: list[tuple[str, int]] = []
        stack = [units]
        while stack:
            group = stack.pop()
            if all(u.kind == OVERLAP for u in group):
                continue
            text = SEP.join(u.text for u in group).strip("\n")
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

    def _recut(self, unit: Unit, limit_t: int) -> list[Unit]:
        limits = (limit_t, self.char_cap)
        if unit.kind == CODE:
            return self._split_code(unit, limits, limits)
        if unit.kind == TABLE:
            return self._split_table(unit, limits, limits)
        atoms = self._text_atoms(unit.text, limits)
        kind = PROSE if unit.kind == OVERLAP else unit.kind
        return self._prose_units(pack_atoms(atoms, limits, limits, guard=True), kind)
