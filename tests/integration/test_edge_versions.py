"""Book versions on the embedded store, for real: Qdrant Edge shard folders, the pointer readers follow,
rollback, a folder ingested in place turned into versions, ingests killed with SIGKILL, and no request
ever answered from two versions while another ingest switches them (in this process, and between a
`bookrag serve` and a `bookrag ingest --atomic` in two others).

Every book here is two pages whose every sentence names its edition ("alpha", "beta"): a response's
chunks say which version they came from, and its stamp must say the same.
"""

from __future__ import annotations

import contextvars
import json
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from bookrag import errors
from bookrag.adapters.store.edge.files import copy_shard, edge_dir, meta_file, pointer_file, shard_dir
from bookrag.adapters.store.edge.shards import close_shard
from bookrag.adapters.store.edge.versions import EdgeVersions
from bookrag.adapters.store.port import version_pattern
from bookrag.config.settings import Settings, get_settings
from bookrag.domain.book_version import one_version
from bookrag.ingestion.ingestor import Ingestor, IngestReport
from bookrag.ingestion.versions import list_versions, publish, rollback
from bookrag.services.container import container_for
from bookrag.web.app import create_app
from tests.support.edge import (
    OPEN_AND_HOLD,
    PUBLISH_AND_HOLD,
    ask_across_switch,
    assert_one_version_each,
    child_env,
    editions_in,
    read_line,
    release,
    run_read_only,
    shipped_read_only,
    start_child,
    write_edition,
)
from tests.support.paths import ROOT
from tests.support.serve import start
from tests.support.stubs import Reply, StubServer

CALIBRATION = "How is the robot arm calibrated?"


@pytest.fixture
def edge(use_env: Callable[..., None], tmp_path: Path) -> Iterator[Settings]:
    """This test's settings (and the app's) on a fresh embedded folder; its handles closed afterwards."""
    use_env(QDRANT_PATH=str(tmp_path / "qdrant"), EMBEDDING_PROVIDER="local")
    settings = get_settings()
    yield settings
    close_shard(settings)


def publish_book(settings: Settings, root: Path) -> IngestReport:
    return publish(settings, container_for(settings).embedder, EdgeVersions(settings), root)


def served_editions(settings: Settings, question: str = CALIBRATION) -> set[str]:
    return editions_in([h.text for h in container_for(settings).retriever.search(question).hits])


def on_disk(settings: Settings) -> set[str]:
    """The version folders present, complete or not."""
    pattern = version_pattern(settings.qdrant_collection)
    return {p.name for p in edge_dir(settings).iterdir() if p.is_dir() and pattern.fullmatch(p.name)}


def test_an_atomic_ingest_builds_a_version_beside_the_live_one_switches_and_rolls_back(
        edge: Settings, tmp_path: Path) -> None:
    versions = EdgeVersions(edge)
    store = container_for(edge).store

    # GIVEN a first version, served
    first = publish_book(edge, write_edition(tmp_path / "v1", "alpha"))
    assert first.switched_from is None and first.chunks_embedded > 0 and versions.live() == first.collection
    assert store.book_version() == first.book_version and served_editions(edge) == {"alpha"}

    # WHEN one page changes and the book is published again
    v2 = write_edition(tmp_path / "v2", "alpha")
    (v2 / "calibration.md").write_text("# Arm calibration\n\nThe beta edition homes every joint.\n", encoding="utf-8")
    second = publish_book(edge, v2)

    # THEN only that page was embedded (the rest came with the copy of the live version), readers follow
    # the pointer without being told, and both versions are listed, the new one live
    assert second.files_changed == 1 and second.chunks_copied > 0 and second.chunks_embedded < first.chunks_embedded
    assert second.switched_from == first.collection and versions.live() == second.collection
    assert [(v.collection, v.live) for v in list_versions(versions)] == [(first.collection, False),
                                                                          (second.collection, True)]
    assert store.book_version() == second.book_version and "beta" in served_editions(edge)
    assert pointer_file(edge_dir(edge), edge.qdrant_collection).read_text().strip() == second.collection

    # AND the same book again makes no version and switches nothing
    again = publish_book(edge, v2)
    assert again.collection == second.collection and again.switched_from is None and again.chunks_embedded == 0
    assert versions.versions() == [first.collection, second.collection]

    # WHEN rolled back THEN the previous version serves, and there is nothing older to go back to
    assert rollback(versions) == (second.collection, first.collection)
    assert store.book_version() == first.book_version and served_editions(edge) == {"alpha"}
    with pytest.raises(errors.NoVersionError):
        rollback(versions)
    assert rollback(versions, to=second.collection) == (first.collection, second.collection)
    rollback(versions)

    # AND a third version drops what is neither live nor the one it replaced, folder and sidecar
    third = publish_book(edge, write_edition(tmp_path / "v3", "beta"))
    assert third.switched_from == first.collection and third.dropped == [second.collection]
    assert versions.versions() == [first.collection, third.collection] == sorted(on_disk(edge))
    assert not meta_file(edge_dir(edge) / second.collection).exists()


def test_a_request_reads_the_version_it_started_on_and_the_old_shard_closes_when_it_ends(
        edge: Settings, tmp_path: Path) -> None:
    first = publish_book(edge, write_edition(tmp_path / "v1", "alpha"))
    store = container_for(edge).store

    with one_version() as seen:
        assert served_editions(edge) == {"alpha"}
        old = store.client
        second = publish_book(edge, write_edition(tmp_path / "v2", "beta"))

        # A reader outside this request gets the new version; the old shard is retired, not closed
        outside = contextvars.Context().run(store.book_version)
        assert outside == second.book_version and not old.closed

        # while this request keeps reading, and stamping, the version it began with
        assert store.collection == first.collection and store.book_version() == first.book_version
        assert served_editions(edge) == {"alpha"}

    assert seen == {edge.qdrant_collection: first.book_version.label}
    assert old.closed  # with the request's lease, the last one
    assert store.collection == second.collection and served_editions(edge) == {"beta"}


def test_no_response_mixes_two_versions_while_an_ingest_switches(edge: Settings, tmp_path: Path) -> None:
    # GIVEN the app serving a first version, and a second one to publish
    old = publish_book(edge, write_edition(tmp_path / "v1", "alpha")).book_version
    new_book = write_edition(tmp_path / "v2", "beta")
    client = TestClient(create_app("all"))
    questions = [("/api/retrieve", {"query": CALIBRATION, "score_threshold": 0}),
                 ("/api/tools/retrieve_book_context", {"query": "How does a lidar measure distance?"}),
                 ("/api/answer", {"query": "How does a lidar scanner measure distance?"})]

    # WHEN another thread publishes the second version while they run
    seen, new = ask_across_switch(client, questions, old.label,
                                  lambda: publish_book(edge, new_book).book_version.label)

    # THEN both versions were served, and every response's chunks and stamp are one version
    by_label = {old.label: {"alpha"}, new: {"beta"}}
    assert_one_version_each(seen, by_label)  # both served; every response one version, and it says which


def test_a_folder_ingested_in_place_becomes_versions_on_its_first_atomic_ingest(
        edge: Settings, tmp_path: Path) -> None:
    # GIVEN a book ingested in place (the embedded default)
    container = container_for(edge)
    book = write_edition(tmp_path / "v1", "alpha")
    plain = Ingestor(edge, container.embedder, container.store).run(book)
    assert plain.collection == edge.qdrant_collection

    # WHEN it is ingested atomically
    report = publish_book(edge, book)

    # THEN the version started from the in-place shard (nothing embedded), which is gone, and serves
    versions = EdgeVersions(edge)
    assert versions.live() == report.collection and report.chunks_embedded == 0 and report.chunks_copied > 0
    assert not shard_dir(edge).exists() and not meta_file(shard_dir(edge)).exists()
    assert served_editions(edge) == {"alpha"} and container.store.book_version() == report.book_version

    # AND an in-place ingest is refused from now on: it would write a shard nobody reads
    with pytest.raises(errors.ConfigError, match="--atomic"):
        Ingestor(edge, container.embedder, container.store).run(write_edition(tmp_path / "v2", "beta"))


