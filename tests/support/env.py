"""The environment variables our settings and the Cohere SDK read: no test inherits the developer's values."""

from __future__ import annotations

import os

import pytest

from bookrag.config.settings import Settings

OUR_VARS = {name.upper() for name in Settings.model_fields} | {"CO_API_KEY", "CO_API_URL"}


def clear_our_vars(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset every variable of ours (in any letter case, as pydantic-settings matches them)."""
    for name in list(os.environ):
        if name.upper() in OUR_VARS:
            monkeypatch.delenv(name)


def without_our_vars() -> dict[str, str]:
    """This process's environment minus every variable of ours: the base of a child process's env. The
    question log's folder stays (the tests' own, tests/conftest.py): a child never writes the working tree."""
    return {k: v for k, v in os.environ.items() if k.upper() not in OUR_VARS or k.upper() == "QUESTION_LOG_PATH"}


def cohere_stub_book(stub_url: str, folder: str) -> dict[str, str]:
    """Ingest the sample book with the deployed configuration's embedder, Cohere (its stub at `stub_url`),
    into the embedded store at `folder`, in a child process; returns the variables that read it back."""
    import subprocess
    import sys

    from tests.support.paths import SAMPLE_DOCS

    env = {"EMBEDDING_PROVIDER": "cohere", "COHERE_API_KEY": "stub-cohere-key", "COHERE_BASE_URL": stub_url,
           "QDRANT_PATH": folder}
    subprocess.run([sys.executable, "-m", "bookrag.devtools.cli", "ingest", str(SAMPLE_DOCS)], check=True,
                   env={**without_our_vars(), **env}, capture_output=True, timeout=300)
    return env
