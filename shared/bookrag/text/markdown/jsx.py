"""What a JSX or HTML tag in MDX prose leaves for the reader: its text, a label, or nothing.

Most tags only wrap text (a `<div>`, an `<em>`): they go, their content stays. A few carry text of their
own that the rendered page shows: a `<TabItem>`'s label heads its panel ("npm:", "Yarn:"), an
`<Admonition>`'s title heads its box, and a custom component is usually given its text as string props
(`<PropRow name="gap" description="Space between children" />`). Those become plain text; any other
prop (a class, a value, an expression in braces) is machinery and is dropped.
"""

from __future__ import annotations

import re

__all__ = ["INLINE_TAGS", "tag_text"]

# Phrasing tags vanish without a trace; any other tag leaves a space so words do not run together.
INLINE_TAGS = frozenset(
    {"a", "abbr", "b", "bdi", "bdo", "cite", "code", "del", "dfn", "em", "i", "ins", "kbd", "mark", "q"}
    | {"s", "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var"}
)
# String props a component shows as text: a name or title first, then what it says.
_LABEL_PROPS = ("title", "label", "name", "heading")
_TEXT_PROPS = ("description", "text", "caption", "summary", "content", "code")
# Theme components whose props are settings, not text (their children are the text).
_SETTINGS_ONLY = frozenset({"tabs", "details", "summary", "head", "layout", "link", "redirect"})
_ATTR = re.compile(r"""([A-Za-z_][\w:-]*)\s*=\s*(?:"([^"\n]*)"|'([^'\n]*)')""")


def _props(tag: str) -> dict[str, str]:
    return {m.group(1): " ".join((m.group(2) if m.group(2) is not None else m.group(3) or "").split())
            for m in _ATTR.finditer(tag)}


def tag_text(tag: str, name: str, closing: bool) -> str:
    """The text an opening or self-closing tag `tag` (named `name`) shows; "" for none."""
    if closing or not name or not name[0].isupper() or name.lower() in _SETTINGS_ONLY:
        return ""
    props = _props(tag)
    lowered = name.lower()
    if lowered == "tabitem":
        label = props.get("label") or props.get("value") or ""
        return f"{label}:" if label else ""
    if lowered == "admonition":
        kind = props.get("type", "note")
        title = props.get("title", "")
        return f"{kind[:1].upper()}{kind[1:].lower()}: {title}".rstrip()
    labels = [props[p] for p in _LABEL_PROPS if props.get(p)]
    texts = [props[p] for p in _TEXT_PROPS if props.get(p)]
    head = " ".join(labels)
    body = " ".join(texts)
    if head and body:
        return f"{head}: {body}"
    if head and not tag.endswith("/>"):
        return f"{head}:"  # it heads the children that follow
    return head or body
