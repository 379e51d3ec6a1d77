"""Book versions: atomic ingest behind an alias, rollback, and one version per request.

Embedded Qdrant for real (its local mode keeps aliases as a server does), the local embedder, the app
over TestClient; the alias switch on a remote Qdrant over HTTP against a stateful stub of its REST API
on 127.0.0.1 (tests/support/qdrant_aliases.py), asserting the requests qdrant-client sent. The embedded
store's own versions (Qdrant Edge shard folders) are tested in test_edge_versions.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from qdrant_client import QdrantClient

from bookrag import errors
from bookrag.adapters.store.qdrant.aliases import QdrantVersions
from bookrag.adapters.store.qdrant.store import VectorStore
from bookrag.config.settings import Settings, get_settings
from bookrag.domain.book_version import BookVersion, one_version
from bookrag.ingestion.ingestor import Ingestor
from bookrag.ingestion.versions import list_versions, publish, rollback
from bookrag.services.container import container_for
from bookrag.web.app import create_app
from tests.support.edge import ask_across_switch, assert_one_version_each, editions_in, write_edition
from tests.support.qdrant_aliases import QdrantAliases
from tests.support.stubs import Reply, StubServer


@pytest.fixture
def versioned(make_settings: Callable[..., Settings], use_env: Callable[..., None],
              tmp_path: Path) -> Callable[[Path], Any]:
    """Settings on a fresh embedded store (read through the alias on every request: TTL 0), and a publisher."""
    use_env(QDRANT_PATH=str(tmp_path / "qdrant"), EMBEDDING_PROVIDER="local", QDRANT_ALIAS_TTL_S="0")
    settings = get_settings()
    container = container_for(settings)
    # Versions are a Qdrant alias over collections: the embedded engine that has them is qdrant-client's
    # local mode (the same client and requests as against a server; over HTTP below, against a stub).
    container.provide("store", VectorStore(settings, QdrantClient(path=str(tmp_path / "local-mode"))))

    def publish_book(root: Path) -> Any:
        report = publish(settings, container.embedder, QdrantVersions(settings, container.store.client), root)
        container.store.refresh()
        return report

    return publish_book


def test_an_atomic_ingest_builds_a_new_version_keeps_the_previous_and_rolls_back(
        versioned: Callable[[Path], Any], tmp_path: Path) -> None:
    settings = get_settings()
    container = container_for(settings)
    versions = QdrantVersions(settings, container.store.client)

    first = versioned(write_edition(tmp_path / "v1", "alpha"))
    assert first.switched_from is None and first.chunks_embedded > 0 and versions.live() == first.collection
    (tmp_path / "v2").mkdir()
    write_edition(tmp_path / "v2", "alpha")
    (tmp_path / "v2" / "calibration.md").write_text("# Arm calibration\n\nThe beta edition homes every joint.\n",
                                                    encoding="utf-8")
    second = versioned(tmp_path / "v2")

    # Only the changed file was embedded; the other was copied from the live version as stored.
    assert second.files_changed == 1 and second.chunks_copied > 0
    assert second.switched_from == first.collection and versions.live() == second.collection
    assert [v.collection for v in list_versions(versions)] == [first.collection, second.collection]
    assert second.book_version.content_hash != first.book_version.content_hash
    assert container.store.book_version() == second.book_version

    # The same book again: no new collection, no switch.
    again = versioned(tmp_path / "v2")
    assert again.collection == second.collection and again.chunks_embedded == 0 and again.switched_from is None

    assert rollback(versions) == (second.collection, first.collection)
    container.store.refresh()
    assert container.store.book_version() == first.book_version
    hits = container.retriever.search("How is the robot arm calibrated?").hits
    assert editions_in([h.text for h in hits]) == {"alpha"}
    with pytest.raises(errors.NoVersionError):
        rollback(versions)  # nothing older than the first version is kept

    # A third version drops what is neither live nor the one it replaced.
    third = versioned(write_edition(tmp_path / "v3", "beta"))
    assert third.switched_from == first.collection and third.dropped == [second.collection]
    assert versions.versions() == [first.collection, third.collection]


def test_a_plain_collection_from_before_versions_becomes_the_first_version(
        versioned: Callable[[Path], Any], tmp_path: Path) -> None:
    settings = get_settings()
    container = container_for(settings)
    book = write_edition(tmp_path / "v1", "alpha")
    plain = Ingestor(settings, container.embedder, container.store).run(book)
    assert plain.collection == settings.qdrant_collection and plain.book_version is not None

    report = versioned(book)

    versions = QdrantVersions(settings, container.store.client)
    assert versions.live() == report.collection != settings.qdrant_collection
    assert not versions.is_plain_collection() and report.chunks_embedded == 0  # copied, not re-embedded
    assert container.retriever.search("lidar point cloud").hits


def test_a_failed_ingest_leaves_the_live_version_alone(
        versioned: Callable[[Path], Any], tmp_path: Path, stub: StubServer) -> None:
    live = versioned(write_edition(tmp_path / "v1", "alpha"))
    # The next ingest embeds with Cohere, which refuses the key: the ingest fails part-way.
    stub.on("/v2/embed", Reply(401, {"message": "invalid api token"}))
    cohere = get_settings().model_copy(update={"embedding_provider": "cohere", "cohere_base_url": stub.url})
    from pydantic import SecretStr

    cohere = cohere.model_copy(update={"cohere_api_key": SecretStr("co-test")})
    container = container_for(cohere)
    versions = QdrantVersions(cohere, container_for(get_settings()).store.client)

    with pytest.raises(errors.EmbeddingError):
        publish(cohere, container.embedder, versions, write_edition(tmp_path / "v2", "beta"))

    assert stub.calls("/v2/embed")
    assert versions.versions() == [live.collection] and versions.live() == live.collection


def test_no_request_sees_two_versions_while_an_ingest_switches(
        versioned: Callable[[Path], Any], tmp_path: Path) -> None:
    old = versioned(write_edition(tmp_path / "v1", "alpha")).book_version
    new_book = write_edition(tmp_path / "v2", "beta")
    client = TestClient(create_app("all"))
    questions = [("/api/retrieve", {"query": "How is the robot arm calibrated?", "score_threshold": 0}),
                 ("/api/tools/retrieve_book_context", {"query": "How does a lidar measure distance?"})]
    seen, new = ask_across_switch(client, questions, old.label, lambda: versioned(new_book).book_version.label)

    by_label = {old.label: {"alpha"}, new: {"beta"}}
    assert_one_version_each(seen, by_label)  # both served; every response one version, and it says which


def test_a_request_pins_one_collection_for_all_its_reads(versioned: Callable[[Path], Any], tmp_path: Path) -> None:
    first = versioned(write_edition(tmp_path / "v1", "alpha"))
    store = container_for(get_settings()).store
    with one_version() as seen:
        assert store.collection == first.collection
        second = versioned(write_edition(tmp_path / "v2", "beta"))
        # The alias moved, but this request keeps reading the collection it started with.
        assert store.collection == first.collection and store.book_version() == first.book_version
    assert seen == {get_settings().qdrant_collection: first.book_version.label}
    assert store.collection == second.collection


# --- a remote Qdrant, over HTTP ------------------------------------------------------------------------


def _version(content: str, at: str) -> dict[str, Any]:
    return {"book_version": BookVersion(content * 64, at).to_dict()}


OLD, NEW = "book_chunks__v20261101T000000Z_aaaaaaaaaaaa", "book_chunks__v20261102T000000Z_bbbbbbbbbbbb"


def test_the_switch_and_rollback_on_a_remote_qdrant_are_one_aliases_request(
        stub: StubServer, make_settings: Callable[..., Settings]) -> None:
    qdrant = QdrantAliases(collections={OLD: _version("a", "2026-11-01T00:00:00Z"),
                                        NEW: _version("b", "2026-11-02T00:00:00Z"), "unrelated": {}},
                           aliases={"book_chunks": NEW}).serve(stub)
    settings = make_settings(qdrant_url=stub.url, qdrant_timeout_s=2)
    versions = QdrantVersions(settings, container_for(settings).store.client)

    assert versions.versions() == [OLD, NEW] and versions.live() == NEW
    assert rollback(versions) == (NEW, OLD)

    changes = stub.calls("/collections/aliases")
    assert len(changes) == 1 and changes[0].method == "POST"
    assert changes[0].json()["actions"] == [{"delete_alias": {"alias_name": "book_chunks"}},
                                            {"create_alias": {"collection_name": OLD, "alias_name": "book_chunks"}}]
    assert qdrant.aliases == {"book_chunks": OLD}
    assert versions.book_version(OLD).content_hash == "a" * 64

    rollback(versions, to=NEW)  # and forward again
    assert qdrant.aliases == {"book_chunks": NEW}
    with pytest.raises(errors.NoVersionError):
        rollback(versions, to="unrelated")


def test_a_remote_request_reads_the_collection_the_alias_named_when_it_began(
        stub: StubServer, make_settings: Callable[..., Settings]) -> None:
    qdrant = QdrantAliases(collections={OLD: _version("a", "2026-11-01T00:00:00Z"),
                                        NEW: _version("b", "2026-11-02T00:00:00Z")},
                           aliases={"book_chunks": OLD}).serve(stub)
    settings = make_settings(qdrant_url=stub.url, qdrant_timeout_s=2, qdrant_alias_ttl_s=0)
    store = container_for(settings).store
    with one_version():
        assert store.describe()["points"] == 1
        qdrant.aliases = {"book_chunks": NEW}  # an ingest elsewhere switches the alias mid-request
        assert store.book_version().content_hash == "a" * 64
        store.describe()
    read = [r.path for r in stub.requests if r.path.startswith("/collections/book_chunks__v")]
    assert read and all(p.startswith(f"/collections/{OLD}") for p in read)
    assert len(stub.calls("/aliases")) == 1  # one lookup for the whole request

    with one_version():
        assert store.book_version().content_hash == "b" * 64  # the next request follows the alias
