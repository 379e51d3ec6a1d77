"""`bookrag serve` as a real process on 127.0.0.1, on a copy of an embedded store, for tests that need
a server the way a user or a browser meets it."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.support.paths import ROOT


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Served:
    base: str
    process: subprocess.Popen[bytes]
    log: Path
    question_log: Path  # the folder of its question log

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


def start(store: str | Path, workdir: Path, *, copy: bool = True, **env_overrides: str) -> Served:
    """`bookrag serve` on a copy of `store` (an embedded store's shard is locked by the process that opened
    it), or on `store` itself with `copy=False`; ready when it returns: its health route has answered 200."""
    folder = workdir / "qdrant" if copy else Path(store)
    if copy:
        shutil.copytree(store, folder, ignore=shutil.ignore_patterns(".lock"))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k.upper() not in {"AUTH_ENABLED", "API_KEY_HASHES"}}
    # The question log (on by default) in the test's folder, never the working tree's `.bookrag`.
    env.update(QDRANT_PATH=str(folder), EMBEDDING_PROVIDER="local", PYTHONPATH=str(ROOT / "shared"),
               POWERTOOLS_METRICS_DISABLED="true", QUESTION_LOG_PATH=str(workdir / "question-log"))
    env.update(env_overrides)
    log = workdir / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "bookrag.devtools.cli", "serve", "--port", str(port)],
                                   env=env, stdout=out, stderr=subprocess.STDOUT)
    served = Served(f"http://127.0.0.1:{port}", process, log, Path(env["QUESTION_LOG_PATH"]))
    try:
        wait_until_up(f"{served.base}/api/health", process)
    except BaseException:
        served.stop()
        raise
    return served


def wait_until_up(url: str, process: subprocess.Popen[bytes]) -> None:
    # Polls readiness (not a sleep standing in for synchronisation); gives up after 60 s.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"bookrag serve exited with {process.returncode}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError("bookrag serve did not come up")
