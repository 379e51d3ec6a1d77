"""A Docusaurus site folder as the editions of its book: every locale of every version, and where each is served.

Read from the site's own files, as Docusaurus reads them (docs plugin and i18n, checked against a real build
in `tests/integration/test_docusaurus_site.py`):
- `docusaurus.config.*` (read as literal data, never run: `js_literal`): `i18n.defaultLocale`,
  `i18n.locales`, `i18n.path` (default `i18n`), and the default docs plugin's options (the classic preset's
  `docs`, or a `@docusaurus/plugin-content-docs` plugin without an id): `path` (default `docs`),
  `routeBasePath` (default `docs`), `includeCurrentVersion`, `lastVersion`, `onlyIncludeVersions`,
  `versions.<name>.path`;
- `versions.json`: the released versions, newest first; each one's pages in `versioned_docs/version-<name>/`.

Where a version is served: `lastVersion` (default: the newest released version, else the current one) at
the route base itself, the current version otherwise at `next`, any other at its name, unless
`versions.<name>.path` says otherwise. A locale other than the default is served under `/<locale>`, its pages
read from `<i18n>/<locale>/docusaurus-plugin-content-docs/current/` (or `version-<name>/`), and a page it does
not translate is the default locale's page, served at the locale's URL, as the site builds it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bookrag.domain.edition import CURRENT
from bookrag.errors import DocumentError
from bookrag.ingestion.js_literal import UNKNOWN, read_config_object
from bookrag.ingestion.site_folder import find_config

__all__ = ["CURRENT", "Edition", "Site", "edition_base_url", "read_site"]

_DOCS_PLUGIN = "docusaurus-plugin-content-docs"
_MAX_CONFIG_BYTES = 1_000_000


@dataclass(frozen=True, slots=True)
class Edition:
    """One locale of one version: the folder its pages come from and where the site serves them."""

    locale: str
    version: str
    folder: Path  # this edition's own pages (a translation's folder may hold only some, or be missing)
    fallback: Path | None  # the default locale's folder of the same version, for untranslated pages
    url_path: str  # after the site root, before a page's route: "/ur/docs/2.0", "/docs", ""
    key_prefix: str  # what a page's stored path starts with: "" for the default edition, else its folder
    latest: bool  # the version the site serves by default (`lastVersion`)
    route_base: str = "docs"  # the docs plugin's routeBasePath


@dataclass(frozen=True, slots=True)
class Site:
    default_locale: str
    locales: tuple[str, ...]
    versions: tuple[str, ...]  # the versions built, as Docusaurus lists them (current first)
    last_version: str
    editions: tuple[Edition, ...]
    warnings: tuple[str, ...] = field(default=())
    title: str = ""  # its `title` ('' when not a literal string), what the model is told the book is called

    @property
    def layout(self) -> str:
        """What changes every stored URL when it changes (a page's hash takes it in)."""
        return "|".join(f"{e.locale}:{e.version}:{e.url_path}" for e in self.editions)


def _string(value: Any, default: str, name: str, warnings: list[str]) -> str:
    if value is None:
        return default
    if isinstance(value, str):
        return value
    warnings.append(f"docusaurus config: {name} is not a literal string; Docusaurus's default {default!r} is used")
    return default


def _docs_options(config: dict[str, Any], warnings: list[str]) -> dict[str, Any] | None:
    """The default docs plugin's options; None when the site has no docs plugin (`docs: false`)."""
    for preset in config.get("presets") or []:
        entry = preset if isinstance(preset, list) else [preset]
        if entry and isinstance(entry[0], str) and "classic" in entry[0]:
            options = entry[1] if len(entry) > 1 and isinstance(entry[1], dict) else {}
            docs = options.get("docs", {})
            if docs is False:
                break
            if isinstance(docs, dict):
                return docs
            warnings.append("docusaurus config: the classic preset's docs options are computed; defaults are used")
            return {}
    for plugin in config.get("plugins") or []:
        entry = plugin if isinstance(plugin, list) else [plugin]
        if entry and isinstance(entry[0], str) and _DOCS_PLUGIN.removeprefix("docusaurus-") in entry[0]:
            options = entry[1] if len(entry) > 1 and isinstance(entry[1], dict) else {}
            if options.get("id") in (None, "default"):
                return options
    return None


def _read_config(path: Path) -> dict[str, Any]:
    raw = path.read_bytes()
    if len(raw) > _MAX_CONFIG_BYTES:
        raise DocumentError(f"{path.name}: too large to read (over {_MAX_CONFIG_BYTES} bytes)")
    try:
        return read_config_object(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise DocumentError(f"{path.name}: not valid UTF-8 text") from None


def site_title(root: Path) -> str:
    """The site's `title` in its docusaurus.config (what its navbar and every page's <title> show); '' when
    there is no configuration, or its title is not a literal string."""
    config_path = find_config(root)
    if config_path is None:
        return ""
    try:
        return _title(_read_config(config_path))
    except DocumentError:
        return ""


def _title(config: dict[str, Any]) -> str:
    title = config.get("title")
    return " ".join(title.split()) if isinstance(title, str) else ""


def _released(root: Path, warnings: list[str]) -> list[str]:
    path = root / "versions.json"
    if not path.is_file():
        return []
    try:
        names = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise DocumentError("versions.json: not a JSON list of version names") from None
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise DocumentError("versions.json: not a JSON list of version names")
    missing = [n for n in names if not (root / "versioned_docs" / f"version-{n}").is_dir()]
    for name in missing:
        warnings.append(f"versions.json names {name}, but versioned_docs/version-{name}/ is missing; not indexed")
    return [n for n in names if n not in missing]


def _join(*parts: str) -> str:
    joined = "/".join(p.strip("/") for p in parts if p.strip("/"))
    return f"/{joined}" if joined else ""


def edition_base_url(book_base_url: str, edition: Edition | None) -> str:
    """Where an edition's pages are served, before their route. BOOK_BASE_URL keeps its meaning: the URL the
    default locale's docs are served at (`https://book.example/docs`); the site's root is that URL without
    the route base, and each edition's path (`/ur/docs/2.0`) goes after it."""
    if edition is None:
        return book_base_url
    base = book_base_url.rstrip("/")
    tail = _join(edition.route_base)
    root = base[: -len(tail)] if tail and base.endswith(tail) else base
    return root + edition.url_path


def read_site(root: Path) -> Site:
    """The editions of the site in `root`. Raises DocumentError when it is not a Docusaurus site folder,
    names a version or locale Docusaurus would refuse, or its docs folder is missing."""
    config_path = find_config(root)
    if config_path is None:
        raise DocumentError(f"{root.name}: no docusaurus.config.* here: not a Docusaurus site folder")
    warnings: list[str] = []
    config = _read_config(config_path)
    i18n_value = config.get("i18n")
    i18n: dict[str, Any] = i18n_value if isinstance(i18n_value, dict) else {}
    default_locale = _string(i18n.get("defaultLocale"), "en", "i18n.defaultLocale", warnings)
    locales_value = i18n.get("locales", [default_locale])
    if not isinstance(locales_value, list) or not all(isinstance(x, str) for x in locales_value):
        warnings.append("docusaurus config: i18n.locales is not a literal list; only the default locale is indexed")
        locales_value = [default_locale]
    locales = tuple(dict.fromkeys([default_locale, *locales_value]))
    i18n_path = _string(i18n.get("path"), "i18n", "i18n.path", warnings)

    docs = _docs_options(config, warnings)
    if docs is None:
        raise DocumentError(f"{config_path.name}: the site has no docs plugin (docs: false): nothing to index")
    docs_path = _string(docs.get("path"), "docs", "docs.path", warnings)
    route_base = _string(docs.get("routeBasePath"), "docs", "docs.routeBasePath", warnings)
    include_current = docs.get("includeCurrentVersion", True) is not False
    released = _released(root, warnings)
    names = ([CURRENT] if include_current else []) + released
    only = docs.get("onlyIncludeVersions")
    if isinstance(only, list) and all(isinstance(v, str) for v in only):
        names = [n for n in names if n in only]
    elif only not in (None, UNKNOWN):
        warnings.append("docusaurus config: onlyIncludeVersions is not a literal list; every version is indexed")
    if not names:
        raise DocumentError(f"{config_path.name}: no docs version left to index (includeCurrentVersion, "
                            "onlyIncludeVersions)")
    last = _string(docs.get("lastVersion"), released[0] if released else CURRENT, "docs.lastVersion", warnings)
    if last not in names:
        raise DocumentError(f"{config_path.name}: lastVersion {last!r} is not a version the site builds")
    versions_value = docs.get("versions")
    version_options: dict[str, Any] = versions_value if isinstance(versions_value, dict) else {}

    def version_path(name: str) -> str:
        own = version_options.get(name)
        path = own.get("path") if isinstance(own, dict) else None
        if isinstance(path, str):
            return path
        return "" if name == last else ("next" if name == CURRENT else name)

    def default_folder(name: str) -> Path:
        return root / docs_path if name == CURRENT else root / "versioned_docs" / f"version-{name}"

    if CURRENT in names and not default_folder(CURRENT).is_dir():
        raise DocumentError(f"{root.name}: the docs folder {docs_path}/ is missing")
    editions = []
    for locale in locales:
        for name in names:
            own = default_folder(name)
            url = _join("" if locale == default_locale else locale, route_base, version_path(name))
            if locale == default_locale:
                key = "" if name == CURRENT else f"versioned_docs/version-{name}/"
                editions.append(Edition(locale, name, own, None, url, key, name == last, route_base))
                continue
            sub = "current" if name == CURRENT else f"version-{name}"
            folder = root / i18n_path / locale / _DOCS_PLUGIN / sub
            key = f"{i18n_path}/{locale}/{_DOCS_PLUGIN}/{sub}/"
            editions.append(Edition(locale, name, folder, own, url, key, name == last, route_base))
    return Site(default_locale, locales, tuple(names), last, tuple(editions), tuple(warnings),
                _title(config))
