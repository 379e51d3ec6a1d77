"""Small books for the embedded store's tests, and child processes that open its folder."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.env import without_our_vars
from tests.support.paths import ROOT, SAMPLE_DOCS

# Four chapters of the sample book: enough chunks for several files and filters, quick to embed.
CHAPTER = "module-4-humanoids"

_HOLD = """
import sys
from pathlib import Path
from bookrag.config.settings import load_settings
from bookrag.services.container import container_for

class Hold:
    def start(self, total):
        pass
    def advance(self, n):
        print("written", n, flush=True)
        sys.stdin.readline()

settings = load_settings(qdrant_path=sys.argv[1], embedding_provider="local")
container = container_for(settings)
"""

# Ingests argv[2] into argv[1], holding after the first file is written until its stdin closes (or it is
# killed): a point in the middle of an ingest that the parent can reach without sleeping.
INGEST_AND_HOLD = _HOLD + """
from bookrag.ingestion.ingestor import Ingestor
Ingestor(settings, container.embedder, container.store, Hold()).run(Path(sys.argv[2]))
print("finished", flush=True)
"""

# The same for an atomic ingest (`bookrag ingest --atomic`): holds while the new version is half built.
PUBLISH_AND_HOLD = _HOLD + """
from bookrag.adapters.store.edge.versions import EdgeVersions
from bookrag.ingestion.versions import publish
publish(settings, container.embedder, EdgeVersions(settings), Path(sys.argv[2]), Hold())
print("finished", flush=True)
"""

# Opens the store in argv[1] and keeps it open until its stdin closes: a running server, in effect.
OPEN_AND_HOLD = """
import sys
from bookrag.config.settings import load_settings
from bookrag.adapters.store.edge.store import EdgeStore
store = EdgeStore(load_settings(qdrant_path=sys.argv[1], embedding_provider="local"))
print("open", store.count(), flush=True)
sys.stdin.readline()
"""


def write_book(root: Path, *, revised: bool = False) -> Path:
    """The chapter's files under root/docs; `revised` adds a paragraph to each (every file changes)."""
    docs = root / "docs"
    shutil.rmtree(docs, ignore_errors=True)
    shutil.copytree(SAMPLE_DOCS / CHAPTER, docs / CHAPTER)
    if revised:
        for page in sorted((docs / CHAPTER).glob("*.md")):
            page.write_text(page.read_text(encoding="utf-8")
                            + f"\n\n## Revision note\n\nThis revision of {page.stem} adds a short closing note.\n",
                            encoding="utf-8")
    return docs


TOPICS = {
    "calibration.md": ("Arm calibration", "The robot arm calibration routine homes every joint against its limit "
                                          "switch and records the encoder offsets."),
    "sensors/lidar.md": ("Lidar", "A lidar scanner measures distance to obstacles by timing reflected laser pulses "
                                  "and builds a point cloud of the room."),
}
EDITIONS = ("alpha", "beta")


def write_edition(root: Path, edition: str) -> Path:
    """A two-page book whose every sentence names its edition: a hit tells which version it came from."""
    for name, (title, text) in TOPICS.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {title}\n\nThis is the {edition} edition. {text} In the {edition} edition, {text}\n",
                        encoding="utf-8")
    return root


def editions_in(texts: list[str]) -> set[str]:
    return {e for e in EDITIONS for t in texts if f"{e} edition" in t}


def child_env(**extra: str) -> dict[str, str]:
    """A child process's environment: none of the developer's settings of ours, this checkout's code."""
    env = without_our_vars()
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "shared"), str(ROOT), env.get("PYTHONPATH")) if p)
    env["OPENBLAS_NUM_THREADS"] = "1"
    env.update(extra)
    return env


