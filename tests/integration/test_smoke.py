"""`bookrag smoke URL` against `bookrag serve` in a subprocess on 127.0.0.1 (a copy of the indexed sample
book, keys required), and against a broken upstream (a stub answering 500 to everything).

Readiness without polling: the test binds and listens on the port itself and hands the socket to
`bookrag serve --fd`, so the first health request waits in the socket's backlog until the app is up.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from bookrag.auth.keys import mint_key
from bookrag.devtools.cli import app
from bookrag.services.container import current
from tests.support.mcp import copy_index, server_env
from tests.support.stubs import Reply, StubServer

CHECKS = ["health", "retrieve", "tool call", "answer", "refusal", "bad request", "no key refused", "stream"]


@pytest.fixture(scope="module")
def served(indexed_book: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """`bookrag serve` with keys required; yields its URL and a key."""
    plaintext, record = mint_key("smoke test")
    store = copy_index(indexed_book["QDRANT_PATH"], tmp_path_factory.mktemp("smoke") / "qdrant")
    env = server_env(store, AUTH_ENABLED="true", API_KEY_HASHES=record.setting_entry())
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    server = subprocess.Popen([sys.executable, "-m", "bookrag.devtools.cli", "serve", "--fd", str(listener.fileno())],
                              env=env, pass_fds=[listener.fileno()], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        assert httpx.get(f"{url}/api/health", timeout=180).status_code == 200  # answered once the app is up
        yield url, plaintext
    finally:
        server.terminate()
        server.wait(timeout=30)
        listener.close()


def test_smoke_passes_against_bookrag_serve(served: tuple[str, str], book_env: Any) -> None:
    url, key = served
    result = CliRunner().invoke(app, ["smoke", url, "--api-key", key, "--json"])

    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["passed"] is True and [c["name"] for c in report["checks"]] == CHECKS
    statuses = {c["name"]: c["status"] for c in report["checks"]}
    assert statuses["bad request"] == 400 and statuses["no key refused"] == 401
    assert all(c["ms"] > 0 for c in report["checks"])
    # Every answer named the book version it came from: the index's own.
    version = current().store.book_version()
    assert version is not None and report["book_versions"] == [version.label]
    assert key not in result.stdout
    # The stream: its first event and first text are timed, and come no later than its end.
    stream = next(c for c in report["checks"] if c["name"] == "stream")
    assert 0 < stream["first_event_ms"] <= stream["first_text_ms"] <= stream["ms"]


def test_the_table_names_each_check(served: tuple[str, str]) -> None:
    url, key = served
    result = CliRunner().invoke(app, ["smoke", url, "--api-key", key])

    assert result.exit_code == 0, result.output
    for name in CHECKS:
        assert name in result.stdout
    assert "FAIL" not in result.stdout and "all checks passed" in result.stdout


def test_smoke_without_a_key_fails_the_checks_that_need_one(served: tuple[str, str]) -> None:
    url, _ = served
    result = CliRunner().invoke(app, ["smoke", url, "--json"])

    assert result.exit_code == 1
    passed = {c["name"]: c["passed"] for c in json.loads(result.stdout)["checks"]}
    assert passed == {"health": True, "retrieve": False, "tool call": False, "answer": False, "refusal": False,
                      "bad request": False, "no key refused": True, "stream": False}


def test_a_broken_deployment_fails_every_check_without_a_traceback(stub: StubServer) -> None:
    stub.on("/", Reply(500, {"message": "internal detail 51ab"}))
    result = CliRunner().invoke(app, ["smoke", stub.url, "--api-key", "brk_x", "--json"])

    assert result.exit_code == 1  # typer's Exit(1): the report was printed, nothing was raised
    checks = json.loads(result.stdout)["checks"]
    assert [c["passed"] for c in checks] == [False] * len(CHECKS)
    assert "51ab" not in result.stdout


@pytest.mark.parametrize("url", ["ftp://example.com", "example.com"])
def test_a_url_that_is_not_http_is_refused(url: str) -> None:
    result = CliRunner().invoke(app, ["smoke", url])
    assert result.exit_code == 2 and "http://" in result.stderr