def test_the_first_atomic_ingest_of_a_served_in_place_folder_says_to_stop_the_server_once(
        edge: Settings, tmp_path: Path) -> None:
    # GIVEN a book ingested in place, held open by another process (a running `bookrag serve`)
    container = container_for(edge)
    book = write_edition(tmp_path / "v1", "alpha")
    Ingestor(edge, container.embedder, container.store).run(book)
    close_shard(edge)
    holder = start_child(OPEN_AND_HOLD, str(edge.qdrant_path))
    try:
        assert read_line(holder).startswith("open")

        # WHEN it is ingested atomically THEN the error names the folder and what to do, and nothing changed
        with pytest.raises(errors.StoreLockedError, match="needs it to itself once") as raised:
            publish_book(edge, book)
        assert str(shard_dir(edge)) in str(raised.value)
        assert EdgeVersions(edge).is_plain_collection() and on_disk(edge) == set()
    finally:
        release(holder)

    # AND once the server is stopped, it goes through
    assert publish_book(edge, book).chunks_embedded == 0 and served_editions(edge) == {"alpha"}


def test_a_migration_killed_midway_leaves_the_in_place_book_serving_and_the_next_one_completes(
        edge: Settings, tmp_path: Path) -> None:
    # GIVEN a book ingested in place, and an atomic ingest of a new edition in another process
    container = container_for(edge)
    Ingestor(edge, container.embedder, container.store).run(write_edition(tmp_path / "v1", "alpha"))
    close_shard(edge)
    new_book = write_edition(tmp_path / "v2", "beta")
    child = start_child(PUBLISH_AND_HOLD, str(edge.qdrant_path), str(new_book))
    try:
        # WHEN it has copied the in-place shard and written a page of the new version
        assert read_line(child).startswith("written")
        # THEN it holds no lock on the in-place shard: this process serves it meanwhile
        assert served_editions(edge) == {"alpha"}
    finally:
        # WHEN it is killed there
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)

    # THEN the in-place book is intact and serving, the half-built version is not a version
    versions = EdgeVersions(edge)
    assert versions.live() is None and versions.is_plain_collection() and versions.versions() == []
    assert len(on_disk(edge)) == 1
    assert served_editions(edge) == {"alpha"}

    # AND the next atomic ingest deletes the leftover and completes the migration
    report = publish_book(edge, new_book)
    assert on_disk(edge) == {report.collection} == {versions.live()} and not shard_dir(edge).exists()
    assert served_editions(edge) == {"beta"}


def test_an_atomic_ingest_killed_midway_leaves_the_live_version_serving(edge: Settings, tmp_path: Path) -> None:
    # GIVEN a version, and an atomic ingest of the next one running in another process
    first = publish_book(edge, write_edition(tmp_path / "v1", "alpha"))
    assert served_editions(edge) == {"alpha"}  # this process holds the live version open, as a server does
    new_book = write_edition(tmp_path / "v2", "beta")
    child = start_child(PUBLISH_AND_HOLD, str(edge.qdrant_path), str(new_book))
    try:
        # WHEN it is half way (its copy of the live version made, a page of the new one written)
        assert read_line(child).startswith("written")

        # THEN the live version still serves, and a second atomic ingest waits its turn with a clear error
        assert served_editions(edge) == {"alpha"}
        with pytest.raises(errors.StoreLockedError, match="changing the book versions"):
            publish_book(edge, new_book)
    finally:
        # WHEN it is killed there (SIGKILL)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL

    # THEN the live version is untouched and the half-built one is never listed nor read
    versions = EdgeVersions(edge)
    assert versions.live() == first.collection and versions.versions() == [first.collection]
    assert len(on_disk(edge)) == 2
    assert served_editions(edge) == {"alpha"}

    # AND the next atomic ingest deletes it and publishes
    second = publish_book(edge, new_book)
    assert on_disk(edge) == {first.collection, second.collection}
    assert served_editions(edge) == {"beta"}


