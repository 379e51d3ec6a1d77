"""A real Docusaurus 3.10 site around a book's docs, built from the npm registry's packages, served on
127.0.0.1: where the widget and the citations meet the theme (its back-to-top button, table of contents,
sidebar) the browser tests look at the real thing.

`tests/support/docusaurus_site/` holds the site (pinned package.json, config, sidebar). The packages are
installed once into `.cache/docusaurus/` (gitignored; reinstalled when package.json changes), and each
book is built once per content (the build folder is named by a hash of the docs and the site files).
Tests skip, saying why, where npm is missing or the install fails (no registry).
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.paths import ROOT

SITE = ROOT / "tests" / "support" / "docusaurus_site"
CACHE = ROOT / ".cache" / "docusaurus"
SITE_FILES = ("package.json", "docusaurus.config.js", "sidebars.js")


def _digest(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(str(path.name).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def installed() -> Path:
    """The site folder with its node_modules, installed from the registry when package.json changed."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: the Docusaurus site cannot be built")
    CACHE.mkdir(parents=True, exist_ok=True)
    for name in SITE_FILES:
        shutil.copyfile(SITE / name, CACHE / name)
    stamp = CACHE / "node_modules" / ".bookrag-installed"
    wanted = _digest([SITE / "package.json"])
    if not stamp.exists() or stamp.read_text() != wanted:
        done = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=CACHE,
                              capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            pytest.skip(f"npm install of the Docusaurus site failed: {done.stderr[-300:]}")
        stamp.write_text(wanted)
    return CACHE


def build(docs: Path) -> Path:
    """The static build of `docs` as a Docusaurus site (built once per content of the docs and the site)."""
    site = installed()
    files = sorted(p for p in docs.rglob("*") if p.is_file())
    key = _digest([SITE / name for name in SITE_FILES] + files)[:12] + "-" + hashlib.sha256(
        "\n".join(str(p.relative_to(docs)) for p in files).encode()).hexdigest()[:8]
    out = CACHE / "builds" / key
    if not (out / "index.html").exists() and not (out / "404.html").exists():
        done = subprocess.run(["npx", "docusaurus", "build", "--out-dir", str(out)], cwd=site,
                              env={**_env(), "BOOKRAG_DOCS": str(docs.resolve())}, capture_output=True, text=True,
                              timeout=900)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return out


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("BOOKRAG_")}


@contextmanager
def served(build_dir: Path) -> Iterator[str]:
    """The built site on 127.0.0.1 (a plain static server, as GitHub Pages serves one); yields its origin."""
    handler = functools.partial(_Quiet, directory=str(build_dir))
    server = _Server(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a browser that navigates on drops its pending requests: nothing to report


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass
