"""The embedded store (Qdrant Edge) for real: crash mid-ingest, one process per folder, a read-only shard,
a folder from the previous store, and what an ingest leaves behind.

Every child process here is a real Python process on the same folder; a crash is a real SIGKILL.
"""

from __future__ import annotations

import hashlib
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from bookrag import errors
from bookrag.adapters.store.edge.files import shard_dir
from bookrag.adapters.store.edge.shards import close_shard
from bookrag.adapters.store.edge.store import EdgeStore
from bookrag.config.settings import Settings
from bookrag.ingestion.ingestor import Ingestor
from bookrag.services.container import container_for
from tests.support.edge import (
    CHAPTER,
    INGEST_AND_HOLD,
    OPEN_AND_HOLD,
    child_env,
    read_line,
    release,
    run_read_only,
    shipped_read_only,
    start_child,
    write_book,
)
from tests.support.paths import ROOT


@pytest.fixture
def settings(make_settings: Any) -> Iterator[Settings]:
    built: Settings = make_settings()
    yield built
    close_shard(built)


def ingest(settings: Settings, docs: Path) -> Any:
    container = container_for(settings)
    return Ingestor(settings, container.embedder, container.store).run(docs)


def top_file(settings: Settings, query: str) -> str:
    return container_for(settings).retriever.search(query).hits[0].source_file


def test_an_ingest_killed_midway_leaves_a_store_that_answers_and_a_next_ingest_completes(
        settings: Settings, tmp_path: Path) -> None:
    # GIVEN the chapter ingested, then a revision of every file being ingested by another process
    docs = write_book(tmp_path)
    first = ingest(settings, docs)
    before = EdgeStore(settings).manifest()
    close_shard(settings)
    write_book(tmp_path, revised=True)
    child = start_child(INGEST_AND_HOLD, str(settings.qdrant_path), str(docs))

    # WHEN it is killed (SIGKILL) after writing its first file, in the middle of the ingest
    assert read_line(child).startswith("written")
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL

    # THEN the store reopens, still holds every file and answers from it
    store = EdgeStore(settings)
    after_crash = store.manifest()
    assert set(after_crash) == set(before)
    assert sum(1 for name in before if after_crash[name]["file_hash"] == before[name]["file_hash"]) >= 1
    assert top_file(settings, "What is the zero moment point in bipedal walking?").endswith("locomotion.md")
    # AND a following ingest completes, redoing what the killed one did not finish
    second = ingest(settings, docs)
    assert 1 <= second.files_changed < len(before)
    final = store.manifest()
    assert all(entry["stored"] == entry["total_chunks"] for entry in final.values())
    assert store.count() == second.chunks_total == sum(e["total_chunks"] for e in final.values())
    assert second.chunks_total >= first.chunks_total
    assert "revision" in container_for(settings).retriever.search("revision note closing").hits[0].text.lower()


def test_one_process_at_a_time_the_other_gets_an_error_naming_the_folder(
        settings: Settings, tmp_path: Path, use_env: Callable[..., None]) -> None:
    # GIVEN a book ingested, and another process holding the folder open (as `bookrag serve` does)
    docs = write_book(tmp_path)
    ingest(settings, docs)
    close_shard(settings)
    holder = start_child(OPEN_AND_HOLD, str(settings.qdrant_path))
    try:
        assert read_line(holder).startswith("open")

        # WHEN `bookrag ingest` runs on the same folder
        cli = subprocess.run([sys.executable, "-m", "bookrag.devtools.cli", "ingest", str(docs)], cwd=ROOT,
                             env=child_env(QDRANT_PATH=str(settings.qdrant_path), EMBEDDING_PROVIDER="local"),
                             capture_output=True, text=True, timeout=300)

        # THEN it stops with a message naming the folder and what to do, not a stack trace
        output = cli.stdout + cli.stderr
        assert cli.returncode == 2
        assert str(shard_dir(settings)) in output and "open in another process" in output
        assert "Traceback" not in output

        # AND a search in this process gets the same error, as the contract's CONNECTION_ERROR envelope
        with pytest.raises(errors.StoreLockedError):
            container_for(settings).retriever.search("zero moment point")
        from bookrag.web.app import create_app

        use_env(QDRANT_PATH=str(settings.qdrant_path), EMBEDDING_PROVIDER="local")
        response = TestClient(create_app("retrieval")).post("/api/retrieve", json={"query": "zero moment point"})
        assert response.status_code == 500
        body = response.json()
        assert body["code"] == "CONNECTION_ERROR" and body["recoverable"] is True
        assert "open in another process" in body["error"] and "Traceback" not in response.text
    finally:
        release(holder)

    # WHEN the other process has let go THEN the next search opens the folder (a failed open is not kept)
    assert top_file(settings, "What is the zero moment point in bipedal walking?").endswith("locomotion.md")


