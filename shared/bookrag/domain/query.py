"""Queries: how every interface normalises one, and the limits each interface puts on it.

The contracts differ (perform_retrieval allows 500 characters, the others 1,000; the Python API
allows top_k up to 100, the HTTP interfaces 10) and each interface keeps its own: `POLICIES` is the
one place they are written.

The length rule, everywhere (HTTP, Python API, agent): a query has 1 to `max_query_chars` characters
(code points) as sent, which is what JSON Schema's minLength/maxLength count, and at least one visible
character (`VISIBLE_CHARACTER`, the OpenAPI `pattern`); it is normalised after those checks. So NFC
expanding a character, or white space folding, never moves a query across a limit.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

# C0/C1 controls except tab/newline, plus zero-width and bidi overrides that hide text from readers.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
_SPACE = re.compile(r"\s+")
# One character that survives normalisation: not a control, an invisible format character or white
# space (Python's str.isspace set). A JSON Schema `pattern` (ECMA-262, unanchored), so a query
# matches it exactly when `normalize_query` leaves something; tests check that over every code point.
VISIBLE_CHARACTER = r"[^\x00-\x20\x7f-\xa0\u1680\u2000-\u200f\u2028-\u202f\u205f-\u2064\u3000\ufeff]"
_VISIBLE = re.compile(VISIBLE_CHARACTER)

Interface = Literal["rest", "tool_content", "perform_retrieval", "book_context", "agent", "python"]


@dataclass(frozen=True, slots=True)
class QueryPolicy:
    """The limits of one interface: query length (as sent) and result count."""

    max_query_chars: int = 1000  # as sent, before normalisation
    min_top_k: int = 1
    max_top_k: int = 10
    default_top_k: int = 5


POLICIES: dict[Interface, QueryPolicy] = {
    "rest": QueryPolicy(),
    "tool_content": QueryPolicy(),
    "perform_retrieval": QueryPolicy(max_query_chars=500),
    "book_context": QueryPolicy(),
    "agent": QueryPolicy(),
    "python": QueryPolicy(max_top_k=100),
}


def normalize_query(text: str) -> str:
    """NFC, control and invisible characters removed, runs of white space folded, trimmed."""
    text = unicodedata.normalize("NFC", text)
    text = _CONTROL.sub("", text)
    return _SPACE.sub(" ", text).strip()


def has_visible_character(text: str) -> bool:
    """True when `normalize_query(text)` is not empty (the OpenAPI `pattern` of every query)."""
    return _VISIBLE.search(text) is not None


@dataclass(frozen=True, slots=True)
class ConversationLimits:
    """Bounds of a conversation (`/api/answer`, `run_agent`, `bookrag ask`) and of a stored session.

    A client's `history` and a session keep at most `max_turns` turns, the most recent; a session is
    also kept under `max_session_bytes` (its turns as JSON) by dropping its oldest turns, and expires
    `session_ttl_s` after its last turn. A selection is at most `max_selection_chars` after
    normalisation. Lengths are counted after `normalize_query`, as for queries.
    """

    max_turns: int = 10
    max_turn_question_chars: int = 1000
    max_turn_answer_chars: int = 4000
    max_selection_chars: int = 2000
    max_source_chars: int = 500
    session_id_prefix: str = "ses_"
    session_id_chars: int = 36  # the prefix and 32 URL-safe characters (192 random bits)
    max_session_bytes: int = 48_000
    session_ttl_s: int = 3600


CONVERSATION = ConversationLimits()
# What a session id looks like; anything else is refused before a store is asked.
SESSION_ID_PATTERN = r"^ses_[A-Za-z0-9_-]{32}$"
