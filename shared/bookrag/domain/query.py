"""Query normalisation, shared by every interface before its own contract's limits are checked."""

from __future__ import annotations

import re
import unicodedata

# C0/C1 controls except tab/newline, plus zero-width and bidi overrides that hide text from readers.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
_SPACE = re.compile(r"\s+")


def normalize_query(text: str) -> str:
    """NFC, control and invisible characters removed, runs of white space folded, trimmed."""
    text = unicodedata.normalize("NFC", text)
    text = _CONTROL.sub("", text)
    return _SPACE.sub(" ", text).strip()
