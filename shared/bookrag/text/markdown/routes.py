"""Where Docusaurus serves a doc, and what to call it when nothing else names it.

These follow the docs plugin's own rules (getSlug, DefaultNumberPrefixParser, isCategoryIndex) so a
chunk's source URL is the page a reader would land on; any drift here means broken citation links.
"""

from __future__ import annotations

import posixpath
import re

__all__ = ["compute_route", "pretty_name", "strip_number_prefix"]

# Docusaurus' DefaultNumberPrefixParser: "01-intro" -> "intro", but dates and versions are kept.
_NUMBER_PREFIX = re.compile(r"\d+\s*[-_.]+\s*([^-_.\s].*)")
_DATE_OR_VERSION = re.compile(r"(?:\d{2}|\d{4})[-_.]\d{2}(?:[-_.](?:\d{2}|\d{4}))?|\d+[-_.]\d+")


def strip_number_prefix(name: str) -> str:
    """`01-intro` -> `intro`: the ordering prefix Docusaurus removes from ids and routes."""
    if _DATE_OR_VERSION.match(name):
        return name
    m = _NUMBER_PREFIX.fullmatch(name)
    return m.group(1) if m else name


def _split_rel_path(rel_path: str) -> tuple[list[str], str]:
    """(directories, file stem) of a docs-relative path, posix or Windows separators."""
    parts = [p for p in rel_path.replace("\\", "/").split("/") if p not in ("", ".")]
    filename = parts[-1] if parts else ""
    dot = filename.rfind(".")
    stem = filename[:dot] if dot > 0 else filename
    return parts[:-1], stem


def _is_category_index(stem: str, dirs: list[str]) -> bool:
    # Docusaurus' isCategoryIndex compares the raw names (number prefixes included).
    lowered = stem.lower()
    return lowered in ("index", "readme") or bool(dirs and lowered == dirs[-1].lower())


def compute_route(rel_path: str, slug: str | None, doc_id: str | None) -> str:
    """The doc's route as Docusaurus computes it (docs plugin getSlug), without the route base path."""
    dirs, stem = _split_rel_path(rel_path)
    dir_slug = "/" + "".join(strip_number_prefix(d) + "/" for d in dirs)
    if slug and slug.startswith("/"):
        route = slug
    elif not slug and _is_category_index(stem, dirs):
        route = dir_slug
    else:
        base = slug or doc_id or strip_number_prefix(stem)
        route = posixpath.normpath(posixpath.join(dir_slug, base))
    route = "/" + "/".join(p for p in route.split("/") if p)
    return route


def pretty_name(rel_path: str) -> str:
    """Title of last resort, from the file (or, for an index file, its folder) name."""
    dirs, stem = _split_rel_path(rel_path)
    name = stem
    if stem.lower() in ("index", "readme") or (dirs and stem.lower() == dirs[-1].lower()):
        name = dirs[-1] if dirs else "Home"
    words = re.split(r"[-_\s]+", strip_number_prefix(name))
    return " ".join(w[:1].upper() + w[1:] for w in words if w) or "Untitled"
