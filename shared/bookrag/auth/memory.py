"""In-memory key store and rate counter, for `bookrag serve` (one process, so one count)."""

from __future__ import annotations

import threading

from bookrag.domain.keys import PUBLISHABLE, SECRET, KeyRecord


class InMemoryKeyStore:
    """Keys from the `API_KEY_HASHES` setting, for `bookrag serve` and tests."""

    def __init__(self, records: list[KeyRecord]) -> None:
        self._records = {r.key_id: r for r in records}

    @classmethod
    def from_setting(cls, entries: str) -> InMemoryKeyStore:
        """`<key id>:<hash>` entries (secret keys) and `<key id>:<hash>@<origin>|...` (publishable), each
        with its books after a `#` (`#bees|redux`; none: the default book)."""
        records = []
        for entry in filter(None, entries.split(",")):
            key_id, rest = entry.split(":", 1)
            rest, _, books = rest.partition("#")
            key_hash, _, sites = rest.partition("@")
            records.append(KeyRecord(key_id=key_id, key_hash=key_hash, kind=PUBLISHABLE if sites else SECRET,
                                     origins=tuple(sites.split("|")) if sites else (),
                                     books=tuple(books.split("|")) if books else ()))
        return cls(records)

    def get(self, key_id: str) -> KeyRecord | None:
        return self._records.get(key_id)



class InMemoryCounter:
    """Counters of one process (thread-safe); buckets of past windows are dropped as the map grows."""

    def __init__(self, max_buckets: int = 10_000) -> None:
        self._counts: dict[str, tuple[int, int]] = {}
        self._max_buckets = max_buckets
        self._lock = threading.Lock()

    def hit(self, bucket: str, expires_at: int) -> int:
        with self._lock:
            if len(self._counts) >= self._max_buckets:
                self._counts = {k: v for k, v in self._counts.items() if v[1] >= expires_at}
            count = self._counts.get(bucket, (0, expires_at))[0] + 1
            self._counts[bucket] = (count, expires_at)
            return count

    def peek(self, bucket: str) -> int:
        with self._lock:
            return self._counts.get(bucket, (0, 0))[0]
