"""MCP test helpers: `bookrag serve` and `bookrag mcp` as subprocesses on a copy of the indexed sample book,
and the official `mcp` client's results as plain JSON."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx

from tests.support.events import load_event

_OURS = re.compile(r"^(QDRANT_|COHERE_|CO_API_|EMBEDDING_|LLM_|GEMINI_|OPENAI_|AUTH_|API_KEY|RATE_LIMIT|MCP_|"
                   r"BOOK_|POWERTOOLS_|AWS_LAMBDA_)", re.I)


def copy_index(indexed: str, target: Path) -> Path:
    """A copy of an embedded store (each process locks the folder it opens)."""
    shutil.copytree(indexed, target, ignore=shutil.ignore_patterns(".lock"))
    return target


def server_env(qdrant_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not _OURS.match(k)}
    env.update({"QDRANT_PATH": str(qdrant_path), "EMBEDDING_PROVIDER": "local", "LLM_PROVIDER": "extractive",
                "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)})
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def bookrag_serve(env: dict[str, str], deadline_s: float = 120) -> Iterator[str]:
    """`bookrag serve` on a free loopback port; yields its base URL, stops it afterwards."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "bookrag.devtools.cli", "serve", "--port", str(port)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        end = time.monotonic() + deadline_s
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"bookrag serve exited: {server.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                if httpx.get(f"{base}/api/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > end:
                    raise
                time.sleep(0.2)  # a starting process: there is nothing to wait on but its port
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


def run_async(main: Callable[[], Awaitable[Any]]) -> Any:
    """Run a client coroutine in a thread of its own: an event loop run and closed in the main thread
    leaves it without a current loop, which the rest of the session's tests (Mangum) still need."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, main).result()


def as_json(result: Any) -> dict[str, Any]:
    """An SDK result as its wire JSON (camelCase, no nulls)."""
    data: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data


def mcp_event(name: str, arguments: dict[str, Any] | None = None, tool: str | None = None,
              **headers: str) -> dict[str, Any]:
    """An events/ MCP event; `arguments` replaces the tool call's arguments, `tool` the tool it calls
    (and its Mcp-Name header), `headers` are added."""
    event = load_event(name)
    if arguments is not None or tool is not None:
        body = json.loads(base64.b64decode(event["body"]))
        if arguments is not None:
            body["params"]["arguments"] = arguments
        if tool is not None:
            body["params"]["name"] = tool
            event["headers"]["mcp-name"] = tool
        event["body"] = base64.b64encode(json.dumps(body).encode()).decode()
    event["headers"] = {**event["headers"], **{k.replace("_", "-"): v for k, v in headers.items()}}
    return event


def jsonrpc_result(response: dict[str, Any]) -> dict[str, Any]:
    """The JSON-RPC result of a Lambda proxy response to an MCP event (fails on a JSON-RPC error)."""
    raw = response["body"]
    body = json.loads(base64.b64decode(raw) if response.get("isBase64Encoded") else raw)
    assert "error" not in body, body
    result: dict[str, Any] = body["result"]
    return result
