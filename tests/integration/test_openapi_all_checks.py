"""Schemathesis with every check on (`--checks all`), against a real `bookrag serve` on 127.0.0.1.

Unlike test_openapi_fuzz.py (in process, "no 5xx and the documented shapes"), this also checks the
schema in both directions (what it allows is accepted, what it forbids is refused), undeclared methods
(405 with Allow), and response headers: the run a new user would try first. Bounded (examples per
operation) and seeded, so `make test` is repeatable; offline (the local embedder, an embedded store).
The stateful phase runs where it applies: our operations declare no links between them, so
schemathesis reports it "not applicable".
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.paths import ROOT

MAX_EXAMPLES = 25  # per operation
SEED = 20251215
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(indexed_book: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """`bookrag serve` in its own process, on a copy of the session's index (an embedded store folder
    is locked by the process that opened it, and this one has)."""
    store = tmp_path / "qdrant"
    shutil.copytree(indexed_book["QDRANT_PATH"], store, ignore=shutil.ignore_patterns(".lock"))
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k.upper() not in {"AUTH_ENABLED", "API_KEY_HASHES"}}
    env.update(QDRANT_PATH=str(store), EMBEDDING_PROVIDER="local", PYTHONPATH=str(ROOT / "shared"),
               POWERTOOLS_METRICS_DISABLED="true")
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen([sys.executable, "-m", "bookrag.devtools.cli", "serve", "--port", str(port)],
                               env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(f"{base}/api/health", process)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def _wait_until_up(url: str, process: subprocess.Popen[bytes]) -> None:
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


def test_schemathesis_all_checks_find_nothing(served: str, tmp_path: Path) -> None:
    command = [str(SCHEMATHESIS), "run", f"{served}/openapi.json", "--checks", "all",
               "--phases", "examples,coverage,fuzzing,stateful", "--max-examples", str(MAX_EXAMPLES),
               "--seed", str(SEED), "--generation-database", "none", "--workers", "1", "--no-color",
               "--request-timeout", "20"]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert "Selected: 7/7" in output and "No issues found" in output, output[-3000:]
