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

from bookrag.runtime import http as runtime_http
from bookrag.runtime import snapstart
from bookrag.services.container import container_for
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
    monkeypatch.setattr(snapstart, "_installed", set())
    monkeypatch.setattr(snapstart, "_hooks", {"before_snapshot": [], "after_restore": []})
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

    from bookrag.runtime import snapstart
    from bookrag.services.container import current

    snapstart.install_snapstart_hooks("retrieval")
    def clients():
        c = current()
        return [c.store.client, c.cohere, c.embedder, c.retriever]
    before = clients()
    for hook in fake.after:
        hook()
    after = clients()
    print(json.dumps({"fresh": [a is not b for a, b in zip(after, before)],
                      "retriever_uses_new_client": current().retriever.store.client is after[0],
                      "hooks": len(fake.after)}))
""")


def test_handler_registers_one_hook_of_each_kind(runtime: FakeSnapshotRestore) -> None:
    snapstart.install_snapstart_hooks("retrieval")
    snapstart.install_snapstart_hooks("retrieval")  # a second import of the handler module

    assert len(runtime.before) == 1 and len(runtime.after) == 1
    assert runtime.after == snapstart.registered_hooks("after_restore")


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
    snapstart.install_snapstart_hooks("retrieval")
    container = container_for(book_env)
    embedder, client, retriever = container.embedder, container.store.client, container.retriever

    for hook in runtime.after:
        hook()

    # No connection to go stale: the model weights and the open store are what the snapshot is for, and
    # the retriever built on them holds nothing else.
    assert container.embedder is embedder and container.store.client is client
    assert container.retriever is retriever


def test_before_snapshot_warms_the_function(runtime: FakeSnapshotRestore, book_env: Any) -> None:
    snapstart.install_snapstart_hooks("retrieval")

    for hook in reversed(runtime.before):  # Lambda runs them in reverse order of registration
        hook()

    assert container_for(book_env).built("retriever") and container_for(book_env).built("embedder")
    assert runtime_http.get_handler.cache_info().currsize
