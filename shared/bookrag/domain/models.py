"""Domain shapes shared by ingest, retrieval and the interfaces."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

@dataclass(frozen=True, slots=True)
class ChunkPayload:
    """What is stored with every chunk: written by ingest, read by every interface.

    `source_url` is BOOK_BASE_URL + the page's Docusaurus route + `#anchor` of its section;
    `page_number` is the page's place in the sidebar's reading order; `heading_path` runs from the
    page's title down to the chunk's section; `file_hash` says which version of the file the chunk
    came from (incremental ingest), `content_hash` what the chunk says.
    """

    chunk_id: str
    content_text: str
    source_file: str
    source_url: str
    module_name: str
    section_heading: str
    heading_path: tuple[str, ...]
    doc_title: str
    chunk_index: int
    total_chunks: int
    token_count: int
    page_number: int
    created_at: float
    content_hash: str
    file_hash: str
    # The site edition the chunk belongs to (issue 35): "" for a docs folder ingested alone. `locale` is the
    # locale whose URL serves it, `content_locale` the language its text is in (the default locale's, for a
    # page the locale does not translate); `latest` marks the version the site serves by default.
    locale: str = ""
    version: str = ""
    content_locale: str = ""
    latest: bool = False
    default_locale: str = ""  # the site's default locale (where a request that names none reads)

    @property
    def citation_label(self) -> str:
        """'Doc title - Section' as the agent contract's `[Source: Chapter X - Section Y]`."""
        title = self.doc_title or self.module_name
        section = self.section_heading
        return f"{title} - {section}" if section and section != title else title

    def to_dict(self) -> dict[str, Any]:
        """The stored form (JSON types only)."""
        out = {name: getattr(self, name) for name in PAYLOAD_FIELDS}
        out["heading_path"] = list(self.heading_path)
        return out

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> ChunkPayload:
        """Read a stored payload. Tolerant of fields a store lacks (a partial or older point): each gets
        its empty value, so a reader never meets a missing key."""
        return cls(
            chunk_id=str(raw.get("chunk_id") or ""),
            content_text=str(raw.get("content_text") or ""),
            source_file=str(raw.get("source_file") or ""),
            source_url=str(raw.get("source_url") or ""),
            module_name=str(raw.get("module_name") or ""),
            section_heading=str(raw.get("section_heading") or ""),
            heading_path=tuple(str(h) for h in raw.get("heading_path") or ()),
            doc_title=str(raw.get("doc_title") or ""),
            chunk_index=int(raw.get("chunk_index") or 0),
            total_chunks=int(raw.get("total_chunks") or 0),
            token_count=int(raw.get("token_count") or 0),
            page_number=int(raw.get("page_number") or 0),
            created_at=float(raw.get("created_at") or 0.0),
            content_hash=str(raw.get("content_hash") or ""),
            file_hash=str(raw.get("file_hash") or ""),
            locale=str(raw.get("locale") or ""),
            version=str(raw.get("version") or ""),
            content_locale=str(raw.get("content_locale") or ""),
            latest=bool(raw.get("latest")),
            default_locale=str(raw.get("default_locale") or ""),
        )


PAYLOAD_FIELDS = tuple(ChunkPayload.__dataclass_fields__)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One ranked chunk. `score`: cosine similarity in [0, 1], a running minimum down the ranking (never
    above the chunk's own cosine); `rank_score`: what ranked it."""

    chunk_id: str
    score: float
    rank_score: float
    payload: ChunkPayload = field(repr=False)

    @property
    def text(self) -> str:
        return self.payload.content_text

    @property
    def source_file(self) -> str:
        return self.payload.source_file

    @property
    def section_heading(self) -> str:
        return self.payload.section_heading

    @property
    def chunk_index(self) -> int:
        return self.payload.chunk_index

    @property
    def citation_label(self) -> str:
        return self.payload.citation_label


@dataclass(frozen=True, slots=True)
class SearchResult:
    hits: list[SearchHit]
    total_candidates: int
    query_vector: list[float]
    embed_ms: float
    search_ms: float


@dataclass(frozen=True, slots=True)
class PointRecord:
    chunk_id: str
    dense: np.ndarray
    sparse: SparseVector
    payload: ChunkPayload



@dataclass(frozen=True, slots=True)
class StoredHit:
    chunk_id: str
    rank_score: float
    cosine: float
    payload: ChunkPayload



@dataclass(frozen=True, slots=True)
class Filters:
    module_name: str | None = None
    source_file: str | None = None
    locale: str | None = None  # a site's edition: its locale and version (payload `locale`, `version`)
    version: str | None = None

    def __bool__(self) -> bool:
        return bool(self.matches())

    def matches(self) -> list[tuple[str, str]]:
        """(payload field, value) for each filter set: each must match exactly."""
        fields = (("module_name", self.module_name), ("locale", self.locale), ("version", self.version),
                  ("source_file", self.source_file))
        return [(name, value) for name, value in fields if value]


def embedding_text(doc_title: str, heading_path: tuple[str, ...], text: str) -> str:
    """What is embedded: the chunk with its place in the book, which the chunk text alone may lack."""
    trail = " > ".join(p for p in (doc_title, *heading_path) if p)
    return f"{trail}\n\n{text}" if trail else text


@dataclass(frozen=True, slots=True)
class SparseVector:
    indices: list[int]
    values: list[float]
