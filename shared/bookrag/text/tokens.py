"""The one cheap token estimate, shared by the chunker's default budget and the embedder's fallback.

It needs no tokenizer, so chunk sizes can be planned (and tested) without loading a model, and a
remote embedder that tokenises on its own side can still be given a budget.
"""

from __future__ import annotations

import re

__all__ = ["approx_token_count"]

_TOKEN_RE = re.compile(r"\w+|[^\w\s]")


def approx_token_count(text: str) -> int:
    """Fast token estimate: words plus punctuation marks (close to a wordpiece count for prose)."""
    return len(_TOKEN_RE.findall(text))