def start_child(script: str, *args: str, user: int | None = None, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", script, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=child_env(**env), cwd=ROOT, user=user)


def read_line(child: subprocess.Popen[str]) -> str:
    """The child's next line of output; fails with its stderr if it exited instead."""
    assert child.stdout is not None
    line = child.stdout.readline()
    if not line:
        child.wait(timeout=60)
        assert child.stderr is not None
        raise AssertionError(f"child exited {child.returncode}: {child.stderr.read()[-2000:]}")
    return line.strip()


def release(child: subprocess.Popen[str]) -> None:
    """Let a holding child go on (or exit), and reap it."""
    assert child.stdin is not None
    child.stdin.close()
    child.wait(timeout=300)


def read_only_mount(folder: Path) -> list[str]:
    """A command prefix that runs the rest with `folder` bind-mounted read-only (a private mount namespace)."""
    prefix = ["unshare", "--mount", "--", "sh", "-c",
              'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"', str(folder)]
    probe = subprocess.run([*prefix, "sh", "-c", 'touch "$0/probe"', str(folder)], capture_output=True, text=True)
    if shutil.which("unshare") is None or "Read-only file system" not in probe.stderr:
        pytest.skip("running as root without a way to mount a read-only folder")
    return prefix


@contextmanager
def shipped_read_only(fill: Callable[[Path], None]) -> Iterator[tuple[Path, Path]]:
    """(shipped, scratch): `fill(shipped / "qdrant")` made read-only, as a Lambda layer under /opt is, and
    an empty folder for the process's TMPDIR; both removed afterwards."""
    shipped = Path(tempfile.mkdtemp(prefix="bookrag-layer-"))
    scratch = Path(tempfile.mkdtemp(prefix="bookrag-tmp-"))
    try:
        fill(shipped / "qdrant")
        for path in [shipped, *shipped.rglob("*")]:
            path.chmod(0o555 if path.is_dir() else 0o444)
        scratch.chmod(0o777)
        yield shipped, scratch
    finally:
        for path in [shipped, *shipped.rglob("*")]:
            path.chmod(stat.S_IRWXU)
        shutil.rmtree(shipped)
        shutil.rmtree(scratch)


def run_read_only(script: str, shipped: Path, scratch: Path) -> dict[str, Any]:
    """The JSON line `script` prints, run in a fresh process (as a Lambda container's init) on
    `shipped / "qdrant"`, read-only even for root (a read-only mount), with `scratch` as its TMPDIR."""
    command = [sys.executable, "-c", script, str(shipped / "qdrant")]
    if os.geteuid() == 0:  # root writes whatever the mode bits say: mount the folder read-only, as /opt is
        command = [*read_only_mount(shipped), *command]
    out = subprocess.run(command, cwd=ROOT, env=child_env(TMPDIR=str(scratch)), capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def assert_one_version_each(seen: list[tuple[str, set[str]]], by_label: dict[str, set[str]]) -> None:
    """Every version of `by_label` was served, and each response's text is the edition of the version its
    stamp names (never two in one response)."""
    assert {label for label, _ in seen} == set(by_label)
    for label, editions in seen:
        assert editions == by_label[label], (label, editions)


def response_texts(data: dict[str, Any]) -> list[str]:
    """The book text a retrieve, context or answer response carries."""
    if "retrieved_chunks" in data:
        return [c["content_text"] for c in data["retrieved_chunks"]]
    if "context" in data:
        return [data["context"]]
    assert not data["is_refusal"], data
    return [data["answer"]]


_AFTER_SWITCH = 50  # requests a route may send after the switch before it must have had the new version


def ask_across_switch(client: Any, questions: list[tuple[str, dict[str, Any]]], old_label: str,
                      publish: Callable[[], str]) -> tuple[list[tuple[str, set[str]]], str]:
    """Every route of `questions` asked over and over (one thread each, through `client`) while `publish()`
    runs here and returns the new version's label: each route answers the old version once before the
    publish starts, and keeps asking until it is answered from the new one. Returns each response's
    (version label, editions of its text) and the new label. Fails, never hangs: when the publish fails,
    or a route is still served the old version `_AFTER_SWITCH` requests after the switch."""
    started = threading.Barrier(len(questions) + 1)
    switched, stop = threading.Event(), threading.Event()
    seen: list[tuple[str, set[str]]] = []

    def ask(path: str, body: dict[str, Any]) -> None:
        try:
            answered, after = False, 0
            while not stop.is_set():
                response = client.post(path, json=body)
                assert response.status_code == 200, response.text
                data = response.json()
                label = response.headers["x-book-version"]
                if path != "/api/answer":  # the answer's body has no stamp of its own
                    assert data["book_version"] == label
                seen.append((label, editions_in(response_texts(data))))
                if not answered:
                    answered = True
                    started.wait(timeout=120)  # every route answers the old version once before the switch
                if switched.is_set():
                    if label != old_label:
                        return
                    after += 1
                    assert after <= _AFTER_SWITCH, f"{path} was never answered from the new version"
        except BaseException:
            started.abort()  # nobody waits for this route at the barrier: its own error is reported
            raise

    with ThreadPoolExecutor(len(questions)) as pool:
        running = [pool.submit(ask, path, body) for path, body in questions]
        broken: threading.BrokenBarrierError | None = None
        try:
            started.wait(timeout=120)
            new_label = publish()
            switched.set()
        except threading.BrokenBarrierError as exc:
            broken = exc  # a route failed, or never answered, before the publish
        finally:
            if not switched.is_set():
                stop.set()  # the publish failed: the routes stop, the failure is what the test reports
    failed = [e for e in (future.exception() for future in running) if e is not None]
    # A route's own failure first: the others then only saw the barrier break.
    failed.sort(key=lambda e: isinstance(e, threading.BrokenBarrierError))
    if failed:
        raise failed[0]
    if broken is not None:
        raise broken
    return seen, new_label
