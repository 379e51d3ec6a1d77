"""SnapStart runtime hooks: warm before the snapshot, fresh network clients after each restore.

Lambda's `snapshot_restore_py` exists only in its managed runtimes; a stand-in module records what
the handler registers, and the tests call the registered callables as Lambda would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

from bookrag.adapters.embedders import get_embedder
from bookrag.adapters.qdrant.store import get_qdrant_client
from bookrag.retrieval.retriever import get_retriever
from bookrag.runtime import lambda_entry as lambda_runtime
from tests.support.paths import ROOT
from tests.support.stubs import closed_port


class FakeSnapshotRestore(ModuleType):
    """Records registrations the way snapshot_restore_py's register_* functions receive them."""

    def __init__(self) -> None:
        super().__init__("snapshot_restore_py")
        self.before: list[Callable[[], None]] = []
        self.after: list[Callable[[], None]] = []

    def register_before_snapshot(self, fn: Callable[[], None], *args: Any, **kwargs: Any) -> Callable[[], None]:
        self.before.append(fn)
        return fn

    def register_after_restore(self, fn: Callable[[], None], *args: Any, **kwargs: Any) -> Callable[[], None]:
        self.after.append(fn)
        return fn


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSnapshotRestore]:
    """A Lambda-like runtime: snapshot_restore_py importable, no hook registered yet in this process."""
    fake = FakeSnapshotRestore()
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", fake)
    monkeypatch.setattr(lambda_runtime, "_installed", set())
    monkeypatch.setattr(lambda_runtime, "_hooks", {"before_snapshot": [], "after_restore": []})
    yield fake


# Run in its own interpreter: clearing the factories here would also drop this session's embedded store,
# whose lock the process keeps until exit.
RESTORE_WITH_REMOTE_CLIENTS = textwrap.dedent("""
    import json, sys, types
    fake = types.ModuleType("snapshot_restore_py")
    fake.after, fake.before = [], []
    fake.register_after_restore = lambda fn, *a, **k: fake.after.append(fn) or fn
    fake.register_before_snapshot = lambda fn, *a, **k: fake.before.append(fn) or fn
    sys.modules["snapshot_restore_py"] = fake

    from bookrag.runtime import lambda_entry as lambda_runtime
    from bookrag.adapters.cohere import get_cohere_client
    from bookrag.adapters.embedders import get_embedder
    from bookrag.retrieval.retriever import get_retriever
    from bookrag.config.settings import get_settings
    from bookrag.adapters.qdrant.store import get_qdrant_client

    lambda_runtime.install_snapstart_hooks("retrieval")
    s = get_settings()
    def clients():
        return [get_qdrant_client(s), get_cohere_client(s, s.cohere_timeout_s), get_embedder(s), get_retriever(s)]
    before = clients()
    for hook in fake.after:
        hook()
    after = clients()
    print(json.dumps({"fresh": [a is not b for a, b in zip(after, before)],
                      "retriever_uses_new_client": get_retriever(s).store.client is after[0],
                      "hooks": len(fake.after)}))
""")


def test_handler_registers_one_hook_of_each_kind(runtime: FakeSnapshotRestore) -> None:
    lambda_runtime.install_snapstart_hooks("retrieval")
    lambda_runtime.install_snapstart_hooks("retrieval")  # a second import of the handler module

    assert len(runtime.before) == 1 and len(runtime.after) == 1
    assert runtime.after == lambda_runtime.registered_hooks("after_restore")


def test_after_restore_network_clients_are_built_fresh() -> None:
    # GIVEN Cohere embeddings and a remote Qdrant (clients with connection pools; nothing is called)
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(("QDRANT_", "COHERE_", "EMBEDDING_"))}
    env.update(QDRANT_URL=f"http://127.0.0.1:{closed_port()}", EMBEDDING_PROVIDER="cohere",
               COHERE_API_KEY="co-test-key", COHERE_BASE_URL=f"http://127.0.0.1:{closed_port()}")

    # WHEN the registered after-restore hooks run between two rounds of factory calls
    out = subprocess.run([sys.executable, "-c", RESTORE_WITH_REMOTE_CLIENTS], env=env, cwd=ROOT, check=True,
                         capture_output=True, text=True, timeout=120).stdout

    # THEN the Qdrant client, the Cohere client, the embedder and the retriever are all new objects
    result = json.loads(out.strip().splitlines()[-1])
    assert result == {"fresh": [True, True, True, True], "retriever_uses_new_client": True, "hooks": 1}


def test_after_restore_keeps_the_local_model_and_embedded_store(runtime: FakeSnapshotRestore,
                                                                 book_env: Any) -> None:
    lambda_runtime.install_snapstart_hooks("retrieval")
    embedder, client = get_embedder(book_env), get_qdrant_client(book_env)
    retriever = get_retriever(book_env)

    for hook in runtime.after:
        hook()

    # No connection to go stale: the model weights and the open store are what the snapshot is for.
    assert get_embedder(book_env) is embedder and get_qdrant_client(book_env) is client
    assert get_retriever(book_env) is not retriever


def test_before_snapshot_warms_the_function(runtime: FakeSnapshotRestore, book_env: Any) -> None:
    lambda_runtime.install_snapstart_hooks("retrieval")

    for hook in reversed(runtime.before):  # Lambda runs them in reverse order of registration
        hook()

    assert get_retriever.cache_info().currsize and get_embedder.cache_info().currsize
    assert lambda_runtime.get_handler.cache_info().currsize
