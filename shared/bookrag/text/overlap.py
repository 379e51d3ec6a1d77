"""Consecutive chunks of a file share text (the packer carries prose over): where a chunk's own text
starts, so that a file's chunks read back as the file did, each sentence once."""

from __future__ import annotations

MIN_OVERLAP = 20  # shorter shared text is a coincidence, not the packer's overlap


def carried_over(previous: str, text: str) -> int:
    """Length of the longest start of `text` that ends `previous` (the packer's carried-over prose)."""
    if min(len(previous), len(text)) < MIN_OVERLAP:
        return 0
    # Where `text`'s first words occur in `previous` (found at C speed), nearest its start first: the longest
    # overlap is the earliest place from which `previous` runs to its end as `text` begins.
    head = text[:MIN_OVERLAP]
    at = previous.find(head, max(0, len(previous) - len(text)))
    while at != -1:
        if text.startswith(previous[at:]):
            return len(previous) - at
        at = previous.find(head, at + 1)
    return 0


def joined(texts: list[str]) -> str:
    """Consecutive chunks' texts as one text, each carried-over start once."""
    out: list[str] = []
    previous = ""
    for text in texts:
        out.append(text[carried_over(previous, text):])
        previous = text
    return "\n\n".join(part.strip() for part in out if part.strip())
