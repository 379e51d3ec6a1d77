"""`sam build`'s StreamFunction started exactly as AWS's Lambda Web Adapter starts it: the adapter's wrapper
(/opt/bootstrap) runs `exec -- "${LAMBDA_TASK_ROOT}/${_HANDLER}"` (run.sh) with the function's variables
from template.yaml; the app is ready when uvicorn says so and the readiness path answers."""

from __future__ import annotations

import os
import queue
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx

from tests.support.env import without_our_vars
from tests.support.paths import ROOT
from tests.support.template import load_template

BUILD = ROOT / ".aws-sam" / "build"
TASK_ROOT = BUILD / "StreamFunction"
LAYER = BUILD / "SharedLayer" / "python"
PYTHON312 = ROOT / ".venv-ric" / "bin" / "python3.12"  # `make sam-check`'s python3.12 (the layer's ABI)
BUILT = (TASK_ROOT / "run.sh").exists() and LAYER.is_dir() and PYTHON312.exists()


def declared() -> dict[str, str]:
    """The stream function's variables and handler from template.yaml."""
    function = load_template()["Resources"]["StreamFunction"]["Properties"]
    env = {k: str(v) for k, v in function["Environment"]["Variables"].items() if isinstance(v, str | int)}
    return {**env, "_HANDLER": function["Handler"]}


@dataclass
class Started:
    process: subprocess.Popen[str]
    base: str
    lines: queue.Queue[str]


@contextmanager
def started(env: dict[str, str], startup_s: float = 120) -> Iterator[Started]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    variables = declared()
    child = {**without_our_vars(), **variables, **env, "PORT": str(port), "LAMBDA_TASK_ROOT": str(TASK_ROOT),
             "PYTHONPATH": str(LAYER),  # the layer, which Lambda mounts at /opt/python
             "PATH": f"{PYTHON312.parent}{os.pathsep}{os.environ['PATH']}", "AWS_REGION": "us-east-1"}
    process = subprocess.Popen(["/bin/bash", "-c", 'exec -- "${LAMBDA_TASK_ROOT}/${_HANDLER}"'], env=child,
                               cwd=TASK_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout or []], daemon=True).start()
    try:
        while True:  # uvicorn says when it listens; then the readiness check, as the adapter makes it
            line = lines.get(timeout=startup_s)  # queue.Empty: it never started
            if "Application startup complete" in line:
                break
            if process.poll() is not None:
                raise RuntimeError(f"the stream function exited: {line}")
        base = f"http://127.0.0.1:{port}"
        ready = httpx.get(base + variables["AWS_LWA_READINESS_CHECK_PATH"], timeout=30)
        if ready.status_code != 200:
            raise RuntimeError(f"readiness check answered {ready.status_code}")
        yield Started(process, base, lines)
    finally:
        process.terminate()
        process.wait(timeout=30)
