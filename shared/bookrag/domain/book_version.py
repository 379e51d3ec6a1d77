"""Which version of the book an answer came from, and the one-version-per-request rule.

A book version is the content hash of the ingested files (each file's hash already covers the chunking
configuration and the embedder), the time it was ingested, and the docs' git commit when they are a
git checkout. Its `label` is what every interface shows (`book_version` fields, the `X-Book-Version`
header), e.g. `3f9a1c2b7d4e-20261123T093000Z-g1a2b3c4d5e6`.

`one_version()` scopes a request: the store resolves its collection alias once inside the scope and
every read of that request goes to that one collection, so a request never mixes two versions, even
while an ingest switches the alias. Outside a scope each read resolves the alias by itself. A store that
holds something open for the version it pinned (the embedded store's shard handle) lets it go when the
scope ends (`hold_until_scope_ends`).
"""

from __future__ import annotations

import contextvars
import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

HEADER = "X-Book-Version"


@dataclass(frozen=True, slots=True)
class BookVersion:
    content_hash: str
    ingested_at: str  # ISO 8601, UTC, seconds
    git_commit: str | None = None
    # A book ingested from a Docusaurus site (issue 35): its locales and docs versions, the default locale and
    # the version served by default. Kept with the version, so a request resolves its edition without a read.
    site_locales: tuple[str, ...] = ()
    site_versions: tuple[str, ...] = ()
    site_default_locale: str = ""
    site_latest: str = ""
    # The book's title (issue 38): `bookrag ingest --title`, else the site's docusaurus.config `title`; '' when
    # neither says. What the model is told it answers from (`answerers.base.system_prompt`).
    title: str = ""

    @property
    def label(self) -> str:
        stamp = self.ingested_at.replace("-", "").replace(":", "")
        label = f"{self.content_hash[:12]}-{stamp}"
        if not self.git_commit:
            return label
        dirty = "-dirty" if self.git_commit.endswith("-dirty") else ""
        return f"{label}-g{self.git_commit[:12]}{dirty}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"content_hash": self.content_hash, "ingested_at": self.ingested_at,
                               "git_commit": self.git_commit, "label": self.label}
        if self.title:
            out["title"] = self.title
        if self.site_locales:  # a docs folder's version is stored exactly as before
            out["site"] = {"locales": list(self.site_locales), "versions": list(self.site_versions),
                           "default_locale": self.site_default_locale, "latest": self.site_latest}
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> BookVersion | None:
        """The stored form back, or None for anything that is not one (a collection from before versions)."""
        if not isinstance(data, Mapping):
            return None
        content, at, commit = data.get("content_hash"), data.get("ingested_at"), data.get("git_commit")
        if not isinstance(content, str) or not isinstance(at, str) or not (commit is None or isinstance(commit, str)):
            return None
        title = data.get("title")
        title = title if isinstance(title, str) else ""
        site = data.get("site")
        if not isinstance(site, Mapping):
            return cls(content, at, commit, title=title)
        return cls(content, at, commit, tuple(str(x) for x in site.get("locales") or ()),
                   tuple(str(x) for x in site.get("versions") or ()), str(site.get("default_locale") or ""),
                   str(site.get("latest") or ""), title)


def content_hash(file_hashes: Iterable[tuple[str, str]]) -> str:
    """One hash for the book: every (file, file hash) pair, in path order, so the listing order is irrelevant."""
    digest = hashlib.sha256()
    for name, file_hash in sorted(file_hashes):
        digest.update(f"{name}\0{file_hash}\n".encode())
    return digest.hexdigest()


def utc_now() -> str:
    # Milliseconds: two versions published within one second must still sort by age.
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


# --- one version per request ---------------------------------------------------------------------------

# alias -> the collection this request reads; a dict (shared by reference) so that a pin taken in a worker
# thread, which runs on a copy of the request's context, is seen by the request's middleware.
_PINS: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("bookrag_book_pins", default=None)
# alias -> the label of the version this request read (set by the store next to the pin).
_SEEN: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("bookrag_book_seen", default=None)
# What to release when the scope ends (a list, shared by reference like the pins).
_RELEASES: contextvars.ContextVar[list[Callable[[], None]] | None] = contextvars.ContextVar(
    "bookrag_book_releases", default=None)


@contextmanager
def one_version() -> Iterator[dict[str, str]]:
    """Scope one request; yields the labels of the versions it read (at most one per alias). Nested
    scopes join the outer one (a route called by an already scoped MCP request)."""
    if _PINS.get() is not None:
        yield _SEEN.get() or {}
        return
    seen: dict[str, str] = {}
    releases: list[Callable[[], None]] = []
    pins_token = _PINS.set({})
    seen_token = _SEEN.set(seen)
    releases_token = _RELEASES.set(releases)
    try:
        yield seen
    finally:
        _PINS.reset(pins_token)
        _SEEN.reset(seen_token)
        _RELEASES.reset(releases_token)
        for release in releases:
            release()


def request_pins() -> dict[str, str] | None:
    return _PINS.get()


def hold_until_scope_ends(release: Callable[[], None]) -> bool:
    """Call `release` when the current scope ends; False (and nothing registered) outside a scope."""
    releases = _RELEASES.get()
    if releases is None:
        return False
    releases.append(release)
    return True


def record_seen(alias: str, label: str) -> None:
    seen = _SEEN.get()
    if seen is not None:
        seen.setdefault(alias, label)


# The book the agent contract's prompt and tool descriptions name; another book's title takes its place (issue 38).
REFERENCE_BOOK = "Physical AI & Humanoid Robotics textbook"


def retitled(text: str, title: str) -> str:
    """`text` (the contract's wording, naming `REFERENCE_BOOK`) for the book titled `title`: unchanged for the
    contract's own textbook or an unknown title, else naming the book by its own title."""
    plain = " ".join(title.split())
    if not plain or plain.lower().removesuffix(" textbook") == REFERENCE_BOOK.lower().removesuffix(" textbook"):
        return text
    return text.replace(f"the {REFERENCE_BOOK}", f'the book "{plain}"')
