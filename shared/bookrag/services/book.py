"""The book as documents: its table of contents and each document's text, read back from the store.

The store holds chunks, not files (on Lambda there are no files), so a document is rebuilt from its
chunks in order, with the prose overlap that consecutive chunks share written once. A document is
named by its Docusaurus route, the path of its `source_url` below BOOK_BASE_URL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from bookrag.adapters.store.port import BookStore
from bookrag.domain.models import PAYLOAD_FIELDS, ChunkPayload
from bookrag.text.overlap import carried_over

_TOC_FIELDS = ("source_file", "source_url", "doc_title", "module_name", "page_number", "total_chunks",
               "chunk_index", "section_heading")


@dataclass(frozen=True, slots=True)
class DocumentEntry:
    route: str
    title: str
    module_name: str
    source_file: str
    url: str
    page_number: int
    sections: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"route": self.route, "title": self.title, "module_name": self.module_name,
                "source_file": self.source_file, "url": self.url, "page_number": self.page_number,
                "sections": list(self.sections)}


def route_of(source_url: str, base_url: str) -> str:
    """`BOOK_BASE_URL/module-1/nodes#anchor` -> `/module-1/nodes` (the URL's path if the base differs)."""
    page = source_url.split("#", 1)[0]
    base = base_url.rstrip("/")
    path = page[len(base):] if base and page.startswith(base) else urlsplit(page).path
    return "/" + path.strip("/")


def table_of_contents(store: BookStore, base_url: str) -> list[DocumentEntry]:
    """Every document in reading order (sidebar page number, then file), with its sections in order."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for payload in store.scroll_payloads(_TOC_FIELDS):
        rows.setdefault(str(payload.get("source_file") or ""), []).append(payload)
    entries = []
    for source_file, chunks in rows.items():
        chunks.sort(key=lambda p: int(p.get("chunk_index") or 0))
        first = chunks[0]
        sections = tuple(dict.fromkeys(str(p.get("section_heading") or "") for p in chunks if p.get("section_heading")))
        url = str(first.get("source_url") or "").split("#", 1)[0]
        entries.append(DocumentEntry(route=route_of(url, base_url), title=str(first.get("doc_title") or source_file),
                                     module_name=str(first.get("module_name") or ""), source_file=source_file,
                                     url=url, page_number=int(first.get("page_number") or 0), sections=sections))
    return sorted(entries, key=lambda e: (e.page_number, e.source_file))


def document_text(store: BookStore, entry: DocumentEntry) -> str:
    """The document as Markdown: its title, its URL, then its chunks in order, section headings restored."""
    chunks = _chunks(store, entry)
    parts = [f"# {entry.title}", f"Source: {entry.url}"]
    section, previous = None, ""
    for chunk in chunks:
        text = chunk.content_text
        if chunk.section_heading != section:
            section, previous = chunk.section_heading, ""
            if section and section != entry.title:
                parts.append(f"## {section}")
        shared = carried_over(previous, text)
        if text[shared:].strip():
            parts.append(text[shared:].strip())
        previous = text
    return "\n\n".join(parts) + "\n"


@dataclass(frozen=True, slots=True)
class Section:
    heading: str
    url: str  # the section's source_url: the book page and its anchor
    markdown: str


def chapter(store: BookStore, entry: DocumentEntry) -> list[Section]:
    """The document's sections in order, for a reader (the demo page): each chunk's text once, without
    the heading lines the chunker repeats at the top of each chunk."""
    sections: list[Section] = []
    for heading, url, parts in _sections(store, entry):
        sections.append(Section(heading, url, "\n\n".join(parts)))
    return sections


def _sections(store: BookStore, entry: DocumentEntry) -> list[tuple[str, str, list[str]]]:
    out: list[tuple[str, str, list[str]]] = []
    previous = ""
    for chunk in _chunks(store, entry):
        if not out or out[-1][0] != chunk.section_heading:
            out.append((chunk.section_heading, chunk.source_url, []))
            previous = ""
        text = chunk.content_text[carried_over(previous, chunk.content_text):]
        previous = chunk.content_text
        headings = {chunk.doc_title, chunk.section_heading, *chunk.heading_path}
        paragraphs = text.strip().split("\n\n")
        while paragraphs and paragraphs[0].strip() in headings:
            paragraphs.pop(0)
        if paragraphs:
            out[-1][2].append("\n\n".join(paragraphs))
    return out


def _chunks(store: BookStore, entry: DocumentEntry) -> list[ChunkPayload]:
    return sorted((ChunkPayload.from_dict(p) for p in store.scroll_payloads(PAYLOAD_FIELDS, entry.source_file)),
                  key=lambda c: c.chunk_index)

