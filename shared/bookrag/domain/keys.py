"""What is stored about an API key (`KeyRecord`), the caller it admits (`Principal`), and the two ports
behind which that state sits (`KeyStore`, `Counter`): in memory (`bookrag.auth.memory`) or DynamoDB
(`bookrag.adapters.dynamodb`). Their format, minting and hashing are in `bookrag.auth.keys`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from bookrag.domain.books import DEFAULT_BOOK

PUBLISHABLE = "publishable"
SECRET = "secret"
ANONYMOUS = "anonymous"  # the caller when authentication is off: owns its sessions, signs its log records


@dataclass(frozen=True)
class KeyRecord:
    """What is stored about a key: never the key itself."""

    key_id: str
    key_hash: str
    owner: str = ""
    enabled: bool = True
    rate_limit_per_minute: int | None = None
    created_at: int = 0
    kind: str = SECRET  # SECRET or PUBLISHABLE; anything else verifies nothing
    origins: tuple[str, ...] = ()  # a publishable key's sites (`Origin` values)
    # The books the key reads (`domain.books`); none: the default book, as every key before books existed.
    books: tuple[str, ...] = ()

    def setting_entry(self) -> str:
        """This key's entry for the `API_KEY_HASHES` setting (local `bookrag serve`)."""
        sites = "@" + "|".join(self.origins) if self.kind == PUBLISHABLE else ""
        books = "#" + "|".join(self.books) if self.books else ""
        return f"{self.key_id}:{self.key_hash}{sites}{books}"


@dataclass(frozen=True)
class Principal:
    """An authenticated caller."""

    key_id: str
    owner: str
    rate_limit_per_minute: int
    kind: str = SECRET
    books: tuple[str, ...] = (DEFAULT_BOOK,)  # the books it may read, the first read when a request names none


class KeyStore(Protocol):
    def get(self, key_id: str) -> KeyRecord | None:
        """The record of `key_id`, or None. Raises `AuthUnavailableError` when the store cannot be read."""
        ...


class Counter(Protocol):
    def hit(self, bucket: str, expires_at: int) -> int:
        """Atomically add one to `bucket` and return its new value. Raises `BookRAGError` on failure."""
        ...

    def peek(self, bucket: str) -> int:
        """The current value of `bucket` (0 when absent). Raises `BookRAGError` on failure."""
        ...
