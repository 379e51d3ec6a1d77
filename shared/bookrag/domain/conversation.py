"""A conversation's shapes: the turns a follow-up is resolved against, a stored session, the port a
session store implements, and a reader's selection."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Turn:
    """One earlier exchange. `standalone` is the question as it was searched (a session keeps it, so a
    third turn resolves against the second turn's resolved subject); a client's history has none."""

    question: str
    answer: str = ""
    standalone: str = ""

    @property
    def searched(self) -> str:
        return self.standalone or self.question


@dataclass(frozen=True, slots=True)
class Session:
    """A server-side conversation. `owner` is the API key id that created it ("anonymous" without auth)."""

    session_id: str
    owner: str
    turns: tuple[Turn, ...] = ()
    expires_at: int = 0


@dataclass(frozen=True, slots=True)
class Selection:
    """Text the reader highlighted, and the page it came from when the client knows it."""

    text: str
    source_url: str | None = None
    source_file: str | None = None


@dataclass(frozen=True, slots=True)
class Conversation:
    """What a request brings besides its question: earlier turns and a selection (both optional)."""

    history: tuple[Turn, ...] = ()
    selection: Selection | None = None


class SessionStore(Protocol):
    """Sessions by id. Implementations are thread-safe and never return an expired session."""

    def get(self, session_id: str, now: int) -> Session | None:
        """The session, or None when unknown or expired. Raises `SessionStoreError` when unreadable."""
        ...

    def put(self, session: Session) -> None:
        """Create or replace the session. Raises `SessionStoreError` when the write fails."""
        ...

    def delete(self, session_id: str) -> None:
        ...
