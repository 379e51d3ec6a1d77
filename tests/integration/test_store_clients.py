"""The embedded store's folder lock: one client per folder, whatever the settings that name it."""

from __future__ import annotations

from typing import Any

from bookrag.adapters.qdrant.store import VectorStore, get_qdrant_client


def test_settings_naming_the_same_folder_share_its_client(make_settings: Any) -> None:
    # GIVEN two configurations that differ, but store the book in the same folder
    first = make_settings(cohere_timeout_s=1.0)
    second = make_settings(cohere_timeout_s=2.0)

    # WHEN both open the store
    # THEN the second does not fail on the first one's lock: they share its client
    assert get_qdrant_client(first) is get_qdrant_client(second)


def test_the_folder_stays_usable_after_its_settings_leave_the_cache(make_settings: Any) -> None:
    # GIVEN a store opened once, then enough other configurations to evict it from the client cache
    settings = make_settings()
    VectorStore(settings).exists()
    for port in range(40000, 40000 + 2 * (get_qdrant_client.cache_info().maxsize or 8)):
        get_qdrant_client(make_settings(qdrant_url=f"http://127.0.0.1:{port}"))

    # WHEN the same folder is opened again
    # THEN it works (no "already accessed by another instance")
    assert VectorStore(settings).exists() is False