def test_a_failed_atomic_ingest_leaves_the_live_version_and_no_leftover(
        edge: Settings, tmp_path: Path, stub: StubServer) -> None:
    first = publish_book(edge, write_edition(tmp_path / "v1", "alpha"))
    # The next ingest embeds with Cohere, which refuses the key: it fails part-way, in a shard of its own
    # (another embedder's, so nothing of the live version is reusable).
    stub.on("/v2/embed", Reply(401, {"message": "invalid api token"}))
    cohere = edge.model_copy(update={"embedding_provider": "cohere", "cohere_base_url": stub.url,
                                     "cohere_api_key": SecretStr("co-test")})

    with pytest.raises(errors.EmbeddingError):
        publish(cohere, container_for(cohere).embedder, EdgeVersions(cohere), write_edition(tmp_path / "v2", "beta"))

    assert stub.calls("/v2/embed")
    assert EdgeVersions(edge).versions() == [first.collection] == sorted(on_disk(edge))
    assert EdgeVersions(edge).live() == first.collection and served_editions(edge) == {"alpha"}


def test_the_cli_ingests_atomically_by_default_once_a_folder_has_versions(edge: Settings, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bookrag.devtools.cli import app

    cli = CliRunner()
    book = write_edition(tmp_path / "v1", "alpha")

    # An embedded folder is ingested in place by default; --atomic makes it versions
    assert json.loads(cli.invoke(app, ["ingest", str(book), "--json"]).stdout)["switched_from"] is None
    assert cli.invoke(app, ["versions", "--json"]).stdout.strip() == "[]"
    atomic = cli.invoke(app, ["ingest", str(book), "--atomic", "--json"])
    assert atomic.exit_code == 0, atomic.output
    first = json.loads(atomic.stdout)["collection"]

    # Then `bookrag ingest` stays atomic, and --incremental is refused with what to do
    second = cli.invoke(app, ["ingest", str(write_edition(tmp_path / "v2", "beta"))])
    assert second.exit_code == 0 and "kept for `bookrag rollback`" in second.stdout
    refused = cli.invoke(app, ["ingest", str(book), "--incremental"])
    assert refused.exit_code == 2 and "CONFIG_ERROR" in refused.output and "--atomic" in refused.output

    rows = json.loads(cli.invoke(app, ["versions", "--json"]).stdout)
    assert [r["live"] for r in rows] == [False, True] and rows[0]["collection"] == first
    back = cli.invoke(app, ["rollback", "--json"])
    assert back.exit_code == 0 and json.loads(back.stdout)["to"] == first
    assert served_editions(edge) == {"alpha"}


def test_a_server_keeps_answering_while_other_processes_publish_and_roll_back(
        edge: Settings, tmp_path: Path) -> None:
    # GIVEN a first version, served by `bookrag serve` from the folder itself
    old = publish_book(edge, write_edition(tmp_path / "v1", "alpha"))
    close_shard(edge)
    server = start(edge.qdrant_path, tmp_path, copy=False)
    seen: list[tuple[str, set[str]]] = []
    stop = threading.Event()

    def ask() -> None:
        with httpx.Client(base_url=server.base, timeout=30) as http:
            while not stop.is_set():
                response = http.post("/api/retrieve", json={"query": CALIBRATION, "score_threshold": 0})
                assert response.status_code == 200, response.text
                data = response.json()
                assert data["book_version"] == response.headers["x-book-version"]
                seen.append((data["book_version"], editions_in([c["content_text"] for c in data["retrieved_chunks"]])))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "bookrag.devtools.cli", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=300,
                              env=child_env(QDRANT_PATH=str(edge.qdrant_path), EMBEDDING_PROVIDER="local"))

    def until_served(label: str) -> None:
        # Polls the server (each poll a real request), bounded by a count, never by a sleep.
        for _ in range(500):
            if seen and seen[-1][0] == label:
                return
            with httpx.Client(base_url=server.base, timeout=30) as http:
                if http.post("/api/retrieve", json={"query": CALIBRATION}).headers["x-book-version"] == label:
                    return
        raise AssertionError(f"{label} was never served")

    try:
        with ThreadPoolExecutor(1) as pool:
            asking = pool.submit(ask)
            try:
                until_served(old.book_version.label)
                # WHEN another process publishes a second version, and a third rolls it back
                published = cli("ingest", str(write_edition(tmp_path / "v2", "beta")), "--atomic", "--json")
                assert published.returncode == 0, published.stderr[-2000:]
                new = json.loads(published.stdout)["book_version"]["label"]
                until_served(new)
                rolled = cli("rollback", "--json")
                assert rolled.returncode == 0, rolled.stderr[-2000:]
                until_served(old.book_version.label)
            finally:
                stop.set()  # inside the pool's `with`: its exit waits for `ask`, which stops only on this
            asking.result()
    finally:
        server.stop()

    # THEN it answered throughout, from each version in turn, never from two in one response
    by_label = {old.book_version.label: {"alpha"}, new: {"beta"}}
    assert_one_version_each(seen, by_label)  # both served; every response one version, and it says which


