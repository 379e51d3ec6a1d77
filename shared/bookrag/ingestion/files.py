"""Finding and reading the book's source files, refusing what cannot be read safely.

The docs folder is a checkout of someone's repository: it may hold symlinks out of it, FIFOs, huge or
binary files. Each is refused with a reason (the ingest report names it) rather than followed, read
without bound, or blocked on; and nothing here knows about chunks, so the rules can be read apart.
"""

from __future__ import annotations

import errno
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

from bookrag.errors import DocumentError

__all__ = ["DOC_SUFFIXES", "decode", "discover", "git_commit", "read_bounded", "read_source", "refuse_unsafe"]

DOC_SUFFIXES = (".md", ".mdx")


def discover(root: Path) -> Iterator[Path]:
    """Docusaurus docs: .md/.mdx, skipping `_partials` and hidden files or folders, as Docusaurus does.

    Every entry with a document's name is yielded, regular file or not (a symlink, a FIFO): `load`
    refuses, and names, what it cannot read safely, instead of it vanishing from the report.
    """
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part.startswith(("_", ".")) for part in rel.parts):
            continue
        if path.suffix.lower() in DOC_SUFFIXES and not path.is_dir():
            yield path


def refuse_unsafe(path: Path, root: Path) -> None:
    """Only regular files inside the docs folder are read: a symlink out of it would index (and then
    serve) any file the process can read, and opening a FIFO would block the ingest forever."""
    try:
        resolved = path.resolve(strict=True)
    except RuntimeError:  # Python 3.11 reports a symlink loop this way, later versions with ELOOP
        raise DocumentError("symlink loop") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise DocumentError("symlink loop") from None
        if path.is_symlink():
            raise DocumentError("broken symlink") from None
        raise
    if not resolved.is_relative_to(root.resolve()):
        raise DocumentError("symlink to outside the docs folder")
    if not resolved.is_file():
        raise DocumentError("not a regular file")


def read_bounded(path: Path, limit: int) -> bytes:
    """The file's bytes, refused past `limit`, read no further: a huge file is never held in memory whole."""
    with path.open("rb") as fh:
        raw = fh.read(limit + 1)
    if len(raw) > limit:
        raise DocumentError(f"too large (over {limit} bytes)")
    return raw


def read_source(path: Path, root: Path, limit: int) -> bytes:
    """A page's or a partial's bytes, under the same rules: inside `root`, not a special file, at most
    `limit` bytes. Raises `DocumentError` saying why it cannot be read (an OS error included)."""
    try:
        refuse_unsafe(path, root)
        return read_bounded(path, limit)
    except OSError as exc:
        raise DocumentError(f"unreadable: {exc.strerror or type(exc).__name__}") from None


def decode(raw: bytes) -> str:
    """UTF-8 text (a BOM dropped); binary or mis-encoded files are refused, not indexed as noise."""
    if b"\0" in raw:
        raise DocumentError("binary file (contains NUL bytes)")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DocumentError("not valid UTF-8 text") from None


def git_commit(root: Path) -> str | None:
    """The commit the docs were checked out at, when they are a git checkout (else None). A tree with
    uncommitted changes under the docs gets `-dirty`, so a version never claims a commit it does not match."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=False)
        if head.returncode != 0 or not re.fullmatch(r"[0-9a-f]{40}", head.stdout.strip()):
            return None
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "."], capture_output=True,
                                text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):  # no git on this machine
        return None
    commit = head.stdout.strip()
    return f"{commit}-dirty" if status.returncode == 0 and status.stdout.strip() else commit
