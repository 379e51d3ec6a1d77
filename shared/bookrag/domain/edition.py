"""Which edition of a site a request reads: one locale of one version (issue 35).

A site's book holds every locale of every version; a request names the one it reads (`locale`, `version`,
both optional) and every search it makes is confined to it, so an answer and its citations never mix two
versions or two languages. `reading()` scopes a request like `book_version.one_version`; the retriever
resolves the wish against the editions the book holds (`resolve`) and records what it read, with a note
when it fell back (a locale or version the book lacks, a page the locale does not translate).
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

__all__ = ["BookEditions", "Reading", "note_untranslated", "read", "reading", "record", "resolve", "wanted"]

CURRENT = "current"  # Docusaurus's name for the version in the docs folder
NEXT = "next"  # the URL segment Docusaurus serves the current version at when it is not the last


@dataclass(frozen=True, slots=True)
class Wanted:
    locale: str | None = None
    version: str | None = None


@dataclass(frozen=True, slots=True)
class BookEditions:
    """What a book holds: its locales and versions, the site's default locale and version. Empty for a docs
    folder ingested alone (no edition: nothing to confine)."""

    locales: frozenset[str] = frozenset()
    versions: frozenset[str] = frozenset()
    default_locale: str = ""
    latest: str = ""

    @property
    def sited(self) -> bool:
        return bool(self.locales)


@dataclass(frozen=True, slots=True)
class Reading:
    """The edition a request read, and why it is not the one asked for."""

    locale: str
    version: str
    missing_locale: str | None = None  # asked for, but not in the book
    missing_version: str | None = None
    untranslated: tuple[str, ...] = ()  # the locales of hits that are the default locale's untranslated pages
    default_locale: str = ""

    @property
    def label(self) -> str:
        """"ur/2.0": how the interfaces name it (`X-Book-Edition`, MCP `_meta`)."""
        return f"{self.locale}/{self.version}"

    @property
    def fallbacks(self) -> tuple[str, ...]:
        """Why it differs from the request: `locale`, `version`, `untranslated`."""
        return tuple(k for k, on in (("locale", self.missing_locale), ("version", self.missing_version),
                                     ("untranslated", self.untranslated)) if on)

    @property
    def note(self) -> str | None:
        parts = []
        if self.missing_locale:
            parts.append(f"The book has no '{self.missing_locale}' pages: answered from '{self.locale}'")
        if self.missing_version:
            parts.append(f"The book has no version '{self.missing_version}': answered from '{self.version}'")
        if self.untranslated:
            parts.append(f"Some pages are not translated into '{self.locale}': quoted in "
                         f"'{', '.join(self.untranslated)}'")
        return "; ".join(parts) or None


_WANTED: contextvars.ContextVar[Wanted | None] = contextvars.ContextVar("bookrag_edition_wanted", default=None)
# The reading a request resolved: a dict shared by reference, so a worker thread's copy of the context
# records into the request's own (as `book_version` pins do).
_READ: contextvars.ContextVar[dict[str, Reading] | None] = contextvars.ContextVar("bookrag_edition_read",
                                                                                  default=None)


@contextmanager
def reading(locale: str | None, version: str | None,
            seen: dict[str, Reading] | None = None) -> Iterator[dict[str, Reading]]:
    """Scope a request to the edition it names; yields where the resolved `Reading` lands (key "read").

    A stream enters it around each step with the same `seen` (a step may run in another thread's copy of
    the context, where a scope entered by an earlier step is not set)."""
    seen = {} if seen is None else seen
    wanted_token = _WANTED.set(Wanted(locale, version))
    read_token = _READ.set(seen)
    try:
        yield seen
    finally:
        _READ.reset(read_token)
        _WANTED.reset(wanted_token)


def wanted() -> Wanted:
    return _WANTED.get() or Wanted()


def read() -> Reading | None:
    seen = _READ.get()
    return seen.get("read") if seen is not None else None


def record(found: Reading) -> None:
    seen = _READ.get()
    if seen is not None and "read" not in seen:
        seen["read"] = found


def note_untranslated(content_locales: Iterable[str]) -> None:
    """Say so when a hit is the default locale's page served in the locale read (not translated yet)."""
    seen = _READ.get()
    current = seen.get("read") if seen is not None else None
    if seen is None or current is None:
        return
    others = sorted({c for c in content_locales if c and c != current.locale} | set(current.untranslated))
    if tuple(others) != current.untranslated:
        seen["read"] = replace(current, untranslated=tuple(others))


def _match_locale(asked: str, locales: frozenset[str]) -> str | None:
    low = {loc.lower(): loc for loc in locales}
    asked = asked.strip().replace("_", "-").lower()
    return low.get(asked) or low.get(asked.split("-", 1)[0])


def resolve(editions: BookEditions, want: Wanted) -> Reading:
    """The edition `want` reads: the named locale (or its language, `ur-PK` -> `ur`) and version (its name,
    or `next` for the current one), else the site's default, noting what it fell back from."""
    locale, missing_locale = editions.default_locale, None
    if want.locale:
        found = _match_locale(want.locale, editions.locales)
        locale, missing_locale = (found, None) if found else (editions.default_locale, want.locale)
    version, missing_version = editions.latest, None
    if want.version:
        name = CURRENT if want.version.strip().lower() == NEXT else want.version.strip()
        version, missing_version = (name, None) if name in editions.versions else (editions.latest, want.version)
    return Reading(locale, version, missing_locale, missing_version, (), editions.default_locale)