READ_ONLY_SEARCH = """
import json, sys
from bookrag.config.settings import load_settings
from bookrag.services.container import container_for
settings = load_settings(qdrant_path=sys.argv[1], embedding_provider="local")
store = container_for(settings).store
hits = container_for(settings).retriever.search("How is the robot arm calibrated?").hits
print(json.dumps({"texts": [h.text for h in hits], "opened_at": str(store.client.opened_at),
                  "version": store.book_version().label}))
"""


def test_a_read_only_versioned_folder_is_served_from_a_copy_of_the_live_version_only(
        edge: Settings, tmp_path: Path) -> None:
    # GIVEN a folder with two versions, the second rolled back: the live one is not the newest
    first = publish_book(edge, write_edition(tmp_path / "v1", "alpha"))
    second = publish_book(edge, write_edition(tmp_path / "v2", "beta"))
    rollback(EdgeVersions(edge))
    close_shard(edge)
    # shipped read-only, holes kept as a zip keeps them
    with shipped_read_only(lambda target: copy_shard(edge.qdrant_path, target, durable=False)) as (shipped, scratch):
        # WHEN a fresh process serves a search from it (as a Lambda container does at init)
        result = run_read_only(READ_ONLY_SEARCH, shipped, scratch)

        # THEN it answers from the live version, copied alone to the temporary directory, holes kept
        assert editions_in(result["texts"]) == {"alpha"} and result["version"] == first.book_version.label
        opened_at = Path(result["opened_at"])
        assert opened_at.is_relative_to(scratch) and opened_at.name == first.collection
        copies = [p for p in scratch.rglob("*") if p.is_dir() and p.name in (first.collection, second.collection)]
        assert copies == [opened_at]
        files = [p for p in opened_at.rglob("*") if p.is_file()]
        assert sum(p.stat().st_blocks * 512 for p in files) * 4 < sum(p.stat().st_size for p in files)


def test_a_damaged_pointer_is_an_error_naming_it_not_a_guess(edge: Settings, tmp_path: Path) -> None:
    publish_book(edge, write_edition(tmp_path / "v1", "alpha"))
    pointer = pointer_file(edge_dir(edge), edge.qdrant_collection)
    pointer.write_text("../../etc\n", encoding="utf-8")

    with pytest.raises(errors.StoreFolderError, match="names no version") as raised:
        container_for(edge).retriever.search(CALIBRATION)
    assert str(pointer) in str(raised.value) and raised.value.code == "CONNECTION_ERROR"
