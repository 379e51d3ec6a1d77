"""Schemathesis with every check on (`--checks all`), against a real `bookrag serve` on 127.0.0.1.

Unlike test_openapi_fuzz.py (in process, "no 5xx and the documented shapes"), this also checks the
schema in both directions (what it allows is accepted, what it forbids is refused), undeclared methods
(405 with Allow), and response headers: the run a new user would try first. Bounded (examples per
operation) and seeded, so `make test` is repeatable; offline (the local embedder, an embedded store).
The stateful phase runs where it applies: our operations declare no links between them, so
schemathesis reports it "not applicable".
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.serve import start

MAX_EXAMPLES = 25  # per operation
SEEDS = (20251215, 20261127)  # two seeds: a blank selection slipped past one and not the other
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")


@pytest.fixture
def served(indexed_book: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """`bookrag serve` in its own process, on a copy of the session's index."""
    server = start(indexed_book["QDRANT_PATH"], tmp_path)
    try:
        yield server.base
    finally:
        server.stop()


@pytest.mark.parametrize("seed", SEEDS)
def test_schemathesis_all_checks_find_nothing(served: str, tmp_path: Path, seed: int) -> None:
    command = [str(SCHEMATHESIS), "run", f"{served}/openapi.json", "--checks", "all",
               "--phases", "examples,coverage,fuzzing,stateful", "--max-examples", str(MAX_EXAMPLES),
               "--seed", str(seed), "--generation-database", "none", "--workers", "1", "--no-color",
               "--request-timeout", "20"]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert "Selected: 10/10" in output and "No issues found" in output, output[-3000:]
