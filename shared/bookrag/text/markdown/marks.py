"""Private-use characters the Markdown reader marks its work with, and their removal from the source.

Each stands for something a later step must see and a reader must not: where a tag was removed, where
an inline code span was set aside, where an included partial starts and ends. The source's own copies are
removed first (`remove_private_marks`), so a book cannot forge one.
"""

from __future__ import annotations

__all__ = [
    "CODE_CLOSE",
    "CODE_OPEN",
    "GAP",
    "HEADING_TAG",
    "JOIN",
    "PARTIAL_END",
    "PARTIAL_START",
    "normalise_source",
    "remove_private_marks",
]

CODE_OPEN = "\ue000"  # an inline code span set aside while tags and comments are removed
CODE_CLOSE = "\ue001"
GAP = "\ue002"  # a removed block tag (div, p, TabItem...): becomes a space
JOIN = "\ue003"  # a removed phrasing tag (em, a...): becomes nothing
PARTIAL_START = "\ue004"  # a line of its own: an included partial starts (its own heading ids)
PARTIAL_END = "\ue005"
# A tag removed from a heading: no text, but the whitespace before it still counts for the heading's id,
# as in Docusaurus ("Props <Badge/>" -> "props-"); the id's character filter drops the mark itself.
HEADING_TAG = "\ue006"

_ALL = str.maketrans("", "", CODE_OPEN + CODE_CLOSE + GAP + JOIN + PARTIAL_START + PARTIAL_END + HEADING_TAG)


def remove_private_marks(text: str) -> str:
    """Drop every mark above from `text`."""
    return text.translate(_ALL)


def normalise_source(text: str) -> str:
    """A Markdown file's text as the reader works with it: no BOM, "\n" line ends, none of our marks."""
    return remove_private_marks(text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n"))
