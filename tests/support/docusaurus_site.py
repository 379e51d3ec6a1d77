"""A real Docusaurus 3.10 site around a book's docs, served on 127.0.0.1: where the widget and the citations
meet the theme (its back-to-top button, table of contents, sidebar) the browser tests look at the real thing.

`tests/support/docusaurus_site/` holds the site's config and sidebar: a book owner's defaults, docs under
`/docs/`. It is built by `tests/support/docusaurus.py` from the same pinned packages as the anchor check
(one `npm ci` for both), once per content of the docs and the site (`.cache/docusaurus/builds/`, gitignored).
Tests skip, saying why, where node or npm is missing or the install fails (no registry).
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

from tests.support import docusaurus
from tests.support.paths import ROOT

SITE = ROOT / "tests" / "support" / "docusaurus_site"
CACHE = ROOT / ".cache" / "docusaurus"
SITE_FILES = ("docusaurus.config.js", "sidebars.js")


def _digest(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(str(path.name).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def build(docs: Path) -> Path:
    """The static build of `docs` as a Docusaurus site (built once per content of the docs and the site)."""
    reason = docusaurus.unavailable()
    if reason is not None:
        pytest.skip(f"the Docusaurus site cannot be built: {reason}")
    files = sorted(p for p in docs.rglob("*") if p.is_file())
    key = _digest([SITE / name for name in SITE_FILES] + [docusaurus.HERE / "package-lock.json"] + files)[:12] + \
        "-" + hashlib.sha256("\n".join(str(p.relative_to(docs)) for p in files).encode()).hexdigest()[:8]
    out = CACHE / "builds" / key
    if (out / "index.html").exists() or (out / "404.html").exists():
        return out
    try:
        built = docusaurus.build(docs, CACHE / "work" / key, site_files=SITE, minify=True)
    except subprocess.CalledProcessError as exc:
        if "npm" in str(exc.cmd[0]):
            pytest.skip("npm ci of the Docusaurus packages failed (no registry?)")
        raise
    shutil.rmtree(out, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    built.rename(out)  # whole or not at all: an interrupted build leaves only its work folder
    shutil.rmtree(CACHE / "work" / key, ignore_errors=True)
    return out


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
