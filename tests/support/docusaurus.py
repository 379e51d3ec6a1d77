"""A real Docusaurus build of a docs folder, from the npm packages, to check what we index against what
the site renders (heading ids, page routes).

The packages are pinned by `docusaurus/package-lock.json` and installed once per lock into a cache folder
(`npm ci`, a couple of minutes); every build then links that `node_modules` into a fresh site folder.
Callers skip when node or npm is missing; CI reaches the npm registry.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess
import zlib
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

HERE = Path(__file__).resolve().parent / "docusaurus"
_INSTALL_TIMEOUT_S = 1200
_BUILD_TIMEOUT_S = 900


def _pixel_png() -> bytes:
    """A 1x1 PNG: the vendored template links `/img/docusaurus.png`, which a site's static folder holds."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)
    pixels = zlib.compress(b"\0\0\0\0\0")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def unavailable() -> str | None:
    """Why a build cannot run here (the reason to skip), else None."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    return f"{' and '.join(missing)} not installed" if missing else None


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "bookrag-docusaurus"


def install() -> Path:
    """The pinned packages' folder, installed on first use (`npm ci` from the lock file)."""
    lock = (HERE / "package-lock.json").read_bytes()
    target = _cache_root() / hashlib.sha256(lock).hexdigest()[:16]
    if (target / "node_modules" / ".bookrag-complete").exists():
        return target
    partial = target.with_name(target.name + f".partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy(HERE / name, partial / name)
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=partial, check=True,
                   timeout=_INSTALL_TIMEOUT_S, stdout=subprocess.DEVNULL)
    (partial / "node_modules" / ".bookrag-complete").touch()
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)  # whole or not at all: a killed install leaves only a `.partial-*` folder
    return target


def build(docs: Path, workdir: Path, *, site_files: Path = HERE, minify: bool = False) -> Path:
    """Build `docs` as a site under `workdir`; returns the folder of its HTML (one index.html per route).

    `site_files` holds the site's `docusaurus.config.js` (and `sidebars.js` when it names one): this
    folder's smallest site by default; the browser tests' site has its own (`docusaurus_site/`)."""
    site = workdir / "site"
    shutil.rmtree(site, ignore_errors=True)
    site.mkdir(parents=True)
    for name in ("docusaurus.config.js", "sidebars.js"):
        if (site_files / name).exists():
            shutil.copy(site_files / name, site / name)
    shutil.copytree(docs, site / "docs")
    return _build(site, minify=minify)


def build_site(source: Path, workdir: Path, *, minify: bool = False) -> Path:
    """Build a whole site folder (its config, `versions.json`, `versioned_docs/`, `i18n/`, `src/`), every
    locale; returns the folder of its HTML: the default locale at its root, each other locale under
    `<locale>/`."""
    site = workdir / "site"
    shutil.rmtree(site, ignore_errors=True)
    shutil.copytree(source, site, ignore=shutil.ignore_patterns("node_modules", "build", ".docusaurus"))
    return _build(site, minify=minify)


def _build(site: Path, *, minify: bool) -> Path:
    packages = install()
    shutil.copy(HERE / "package.json", site / "package.json")
    (site / "node_modules").symlink_to(packages / "node_modules")
    (site / "static" / "img").mkdir(parents=True, exist_ok=True)
    (site / "static" / "img" / "docusaurus.png").write_bytes(_pixel_png())
    cli = packages / "node_modules" / "@docusaurus" / "core" / "bin" / "docusaurus.mjs"
    # The webpack cache would live in the shared node_modules and serve one site's pages to another.
    # Built as the book's author builds it: under `CI` (set on CI machines) Docusaurus turns warnings such as
    # front matter in a partial, which the MDX fixture carries on purpose, into build errors.
    env = {**{k: v for k, v in os.environ.items() if k not in ("CI", "NODE_ENV") and not k.startswith("BOOKRAG_")},
           "DOCUSAURUS_NO_PERSISTENT_CACHE": "1", "DOCUSAURUS_TELEMETRY_DISABLED": "1",
           "NODE_OPTIONS": "--max-old-space-size=4096"}
    subprocess.run(["node", str(cli), "build", "--out-dir", "build", *([] if minify else ["--no-minify"])],
                   cwd=site, env=env, check=True, timeout=_BUILD_TIMEOUT_S, stdout=subprocess.DEVNULL)
    return site / "build"


@dataclass(frozen=True, slots=True)
class RenderedHeading:
    level: int
    id: str
    text: str


class _Headings(HTMLParser):
    """h2-h6 inside the page's Markdown container (`theme-doc-markdown`), in document order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0  # open elements inside the markdown container (0: outside it)
        self.current: tuple[int, str] | None = None
        self.text: list[str] = []
        self.found: list[RenderedHeading] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if self.depth == 0:
            if "theme-doc-markdown" in (values.get("class") or "").split():
                self.depth = 1
            return
        if tag not in _VOID:
            self.depth += 1
        if len(tag) == 2 and tag[0] == "h" and tag[1] in "23456" and values.get("id"):
            self.current = (int(tag[1]), values["id"] or "")
            self.text = []

    def handle_endtag(self, tag: str) -> None:
        if self.depth == 0:
            return
        if self.current is not None and tag == f"h{self.current[0]}":
            text = " ".join("".join(self.text).replace("\u200b", "").split())
            self.found.append(RenderedHeading(self.current[0], self.current[1], text))
            self.current = None
        self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.current is not None:
            self.text.append(data)


_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"})


def rendered_headings(build_dir: Path, route: str) -> list[RenderedHeading]:
    """The headings the built page at `route` shows in its Markdown, with the ids Docusaurus gave them."""
    page = build_dir / route.strip("/") / "index.html"
    parser = _Headings()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.found
