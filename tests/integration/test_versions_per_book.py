"""Each book its own versions, switch and rollback (issue 38), on both engines: Qdrant Edge shard folders for real
(the tiny bees book, the local embedder), and a remote Qdrant's aliases over HTTP against the stateful stub of
its REST API (tests/support/qdrant_aliases.py)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bookrag.adapters.store.qdrant.aliases import QdrantVersions
from bookrag.adapters.store.qdrant.store import VectorStore
from bookrag.config.settings import Settings
from bookrag.domain.book_version import BookVersion
from bookrag.ingestion.versions import list_versions, publish, rollback
from bookrag.services.container import container_for
from tests.support.paths import ROOT
from tests.support.qdrant_aliases import QdrantAliases
from tests.support.stubs import StubServer

BEES_DOCS = ROOT / "tests" / "fixtures" / "second-book" / "docs"


def _book(tmp_path: Path, name: str, extra: str) -> Path:
    docs = tmp_path / name / "docs"
    shutil.copytree(BEES_DOCS, docs)
    (docs / "extra.md").write_text(f"# Notes\n\n{extra}\n", encoding="utf-8")
    return docs


def test_each_book_publishes_and_rolls_back_alone_on_the_embedded_store(
        make_settings: Callable[..., Settings], tmp_path: Path) -> None:
    root = container_for(make_settings(qdrant_path=tmp_path / "qdrant", qdrant_alias_ttl_s=0))
    one, two = root.book("one"), root.book("two")

    def ingest(book: Any, docs: Path) -> Any:
        report = publish(book.settings, book.embedder, book.versions, docs)
        book.store.refresh()
        return report

    first = ingest(one, _book(tmp_path, "a1", "Drones need a calm day."))
    ingest(two, _book(tmp_path, "b1", "Queens mate in flight."))
    second = ingest(one, _book(tmp_path, "a2", "Drones need a warm, calm day."))
    two_live = two.versions.live()

    assert [v.live for v in list_versions(one.versions)] == [False, True]
    assert len(list_versions(two.versions)) == 1 and root.books() == ["one", "two"]
    assert all(v.startswith("book_chunks--one__v") for v in one.versions.versions())

    assert rollback(one.versions) == (second.collection, first.collection)
    assert two.versions.live() == two_live  # the other book never moved
    assert "warm" not in one.store.fetch_chunks("extra.md", [0])[0].content_text
    assert two.store.fetch_chunks("extra.md", [0])[0].content_text.endswith("Queens mate in flight.")


def _version(content: str, at: str) -> dict[str, Any]:
    return {"book_version": BookVersion(content * 64, at).to_dict()}


def test_a_remote_books_rollback_moves_its_own_alias_only(stub: StubServer,
                                                          make_settings: Callable[..., Settings]) -> None:
    old = "book_chunks--redux__v20261101T000000Z_aaaaaaaaaaaa"
    new = "book_chunks--redux__v20261102T000000Z_bbbbbbbbbbbb"
    default = "book_chunks__v20261101T000000Z_cccccccccccc"
    qdrant = QdrantAliases(collections={old: _version("a", "2026-11-01T00:00:00Z"),
                                        new: _version("b", "2026-11-02T00:00:00Z"),
                                        default: _version("c", "2026-11-01T00:00:00Z"), "unrelated": {}},
                           aliases={"book_chunks": default, "book_chunks--redux": new}).serve(stub)
    root = container_for(make_settings(qdrant_url=stub.url, qdrant_timeout_s=2))
    redux = root.book("redux")
    versions = redux.versions

    assert isinstance(versions, QdrantVersions) and versions.alias == "book_chunks--redux"
    assert isinstance(redux.store, VectorStore) and isinstance(root.store, VectorStore)
    assert redux.store.client is root.store.client  # one connection pool for every book
    assert versions.versions() == [old, new] and root.versions.versions() == [default]
    assert root.books() == ["default", "redux"]  # "unrelated" is no book of ours
    assert rollback(versions) == (new, old)
    assert qdrant.aliases == {"book_chunks": default, "book_chunks--redux": old}
    assert stub.calls("/collections/aliases")[0].json()["actions"] == [
        {"delete_alias": {"alias_name": "book_chunks--redux"}},
        {"create_alias": {"collection_name": old, "alias_name": "book_chunks--redux"}}]