def _tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(folder)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


READ_ONLY_SEARCH = """
import json, sys
from bookrag.config.settings import load_settings
from bookrag.adapters.store.edge.store import EdgeStore
from bookrag.services.container import container_for
settings = load_settings(qdrant_path=sys.argv[1], embedding_provider="local")
hits = container_for(settings).retriever.search("What is the zero moment point in bipedal walking?").hits
again = EdgeStore(settings)
print(json.dumps({"top": hits[0].source_file, "count": again.count(), "opened_at": str(again.client.opened_at),
                  "same_handle": again.client is container_for(settings).store.client}))
"""


def test_a_read_only_shard_is_copied_to_the_temporary_directory_once_and_served(settings: Settings,
                                                                                tmp_path: Path) -> None:
    # GIVEN a book ingested, shipped as a read-only folder (as in a Lambda layer under /opt)
    docs = write_book(tmp_path)
    count = ingest(settings, docs).chunks_total
    close_shard(settings)
    with shipped_read_only(lambda target: shutil.copytree(settings.qdrant_path, target)) as (shipped, scratch):
        digest = _tree_digest(shipped)

        # WHEN a fresh process serves a search from it
        result = run_read_only(READ_ONLY_SEARCH, shipped, scratch)

        # THEN it answers from a copy in the temporary directory, one per process, and the folder is untouched
        assert result["top"].endswith("locomotion.md") and result["count"] == count
        assert result["opened_at"].startswith(str(scratch)) and result["same_handle"] is True
        assert _tree_digest(shipped) == digest


def test_a_folder_from_the_previous_store_is_refused_with_re_ingest_then_re_ingested(settings: Settings,
                                                                                   tmp_path: Path) -> None:
    # GIVEN a folder written by qdrant-client's local mode (the embedded store before Qdrant Edge)
    from qdrant_client import QdrantClient, models

    old = QdrantClient(path=str(settings.qdrant_path))
    old.create_collection(settings.qdrant_collection,
                          vectors_config={"dense": models.VectorParams(size=384, distance=models.Distance.COSINE)})
    old.close()

    # WHEN it is searched THEN the error says to re-ingest, naming the folder
    with pytest.raises(errors.StaleStoreError, match="re-ingest") as raised:
        container_for(settings).retriever.search("zero moment point")
    assert str(settings.qdrant_path) in str(raised.value)

    # WHEN the book is ingested into the same folder THEN it is searchable
    report = ingest(settings, write_book(tmp_path))
    assert report.chunks_total > 0
    assert top_file(settings, "What is the zero moment point in bipedal walking?").endswith("locomotion.md")


def test_an_ingest_leaves_the_shard_optimised_and_deletes_and_edits_consistent(settings: Settings,
                                                                              tmp_path: Path) -> None:
    # GIVEN the chapter ingested
    docs = write_book(tmp_path)
    first = ingest(settings, docs)
    store = EdgeStore(settings)
    handle = store.client

    # THEN the ingest ended optimised (one segment, nothing pending) and every payload is there
    assert handle.dirty is False and handle.shard.info().segments_count == 1
    assert store.count() == first.chunks_total

    # WHEN a file is deleted and another shortened, then the book re-ingested
    pages = sorted((docs / CHAPTER).glob("*.md"))
    pages[0].unlink()
    text = pages[1].read_text(encoding="utf-8")
    pages[1].write_text(text[: len(text) // 3], encoding="utf-8")
    second = ingest(settings, docs)

    # THEN the deleted file's chunks are gone, the shortened file has exactly its new chunks, counts agree
    manifest = store.manifest()
    assert f"{CHAPTER}/{pages[0].name}" not in manifest
    shortened = manifest[f"{CHAPTER}/{pages[1].name}"]
    assert shortened["stored"] == shortened["total_chunks"] < first.chunks_total
    assert store.count() == second.chunks_total == sum(e["stored"] for e in manifest.values())
    assert second.files_deleted == 1 and second.files_changed == 1

    # AND an unchanged re-ingest writes nothing (so it does not optimise again)
    third = ingest(settings, docs)
    assert third.files_changed == 0 and handle.dirty is False
