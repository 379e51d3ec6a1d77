"""Incremental ingest of a Docusaurus docs tree into the vector store.

Safety: a file's new chunks are embedded before anything of it is written, then upserted over the
same deterministic ids, and only then are its surplus old chunks deleted. A failure part-way leaves
every file either at its old version or at its new one, never without chunks. Nothing is pruned
when the tree yields no readable file (a wrong path must not wipe the index).

Given a `seed` (the live version), the ingest fills a new, empty collection instead: unchanged files'
points are copied from the seed as stored, only changed files are embedded (see `ingestion.versions`).
Either way the collection ends up recording its `BookVersion`; an incremental ingest that changed
nothing keeps the version it had.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Protocol

from bookrag.adapters.store.port import BookStore
from bookrag.domain.book_version import BookVersion, content_hash, utc_now
from bookrag.domain.models import ChunkPayload, PointRecord, embedding_text
from bookrag.errors import DocumentError
from bookrag.ingestion.chunker import ChunkDraft, ParsedDocument, chunk_document, parse_document
from bookrag.ingestion.docusaurus_site import Edition, Site, edition_base_url, read_site, site_title
from bookrag.ingestion.files import decode, discover, git_commit, read_source
from bookrag.ingestion.site_folder import find_config, site_of_docs, up_to_site
from bookrag.text.bm25 import BM25Encoder

if TYPE_CHECKING:
    from bookrag.adapters.embedders import CachedEmbedder
    from bookrag.config.settings import Settings

# Bump when chunking or payload layout changes: every file is then re-embedded once.
INGEST_VERSION = "7"
CHUNK_NAMESPACE = uuid.UUID("5b0f3f0e-7a57-4b8e-9d2c-1f6f0c9a2b11")
EMBED_GROUP_CHUNKS = 256  # chunks embedded together: big enough to batch well, small enough to commit often
# What a page's hash takes for a partial it could not read (its bytes' hash otherwise).
_MISSING = hashlib.sha256(b"\0missing").digest()
_UNREADABLE = hashlib.sha256(b"\0unreadable").digest()


def chunk_uuid(source_file: str, chunk_index: int) -> str:
    return str(uuid.uuid5(CHUNK_NAMESPACE, f"{source_file}#{chunk_index}"))




class Progress(Protocol):
    def start(self, total: int) -> None: ...

    def advance(self, n: int) -> None: ...


@dataclass(slots=True)
class SourceFile:
    path: Path
    rel_path: str
    raw: bytes
    doc: ParsedDocument | None = None
    page_number: int = 0
    # The partials its text includes, each path and bytes: a changed partial changes the page's hash.
    included: bytes = b""
    edition: Edition | None = None  # a site's locale and version (None: a docs folder alone)
    translated: bool = True  # False: the default locale's page, served at this edition's URL


@dataclass(slots=True)
class IngestReport:
    files_seen: int = 0
    files_changed: int = 0
    files_unchanged: int = 0
    files_deleted: int = 0
    chunks_copied: int = 0
    chunks_total: int = 0
    chunks_embedded: int = 0
    tokens_embedded: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)  # indexed, but a partial was left out
    seconds: float = 0.0
    embed_seconds: float = 0.0
    book_version: BookVersion | None = None
    collection: str | None = None  # where the chunks went (a new version's collection, with --atomic)
    switched_from: str | None = None  # the collection the alias left (kept for rollback)
    dropped: list[str] = field(default_factory=list)  # versions older than the kept one

    def as_dict(self) -> dict[str, Any]:
        return {
            "files_seen": self.files_seen, "files_changed": self.files_changed,
            "files_unchanged": self.files_unchanged, "files_deleted": self.files_deleted,
            "chunks_total": self.chunks_total, "chunks_embedded": self.chunks_embedded,
            "tokens_embedded": self.tokens_embedded,
            "skipped": [{"file": f, "reason": r} for f, r in self.skipped],
            "warnings": [{"file": f, "warning": w} for f, w in self.warnings],
            "seconds": round(self.seconds, 3), "embed_seconds": round(self.embed_seconds, 3),
            "chunks_copied": self.chunks_copied,
            "book_version": self.book_version.to_dict() if self.book_version else None,
            "collection": self.collection, "switched_from": self.switched_from, "dropped": self.dropped,
        }


def _reading_order(files: list[SourceFile]) -> None:
    """Number files in sidebar order: folders and files by sidebar_position, then name."""
    folder_pos: dict[tuple[str, ...], float] = {}
    for f in files:
        parts = PurePosixPath(f.rel_path).parts
        if f.doc and PurePosixPath(f.rel_path).stem.lower() in ("index", "readme", "overview", "intro"):
            pos = f.doc.sidebar_position
            if pos is not None and len(parts) > 1:
                folder_pos.setdefault(parts[:-1], pos)

    def key(f: SourceFile) -> tuple[Any, ...]:
        parts = PurePosixPath(f.rel_path).parts
        out: list[tuple[float, str]] = []
        for depth in range(1, len(parts)):
            out.append((folder_pos.get(parts[:depth], float("inf")), parts[depth - 1]))
        pos = f.doc.sidebar_position if f.doc and f.doc.sidebar_position is not None else float("inf")
        # A file sorts among its folder siblings by (position, name); a folder's own entries after it.
        return (*[(0, *o) for o in out], (-1 if len(parts) == 1 else 1, pos, parts[-1]))

    for number, f in enumerate(sorted(files, key=key), start=1):
        f.page_number = number


class _Partials:
    """The partials pages include, each read, decoded and hashed once per ingest under the same rules as a page.

    Paths are relative to the docs folder `root`; a partial may sit anywhere inside `bound` (the site
    folder when known, else the docs folder), never beyond it."""

    def __init__(self, root: Path, limit: int, bound: Path | None = None) -> None:
        self.root = root
        self.bound = bound or root
        self.limit = limit
        # docs-relative path -> (its text, None when missing, or why it cannot be read; what a page's hash adds)
        self.read: dict[str, tuple[str | DocumentError | None, bytes]] = {}

    def _load(self, rel: str) -> tuple[str | DocumentError | None, bytes]:
        path = self.root / rel
        if not path.exists() and not path.is_symlink():
            return None, _MISSING
        try:
            raw = read_source(path, self.bound, self.limit)
        except DocumentError as exc:
            return exc, _UNREADABLE
        digest = hashlib.sha256(raw).digest()
        try:
            return decode(raw), digest
        except DocumentError as exc:
            return exc, digest

    def text(self, rel: str) -> str | None:
        if rel not in self.read:
            self.read[rel] = self._load(rel)
        value = self.read[rel][0]
        if isinstance(value, DocumentError):
            raise value
        return value

    def fingerprint(self, includes: tuple[str, ...]) -> bytes:
        """What a page's hash adds for its partials: each one's path and bytes (or that it was missing)."""
        return b"".join(b"\0include\0" + rel.encode() + b"\0" + self.read[rel][1] for rel in includes)


class Ingestor:
    def __init__(self, settings: Settings, embedder: CachedEmbedder, store: BookStore,
                 progress: Progress | None = None, *, seed: BookStore | None = None, title: str = "",
                 site: Site | None = None) -> None:
        self.settings = settings
        self.embedder = embedder
        self.store = store
        self.progress = progress
        self.seed = seed
        self.bm25 = BM25Encoder()
        # The site `load` read (or another ingestor's `load`, when one loads and another writes: an atomic
        # publish), None for a docs folder: its editions' URLs and default locale go into every chunk.
        self.site = site
        self.title = " ".join(title.split())  # `--title`, else the site's (set by `load`)

    def config_fingerprint(self) -> str:
        s = self.settings
        return (f"{INGEST_VERSION}|{self.embedder.name}|{s.chunk_max_tokens}|{s.chunk_overlap_tokens}|"
                f"{s.book_base_url}|{self.site.layout if self.site else ''}")  # a site's editions and URLs

    def load(self, root: Path, report: IngestReport) -> list[SourceFile]:
        """The pages under `root`: a Docusaurus site folder (every locale of every version, `docusaurus_site`)
        or a docs folder alone (whose site, when its parent is one, resolves `@site/` imports).

        Raises DocumentError for a site folder whose configuration names no docs to index."""
        if find_config(root) is None:
            site_root = site_of_docs(root)
            self.title = self.title or (site_title(site_root) if site_root else "")
            files = self._load_folder(root, report, site_root, None, {})
        else:
            self.site = site = read_site(root)
            self.title = self.title or site.title
            report.warnings.extend(("docusaurus.config", w) for w in site.warnings)
            readers: dict[Path, tuple[_Partials, str | None]] = {}  # a translation falls back on the default's
            files = [f for e in site.editions for f in self._load_folder(e.folder, report, root, e, readers)]
        _reading_order(files)
        return files

    def _load_folder(self, folder: Path, report: IngestReport, site: Path | None, edition: Edition | None,
                     readers: dict[Path, tuple[_Partials, str | None]]) -> list[SourceFile]:
        """One folder's pages (a translation's missing ones from the default locale); `readers`: partials read."""
        files: list[SourceFile] = []
        listed = edition.fallback if edition is not None and edition.fallback is not None else folder
        if not listed.is_dir():
            return files
        prefix = edition.key_prefix if edition is not None else ""
        limit = self.settings.max_document_bytes
        for path in discover(listed):
            rel = path.relative_to(listed).as_posix()
            own = folder / rel
            translated = listed == folder or own.is_file()
            root = folder if translated else listed
            if root not in readers:
                readers[root] = (_Partials(root, limit, site), None if site is None else up_to_site(root, site))
            partials, site_rel = readers[root]
            key = prefix + rel
            try:
                raw = read_source(root / rel, root, limit)
                doc = parse_document(decode(raw), rel, partials.text, max_partial_chars=4 * limit, site=site_rel)
            except DocumentError as exc:
                report.skipped.append((key, exc.message))
                continue
            report.warnings.extend((key, warning) for warning in doc.warnings)
            files.append(SourceFile(path=root / rel, rel_path=key, raw=raw, doc=doc, edition=edition,
                                    translated=translated, included=partials.fingerprint(doc.includes)))
        return files

    def plan(self, files: list[SourceFile], manifest: dict[str, dict[str, Any]]
             ) -> tuple[list[SourceFile], list[SourceFile]]:
        """The files to embed, and the unchanged files whose page number moved."""
        fingerprint = self.config_fingerprint()
        changed, renumbered = [], []
        for f in files:
            entry = manifest.get(f.rel_path)
            if entry and entry["file_hash"] == self.file_hash(f, fingerprint) \
                    and entry["stored"] == entry["total_chunks"]:
                if entry["page_number"] != f.page_number:
                    renumbered.append(f)
                continue
            changed.append(f)
        return changed, renumbered

    def version_of(self, files: list[SourceFile], root: Path) -> BookVersion:
        """The version these files make: their content hash, now, and the docs' git commit."""
        fingerprint = self.config_fingerprint()
        site = self.site
        # The title is part of what a version is (a new title is a new version, its chunks copied, not embedded).
        named = [("\0title", self.title)] if self.title else []
        return BookVersion(content_hash([*((f.rel_path, self.file_hash(f, fingerprint)) for f in files), *named]),
                           utc_now(), git_commit(root),
                           *((site.locales, site.versions, site.default_locale, site.last_version) if site
                             else ((), (), "", "")), title=self.title)

    @staticmethod
    def file_hash(f: SourceFile, fingerprint: str) -> str:
        return hashlib.sha256(fingerprint.encode() + b"\0" + f.raw + f.included).hexdigest()

    def build_chunks(self, f: SourceFile) -> list[ChunkDraft]:
        assert f.doc is not None
        return chunk_document(f.doc, max_tokens=self.settings.chunk_max_tokens,
                              overlap_tokens=self.settings.chunk_overlap_tokens,
                              count_tokens=self.embedder.count_tokens)

    def payloads(self, f: SourceFile, drafts: list[ChunkDraft], fingerprint: str) -> list[ChunkPayload]:
        assert f.doc is not None
        doc = f.doc
        parts = PurePosixPath(doc.rel_path).parts
        module = parts[0] if len(parts) > 1 else PurePosixPath(parts[0]).stem
        base = edition_base_url(self.settings.book_base_url, f.edition)
        file_hash = self.file_hash(f, fingerprint)
        now = time.time()
        edition = f.edition
        locale = edition.locale if edition else ""
        default_locale = self.site.default_locale if self.site else ""
        content_locale = "" if edition is None else (edition.locale if f.translated else default_locale)
        out = []
        for index, draft in enumerate(drafts):
            url = base + (doc.route if doc.route != "/" else "/")
            if draft.anchor:
                url += "#" + draft.anchor
            out.append(ChunkPayload(
                chunk_id=chunk_uuid(f.rel_path, index),
                content_text=draft.text,
                source_file=f.rel_path,
                source_url=url,
                module_name=module,
                section_heading=draft.section_heading or doc.title,
                heading_path=draft.path_from(doc.title),
                doc_title=doc.title,
                chunk_index=index,
                total_chunks=len(drafts),
                token_count=draft.token_count,
                page_number=f.page_number,
                created_at=now,
                content_hash=hashlib.sha256(draft.text.encode()).hexdigest(),
                file_hash=file_hash,
                locale=locale,
                version=edition.version if edition else "",
                content_locale=content_locale,
                latest=edition.latest if edition else False,
                default_locale=default_locale if edition else "",
            ))
        return out

    def run(self, root: Path) -> IngestReport:
        """Ingest the docs under `root`, recording the book version its files make."""
        report = IngestReport()
        if not root.is_dir():
            raise DocumentError(f"Not a folder: {root.name}")
        files = self.load(root, report)
        return self.ingest(files, report, self.version_of(files, root))

    def ingest(self, files: list[SourceFile], report: IngestReport, version: BookVersion) -> IngestReport:
        started = time.perf_counter()
        report.files_seen = len(files) + len(report.skipped)
        self.store.ensure_collection(self.embedder.name, self.embedder.dimension)
        manifest = (self.seed or self.store).manifest()
        changed, renumbered = self.plan(files, manifest)
        report.files_unchanged = len(files) - len(changed)
        fingerprint = self.config_fingerprint()
        if self.seed is not None:
            embedding = {f.rel_path for f in changed}
            kept = [f.rel_path for f in files if f.rel_path not in embedding]
            report.chunks_copied = self.store.copy_files_from(self.seed, kept)
        for f in renumbered:
            self.store.set_page_number(f.rel_path, f.page_number)

        work: list[tuple[SourceFile, list[ChunkDraft]]] = []
        for f in changed:
            drafts = self.build_chunks(f)
            if drafts:
                work.append((f, drafts))
            else:
                report.skipped.append((f.rel_path, "no text to index"))
        if self.progress:
            self.progress.start(sum(len(d) for _, d in work))

        group: list[tuple[SourceFile, list[ChunkDraft]]] = []
        group_size = 0
        for f, drafts in work:
            group.append((f, drafts))
            group_size += len(drafts)
            if group_size >= EMBED_GROUP_CHUNKS:
                self._flush(group, fingerprint, report)
                group, group_size = [], 0
        if group:
            self._flush(group, fingerprint, report)

        present = {f.rel_path for f in files} | {name for name, _ in report.skipped}
        if files:
            for gone in sorted(set(manifest) - present):
                if self.seed is None:  # a new version never had them
                    self.store.delete_file(gone)
                report.files_deleted += 1
        self.store.finish_ingest()
        report.chunks_total = sum(
            e["total_chunks"] or 0 for name, e in self.store.manifest().items()
        )
        previous = self.store.book_version()
        if previous is not None and previous.content_hash == version.content_hash and self.seed is None:
            report.book_version = previous  # nothing changed: the book is the version it was
        else:
            self.store.set_book_version(version)
            report.book_version = version
        report.collection = self.store.collection
        report.seconds = time.perf_counter() - started
        return report

    def _flush(self, group: list[tuple[SourceFile, list[ChunkDraft]]], fingerprint: str,
               report: IngestReport) -> None:
        texts: list[str] = []
        for f, drafts in group:
            assert f.doc is not None
            texts.extend(embedding_text(f.doc.title, d.heading_path, d.text) for d in drafts)
        t0 = time.perf_counter()
        vectors = self.embedder.embed_documents(texts)
        report.embed_seconds += time.perf_counter() - t0
        report.tokens_embedded += sum(d.token_count for _, drafts in group for d in drafts)
        offset = 0
        for f, drafts in group:
            payloads = self.payloads(f, drafts, fingerprint)
            records = [
                PointRecord(chunk_id=p.chunk_id, dense=vectors[offset + i],
                            sparse=self.bm25.encode_document(texts[offset + i]), payload=p)
                for i, p in enumerate(payloads)
            ]
            offset += len(drafts)
            self.store.upsert(records)
            self.store.delete_file(f.rel_path, from_index=len(drafts))
            report.files_changed += 1
            report.chunks_embedded += len(drafts)
            if self.progress:
                self.progress.advance(len(drafts))
