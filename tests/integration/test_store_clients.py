"""The embedded store's folder: one handle per folder and process, whatever the settings that name it."""

from __future__ import annotations

from typing import Any

from bookrag.adapters.store.edge.store import EdgeStore
from bookrag.services import container as containers
from bookrag.services.container import container_for


def test_settings_naming_the_same_folder_share_its_handle(make_settings: Any) -> None:
    # GIVEN two configurations that differ, but store the book in the same folder
    first = make_settings(cohere_timeout_s=1.0)
    second = make_settings(cohere_timeout_s=2.0)
    EdgeStore(first).ensure_collection("local/all-MiniLM-L6-v2", 384)

    # WHEN both open the store
    # THEN the second does not fail on the first one's lock: they share its handle
    assert container_for(first).store.client is container_for(second).store.client


def test_the_folder_stays_usable_after_its_settings_leave_the_cache(make_settings: Any) -> None:
    # GIVEN a store opened once, then enough other configurations to evict its container
    settings = make_settings()
    first = container_for(settings)
    assert first.store.exists() is False
    first.store.ensure_collection("local/all-MiniLM-L6-v2", 384)
    for port in range(40000, 40000 + 2 * containers._MAX_CONTAINERS):
        container_for(make_settings(qdrant_url=f"http://127.0.0.1:{port}")).store  # noqa: B018

    # WHEN the same folder is opened again, by a new container
    # THEN it works (no lock error): the new store finds the process's open handle
    assert container_for(settings) is not first
    assert EdgeStore(settings).exists() is True
    assert EdgeStore(settings).count() == 0
