"""Consecutive chunks of a file share text (the packer carries prose over): where a chunk's own text
starts, so that a file's chunks read back as the file did, each sentence once."""

from __future__ import annotations

MIN_OVERLAP = 20  # shorter shared text is a coincidence, not the packer's overlap


def carried_over(previous: str, text: str) -> int:
    """Length of the longest start of `text` that ends `previous` (the packer's carried-over prose)."""
    for k in range(min(len(previous), len(text)), MIN_OVERLAP - 1, -1):
        if previous.endswith(text[:k]):
            return k
    return 0


def joined(texts: list[str]) -> str:
    """Consecutive chunks' texts as one text, each carried-over start once."""
    out: list[str] = []
    previous = ""
    for text in texts:
        out.append(text[carried_over(previous, text):])
        previous = text
    return "\n\n".join(part.strip() for part in out if part.strip())
