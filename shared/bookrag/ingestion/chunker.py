"""Docusaurus Markdown/MDX source -> heading-aware chunk drafts: the ingestion pipeline's text half.

`parse_document` turns one source file into a `ParsedDocument`: its front matter, the route Docusaurus
serves the page at, and a body with the MDX machinery removed but every piece of readable text kept
(the Markdown rules live in `bookrag.text.markdown`, shared with whatever else reads the book).

`chunk_document` splits that body at ATX headings and packs each section's blocks (paragraphs, lists,
tables, fenced code) into chunks of at most `max_tokens` (`sections` cuts, `packer` packs). Chunk
ids are derived from a chunk's position, so anything here that moves a boundary re-embeds the book:
`INGEST_VERSION` in `ingestor` must be bumped with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bookrag.errors import DocumentError
from bookrag.ingestion.packer import Unit
from bookrag.ingestion.sections import Chunker, Section
from bookrag.text.markdown import (
    PartialReader,
    clean_body,
    compute_route,
    expand_partials,
    first_h1,
    heading_anchor,
    non_blank,
    normalise_source,
    pretty_name,
    split_front_matter,
    to_float,
)
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
    includes: tuple[str, ...] = ()  # the partials its text includes (docs-relative), for change detection
    warnings: tuple[str, ...] = ()  # includes left out (missing, cyclic, unreadable), each naming its file


@dataclass(frozen=True, slots=True)
class ChunkDraft:
    """A chunk before it is embedded: its text and where in the doc it comes from."""

    text: str
    heading_path: tuple[str, ...]
    section_heading: str
    anchor: str
    token_count: int
    titled: bool = True  # the page opens with its title as an H1 (else its path starts at an H2)

    def path_from(self, title: str) -> tuple[str, ...]:
        """The stored heading path: from the page's title down, as for a page that opens with an H1 (many Markdown
        sites' pages take their title from front matter or the file name and start at an H2)."""
        return self.heading_path if self.titled or not self.heading_path else (title, *self.heading_path)


def parse_document(
    text: str, rel_path: str, read_partial: PartialReader | None = None, *, max_partial_chars: int = 4_000_000,
    site: str | None = None,
) -> ParsedDocument:
    """Parse one Docusaurus Markdown/MDX file; `rel_path` is relative to the docs folder.

    With `read_partial`, local Markdown files the page imports and renders as components are read
    through it and their text set in place (`text.markdown.partials`), at most `max_partial_chars` of it;
    `site` (the site folder, docs-relative) lets `@site/` imports and imports out of the docs resolve.

    Raises DocumentError for a file with nothing to index (empty, only front matter or components)
    or one that looks binary.
    """
    if "\x00" in text:
        raise DocumentError(f"{rel_path}: looks like a binary file", details={"rel_path": rel_path})
    text = normalise_source(text)
    front, rest = split_front_matter(text)
    includes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    if read_partial is not None:
        expansion = expand_partials(rest, rel_path, read_partial, max_chars=max_partial_chars, site=site)
        rest, includes, warnings = expansion.text, expansion.included, expansion.warnings
    body = clean_body(rest)
    if not body.strip():
        raise DocumentError(
            f"{rel_path}: document is empty (only whitespace, front matter or components)",
            details={"rel_path": rel_path},
        )
    slug = non_blank(front.get("slug"))
    title = non_blank(front.get("title")) or first_h1(body) or pretty_name(rel_path)
    return ParsedDocument(
        rel_path=rel_path,
        title=title,
        slug=slug,
        sidebar_position=to_float(front.get("sidebar_position")),
        route=compute_route(rel_path, slug, non_blank(front.get("id"))),
        body=body,
        description=non_blank(front.get("description")),
        includes=includes,
        warnings=warnings,
    )


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
    chunker = Chunker(count_tokens or approx_token_count, max_tokens, overlap_tokens)
    sections = chunker.sections(doc.body)
    if not sections:
        message = f"{doc.rel_path}: document has no text to chunk"
        raise DocumentError(message, details={"rel_path": doc.rel_path})

    packed: list[tuple[Section, list[Unit]]] = []
    carry: list[Unit] = []
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
    titled = any(s.level == 1 for s in sections)
    for section, units in packed:
        heading = section.path[-1] if section.path else doc.title
        for text, tokens in chunker.render(units):
            drafts.append(ChunkDraft(text, section.path, heading, section.anchor, tokens, titled))
    return drafts
