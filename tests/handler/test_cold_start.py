"""Cold starts in fresh interpreters, through the real Lambda entry point (no timings: `make bench` times).

Each test runs benchmarks/child.py, which loads the handler the way the Lambda runtime does and records,
per event, the modules it imported and the cached factories it had to build.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.support.env import cohere_stub_book
from tests.support.paths import ROOT
from tests.support.stubs import StubServer

CHILD = ROOT / "benchmarks" / "child.py"
_OURS = re.compile(r"^(QDRANT_|COHERE_|CO_API_|EMBEDDING_|LLM_|AUTH_|API_KEY|RATE_LIMIT|POWERTOOLS_TRACE|"
                   r"AWS_LAMBDA_|LAMBDA_TASK_ROOT)", re.I)
# Powertools imports botocore's bare package (a user-agent hook, <1 ms); botocore.session is the heavy part.
HEAVY = ("fastapi", "starlette", "mangum", "qdrant_client", "numpy", "tokenizers", "anyio", "httpx",
         "aws_xray_sdk", "botocore.session", "boto3", "cohere", "grpc")


@pytest.fixture(scope="module")
def index_copy(indexed_book: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the session's indexed sample book: the embedded store is locked by this process."""
    target = tmp_path_factory.mktemp("cold-start") / "qdrant"
    shutil.copytree(indexed_book["QDRANT_PATH"], target, ignore=shutil.ignore_patterns(".lock"))
    return target


def cold_start(index: Path, tmp_path: Path, *events: str, function: str = "retrieval",
               **env_overrides: str) -> list[dict[str, Any]]:
    """Run `events` in order in a fresh process; per event: its status, new modules, new factory misses."""
    env = {k: v for k, v in os.environ.items() if not _OURS.match(k)}
    env.update({"QDRANT_PATH": str(index), "EMBEDDING_PROVIDER": "local", **env_overrides})
    out = tmp_path / "result.json"
    subprocess.run([sys.executable, str(CHILD), "cold", "--track", "--function", function, "--out", str(out),
                    "--events", *events], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   timeout=300)
    responses: list[dict[str, Any]] = json.loads(out.read_text())["responses"]
    return responses


def heavy(modules: list[str]) -> list[str]:
    return sorted({h for h in HEAVY for m in modules if m == h or m.startswith(h + ".")})


def test_scheduled_warm_up_leaves_the_container_fully_initialised(index_copy: Path, tmp_path: Path) -> None:
    warm_up, retrieve = cold_start(index_copy, tmp_path, "scheduled-warmup.json", "retrieve-valid.json")

    assert warm_up["new_misses"]  # the warm-up built the clients...
    assert retrieve["status"] == 200
    assert retrieve["new_modules"] == []  # ...so the first real request imports nothing
    assert retrieve["new_misses"] == {}  # ...and builds no client


@pytest.fixture(scope="module")
def cohere_index(cohere_stub: StubServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The deployed configuration's embedder (Cohere, here its stub on 127.0.0.1) over the sample book."""
    return cohere_stub_book(cohere_stub.url, str(tmp_path_factory.mktemp("cohere-cold") / "qdrant"))


@pytest.mark.parametrize(("function", "event"), [("retrieval", "retrieve-valid.json"), ("agent", "answer-valid.json")])
def test_warm_up_leaves_the_deployed_configuration_ready(cohere_index: dict[str, str], tmp_path: Path,
                                                         function: str, event: str) -> None:
    index = Path(cohere_index["QDRANT_PATH"])
    warm_up, request = cold_start(index, tmp_path, "scheduled-warmup.json", event, function=function, **cohere_index)

    assert "cohere" in heavy(warm_up["new_modules"])  # the SDK and its client are loaded by the warm-up...
    assert request["status"] == 200
    assert request["new_modules"] == []  # ...so the first real request imports nothing
    assert request["new_misses"] == {}


def test_health_in_the_deployed_configuration_loads_no_cohere(cohere_index: dict[str, str], tmp_path: Path) -> None:
    (health,) = cold_start(Path(cohere_index["QDRANT_PATH"]), tmp_path, "health.json", **cohere_index)

    assert health["status"] == 200
    assert heavy(health["new_modules"]) == []


def test_health_cold_start_imports_no_heavy_sdk(index_copy: Path, tmp_path: Path) -> None:
    (health,) = cold_start(index_copy, tmp_path, "health.json")

    assert health["status"] == 200
    assert heavy(health["new_modules"]) == []


# The questions a page answers (issue 36): found at ingest, read by one route; nothing else may load them.
SUGGESTIONS = ("bookrag.services.suggesting", "bookrag.text.page_questions", "bookrag.services.page_suggestions")


def test_health_and_an_answer_load_no_page_questions_code(index_copy: Path, tmp_path: Path) -> None:
    health, answer, pages = cold_start(index_copy, tmp_path, "health.json", "answer-valid.json",
                                       "pages-suggestions.json", function="agent")

    assert health["status"] == answer["status"] == pages["status"] == 200
    assert not [m for m in health["new_modules"] + answer["new_modules"] if m.startswith(SUGGESTIONS)]
    # The route reads what ingest stored: the candidates' and the check's code stays unloaded.
    assert "bookrag.services.page_suggestions" in pages["new_modules"]
    assert not [m for m in pages["new_modules"] if m.startswith(SUGGESTIONS[:2])]


def test_local_retrieve_cold_start_imports_only_what_it_uses(index_copy: Path, tmp_path: Path) -> None:
    (retrieve,) = cold_start(index_copy, tmp_path, "retrieve-valid.json")

    assert retrieve["status"] == 200
    # No Cohere client for a local embedder; no X-Ray SDK (nor the botocore it pulls in) where tracing is off.
    assert not {"cohere", "aws_xray_sdk", "botocore.session", "boto3"} & set(heavy(retrieve["new_modules"]))


def test_cheap_qdrant_import_keeps_every_rest_model_usable() -> None:
    # In a fresh interpreter: this one imported qdrant_client long ago.
    code = textwrap.dedent("""
        import inspect, sys
        from pydantic import BaseModel
        from bookrag.adapters.store.qdrant.lazy_imports import import_qdrant_client
        import_qdrant_client()
        from qdrant_client import _pydantic_compat
        from qdrant_client.http.models import models
        deferred = [m for _, m in inspect.getmembers(models, inspect.isclass)
                    if issubclass(m, BaseModel) and m.__module__ == models.__name__ and not m.__pydantic_complete__]
        for model in deferred:
            model.model_rebuild()  # what pydantic does on a model's first use
        assert all(m.__pydantic_complete__ for m in deferred)
        assert _pydantic_compat.update_forward_refs.__name__ == "update_forward_refs"  # restored
        assert not any(type(f).__module__ == "bookrag.adapters.store.qdrant.lazy_imports" for f in sys.meta_path)
        print(len(deferred))
    """)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=120)

    assert int(out.stdout) > 0  # some models were left to rebuild on first use: the saving is real
