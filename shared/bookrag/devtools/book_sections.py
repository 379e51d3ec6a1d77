"""A book's Markdown files as heading sections, and where a piece of quoted text sits in them.

The answer evaluation (`answer_eval`) maps each sentence of an answer to the book section it was quoted
from. A quote is the chunk's cleaned text (Markdown emphasis, ticks, admonition syntax may differ from
the file), so text is compared as **word tokens**: lower-case runs of letters and digits, everything
else dropped. A quote is located where its first `PROBE_TOKENS` tokens occur contiguously in a file;
the section is the innermost heading section holding that point (its own text, up to the next heading
of any level), and its `path` the headings above it, itself last.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from bookrag.text.markdown.blocks import Fence, closes_fence, open_fence
from bookrag.text.markdown.front_matter import split_front_matter
from bookrag.text.markdown.headings import heading_texts, parse_heading

__all__ = ["PROBE_TOKENS", "Book", "Section", "tokens"]

# Enough words to be unique in a book, few enough to stay inside one section.
PROBE_TOKENS = 10
_WORD = re.compile(r"[^\W_]+")


def tokens(text: str) -> list[str]:
    """Lower-case word tokens (letters and digits): how quotes, answers and files are compared."""
    return _WORD.findall(text.lower())


@dataclass(frozen=True, slots=True)
class Section:
    """One heading's own text (up to the next heading of any level) in one file."""

    file: str
    level: int  # 0: text before the first heading
    heading: str  # as written after the #s, e.g. "3.1 Understanding Services in ROS 2"
    path: tuple[str, ...]  # display texts of the headings above it, itself last
    text: str  # its own lines, the heading line included
    levels: tuple[int, ...] = ()  # the level of each heading of `path`

    def topic(self) -> str:
        """Its headings below the page title (H1), or the title for text under the title alone."""
        below = [h for h, level in zip(self.path, self.levels, strict=True) if level > 1]
        return " ".join(below or self.path)


def _same_heading(text: str) -> str:
    return " ".join(tokens(text))


@dataclass(slots=True)
class _File:
    sections: list[Section]
    joined: str = ""  # " tok tok tok " of the whole file
    owner: list[int] = field(default_factory=list)  # section index of each character of `joined`


def _sections(rel: str, text: str) -> list[Section]:
    _, body = split_front_matter(text)
    out: list[Section] = []
    stack: list[tuple[int, str]] = []
    level, heading = 0, ""
    lines: list[str] = []
    fence: Fence | None = None
    for line in body.split("\n"):
        if fence is not None:
            fence = None if closes_fence(line, fence) else fence
        elif (fence := open_fence(line)) is None and (parsed := parse_heading(line)) is not None:
            out.append(_section(rel, level, heading, stack, lines))
            level, heading = parsed
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading_texts(heading)[0]))
            lines = []
        lines.append(line)
    out.append(_section(rel, level, heading, stack, lines))
    return [s for s in out if s.text.strip()]


def _section(rel: str, level: int, heading: str, stack: list[tuple[int, str]], lines: list[str]) -> Section:
    return Section(rel, level, heading, tuple(h for _, h in stack), "\n".join(lines), tuple(n for n, _ in stack))


class Book:
    """The Markdown files under a docs folder, read once, as sections."""

    def __init__(self, docs: Path) -> None:
        self.docs = docs
        self._files: dict[str, _File] = {}

    def file(self, rel: str) -> list[Section]:
        """The sections of `rel` (a path under docs/); [] when there is no such file."""
        return self._load(rel).sections

    def _load(self, rel: str) -> _File:
        if rel not in self._files:
            path = self.docs / rel
            sections = _sections(rel, path.read_text(encoding="utf-8")) if path.is_file() else []
            loaded = _File(sections)
            parts, owner = [" "], [0]
            for index, section in enumerate(sections):
                piece = " ".join(tokens(section.text)) + " "
                parts.append(piece)
                owner.extend([index] * len(piece))
            loaded.joined, loaded.owner = "".join(parts), owner
            self._files[rel] = loaded
        return self._files[rel]

    def gold(self, rel: str, heading: str, passage: str = "") -> list[Section]:
        """The sections headed `heading` in `rel` (their own text: a subsection is another section),
        narrowed to the one holding `passage` when several share the heading."""
        wanted = _same_heading(heading)
        heads = [s for s in self.file(rel) if _same_heading(s.heading) == wanted]
        probe = " ".join(tokens(passage)[:PROBE_TOKENS])
        holding = [h for h in heads if probe and probe in " ".join(tokens(h.text))]
        return holding[:1] if len(heads) > 1 and holding else heads

    def locate(self, text: str, rel: str | None = None) -> Section | None:
        """The section `text` was quoted from: in `rel` if given, else in any file already loaded, else
        in every Markdown file of the book. None when its words are nowhere (or it has none)."""
        words = tokens(text)
        if not words:
            return None
        # The first words, else the last ones (an answer may reword how a quote begins).
        probes = dict.fromkeys(" " + " ".join(part) + " " for part in (words[:PROBE_TOKENS], words[-PROBE_TOKENS:]))
        for probe in probes:
            for name in [rel] if rel else self._all_files():
                loaded = self._load(name)
                at = loaded.joined.find(probe)
                if at >= 0:
                    return loaded.sections[loaded.owner[at + 1]]
        return None

    def _all_files(self) -> list[str]:
        found = [p for p in self.docs.rglob("*") if p.suffix in (".md", ".mdx") and p.is_file()]
        return sorted(str(p.relative_to(self.docs)) for p in found)

