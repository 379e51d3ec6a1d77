"""Where a Docusaurus site folder is, seen from a docs folder it holds.

A page may import Markdown from anywhere in its site (`@site/src/partials/_x.md`, `../../src/_x.mdx`), and
the site's bundler resolves it there. A docs folder alone does not say where its site is; a folder holding
a `docusaurus.config.*` is one, so a docs folder directly inside such a folder has a known site.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CONFIG_NAMES", "find_config", "site_of_docs", "up_to_site"]

# The names Docusaurus loads its configuration from, in the order it tries them.
CONFIG_NAMES = ("docusaurus.config.js", "docusaurus.config.mjs", "docusaurus.config.cjs",
                "docusaurus.config.ts", "docusaurus.config.mts", "docusaurus.config.cts")


def find_config(folder: Path) -> Path | None:
    """The folder's Docusaurus configuration file, None when it is not a site folder."""
    for name in CONFIG_NAMES:
        candidate = folder / name
        if candidate.is_file():
            return candidate
    return None


def site_of_docs(docs: Path) -> Path | None:
    """The site folder a docs folder sits directly in, None when its parent is no site."""
    parent = docs.resolve().parent
    return parent if find_config(parent) is not None else None


def up_to_site(docs: Path, site: Path) -> str:
    """The site folder as a path relative to `docs` (`..` for `site/docs`, `../../..` deeper, `.` itself).

    Raises ValueError when `docs` is not inside `site`."""
    depth = len(docs.resolve().relative_to(site.resolve()).parts)
    return "/".join([".."] * depth) or "."
