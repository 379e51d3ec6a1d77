"""Docusaurus Markdown/MDX as text: front matter, routes, MDX cleanup, headings, blocks, inline.

One module per concern; this package exports what a reader of a whole document needs. The finer,
block-level rules (fences, list items, table rows) are imported from their own modules by the
chunker, which is the only code that needs them.
"""

from __future__ import annotations

from bookrag.text.markdown.front_matter import non_blank, split_front_matter, to_float
from bookrag.text.markdown.headings import first_h1, heading_anchor
from bookrag.text.markdown.inline import clean_inline, plain_inline
from bookrag.text.markdown.marks import normalise_source, remove_private_marks
from bookrag.text.markdown.mdx import clean_body
from bookrag.text.markdown.partials import PartialReader, expand_partials
from bookrag.text.markdown.routes import compute_route, pretty_name

__all__ = [
    "PartialReader",
    "clean_body",
    "clean_inline",
    "compute_route",
    "expand_partials",
    "first_h1",
    "heading_anchor",
    "non_blank",
    "normalise_source",
    "plain_inline",
    "pretty_name",
    "remove_private_marks",
    "split_front_matter",
    "to_float",
]
