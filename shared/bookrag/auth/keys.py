"""API keys: their format, how they are minted and hashed (the record that describes one, and the ports
behind which their state sits, are the domain's: `bookrag.domain.keys`).

Two kinds. A secret key (`brk_<key id>_<secret>`) is for servers, agents and scripts: every route, never
from a web page. A publishable key (`brk_pub_<key id>_<secret>`) is meant to sit in a public page (the
widget's `data-key`): it answers, retrieves and takes votes only (`PUBLISHABLE_PATHS`), only for requests whose
`Origin` is one of its sites, with a low limit per reader (`bookrag.auth.guard`). The record's `kind`
decides, not the prefix (the prefix is for people; the hash covers it, so it cannot be edited).

A key reads `brk_[pub_]<key id>_<secret>`. The id (12 hex digits) finds the key's record; the secret (256 random
bits) is never stored: the record holds sha256 of the whole key, compared with `hmac.compare_digest`. A
fast unsalted hash is right for a random 256-bit secret (there is nothing to brute-force offline), where a
password KDF would add tens of milliseconds to every request."""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from collections.abc import Sequence

from bookrag.config.origins import parse_origin
from bookrag.domain.books import valid_book_id
from bookrag.domain.keys import PUBLISHABLE, SECRET, KeyRecord

KEY_PREFIX = "brk"
# What a reader's page needs: answers (whole or streamed) and retrieval. Nothing that lists, writes or
# reaches the MCP tools.
PUBLISHABLE_PATHS = frozenset({"/api/answer", "/api/answer/stream", "/api/retrieve", "/api/feedback",
                               "/api/pages/suggestions"})


MAX_KEY_CHARS = 128


_KEY = re.compile(r"brk_(?:pub_)?([0-9a-f]{12})_([A-Za-z0-9_-]{43})")


def hash_key(plaintext: str) -> str:
    """sha256 hex of the whole key (prefix and id included, so a secret cannot be moved to another id)."""
    return hashlib.sha256(plaintext.encode("utf-8", "surrogatepass")).hexdigest()


def key_id_of(plaintext: str) -> str | None:
    """The key id of a well-formed key, else None. Never raises, whatever the caller sent."""
    if len(plaintext) > MAX_KEY_CHARS:
        return None
    match = _KEY.fullmatch(plaintext)
    return match.group(1) if match else None


def mint_key(owner: str = "", *, rate_limit_per_minute: int | None = None,
             origins: Sequence[str] | None = None, books: Sequence[str] = ()) -> tuple[str, KeyRecord]:
    """A new key: (plaintext to hand to its owner once, record to store). The plaintext is never kept.

    With `origins`, a publishable key bound to those sites; raises `ValueError` for an origin that is
    not `scheme://host[:port]`. `books`: the books it reads (none: the default book); a publishable key reads
    exactly one (a web page shows one book), and a malformed book id is a `ValueError`."""
    key_id = secrets.token_hex(6)
    kind = SECRET if origins is None else PUBLISHABLE
    if kind == PUBLISHABLE and not origins:
        raise ValueError("a publishable key needs at least one origin")
    sites = tuple(dict.fromkeys(parse_origin(o) for o in origins or ()))
    held = tuple(dict.fromkeys(books))
    if bad := [b for b in held if not valid_book_id(b)]:
        raise ValueError(f"not a book id: {bad[0]!r} (lower case letters, digits and single dashes)")
    if kind == PUBLISHABLE and len(held) > 1:
        raise ValueError("a publishable key reads exactly one book")
    prefix = f"{KEY_PREFIX}_pub" if kind == PUBLISHABLE else KEY_PREFIX
    plaintext = f"{prefix}_{key_id}_{secrets.token_urlsafe(32)}"
    record = KeyRecord(key_id=key_id, key_hash=hash_key(plaintext), owner=owner,
                       rate_limit_per_minute=rate_limit_per_minute, created_at=int(time.time()),
                       kind=kind, origins=sites, books=held)
    return plaintext, record
