"""The demo page (`GET /demo`): one chapter of the indexed book, rendered for a reader, with the widget.

The chapter is rebuilt from the store (`services.book.chapter`), so the page shows whatever book was
ingested, on a laptop or on Lambda. The Markdown renderer knows only what a chapter's chunks hold
(headings, paragraphs, lists, tables, fenced code, inline code, emphasis, links); every piece of text
is HTML-escaped, so a book cannot inject markup into the page.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bookrag.services.book import DocumentEntry, Section

_FENCE = re.compile(r"^(```+|~~~+)(.*)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_ITEM = re.compile(r"^\s*(?:[-*+]|(\d+)[.)])\s+(.*)$")
_INLINE = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|\[([^\]]+)\]\(([^)\s]+)\)")


def inline(text: str) -> str:
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        out.append(html.escape(text[pos:m.start()]))
        code, strong, em, label, href = m.groups()
        if code is not None:
            out.append(f"<code>{html.escape(code)}</code>")
        elif strong is not None:
            out.append(f"<strong>{html.escape(strong)}</strong>")
        elif em is not None:
            out.append(f"<em>{html.escape(em)}</em>")
        else:
            safe = href.startswith(("http://", "https://", "#", "/"))
            out.append(f'<a href="{html.escape(href)}">{html.escape(label)}</a>' if safe else html.escape(label))
        pos = m.end()
    out.append(html.escape(text[pos:]))
    return "".join(out)


def markdown(text: str) -> str:
    """HTML for the Markdown of a chapter's section. A fence reopened right after it closed, with the
    same info line, continues the same block (the chunker splits long code blocks that way)."""
    lines = text.split("\n")
    out: list[str] = []
    para: list[str] = []
    items: list[str] = []
    ordered = False
    i = 0

    def flush() -> None:
        nonlocal items
        if para:
            out.append(f"<p>{inline(' '.join(s.strip() for s in para))}</p>")
            para.clear()
        if items:
            tag = "ol" if ordered else "ul"
            out.append(f"<{tag}>" + "".join(f"<li>{inline(x)}</li>" for x in items) + f"</{tag}>")
            items = []

    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line.strip())
        if fence:
            flush()
            info, code = fence.group(2).strip(), []
            i += 1
            while i < len(lines):
                if lines[i].strip() == fence.group(1):
                    nxt = i + 1
                    while nxt < len(lines) and not lines[nxt].strip():
                        nxt += 1
                    if nxt < len(lines) and lines[nxt].strip() == line.strip():
                        i = nxt + 1
                        continue
                    break
                code.append(lines[i])
                i += 1
            lang = info.split()[0] if info else ""
            cls = f' class="language-{html.escape(lang)}"' if lang else ""
            out.append(f"<pre><code{cls}>{html.escape(chr(10).join(code))}</code></pre>")
        elif heading := _HEADING.match(line):
            flush()
            level = min(6, len(heading.group(1)) + 1)  # the page's own h1 and h2s come first
            out.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
        elif line.lstrip().startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
                if not all(re.fullmatch(r":?-{2,}:?", c) for c in cells):
                    rows.append("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in cells) + "</tr>")
                i += 1
            out.append("<table>" + "".join(rows) + "</table>")
            continue
        elif item := _ITEM.match(line):
            if para:
                flush()
            ordered = item.group(1) is not None
            items.append(item.group(2))
        elif not line.strip():
            flush()
        elif items and line.startswith(" "):
            items[-1] += " " + line.strip()
        else:
            if items:
                flush()
            para.append(line)
        i += 1
    flush()
    return "\n".join(out)


def page(entry: DocumentEntry, sections: list[Section], others: list[DocumentEntry], book: str) -> str:
    """The whole demo page. The widget is embedded exactly as a book owner would embed it."""
    body = []
    for section in sections:
        anchor = section.url.split("#", 1)[1] if "#" in section.url else ""
        if section.heading and section.heading != entry.title:
            body.append(f'<h2 id="{html.escape(anchor)}">{html.escape(section.heading)}</h2>')
        body.append(markdown(section.markdown))
    nav = "".join(f'<li><a href="/demo?page={html.escape(e.route)}">{html.escape(e.title)}</a></li>' for e in others)
    return _TEMPLATE.format(title=html.escape(entry.title), book=html.escape(book), body="\n".join(body), nav=nav,
                            page_url=html.escape(entry.url))


_TEMPLATE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{title} · {book} (bookrag demo)</title>
<style>
:root {{ color-scheme: light dark; }}
body {{ margin: 0; font: 17px/1.65 system-ui, sans-serif; background: #fff; color: #1c1e21; }}
main {{ max-width: 760px; margin: 0 auto; padding: 24px 20px 120px; }}
header.demo {{ padding: 10px 20px; border-bottom: 1px solid #ddd; font-size: 14px; }}
pre {{ overflow-x: auto; padding: 12px; border-radius: 6px; background: #f5f6f7; font-size: 14px; }}
code {{ font-size: .9em; }}
table {{ border-collapse: collapse; }} td {{ border: 1px solid #ccc; padding: 4px 8px; }}
nav.chapters {{ margin-top: 48px; font-size: 14px; }}
@media (prefers-color-scheme: dark) {{
  body {{ background: #1b1b1d; color: #e3e3e3; }} pre {{ background: #2b2b2e; }} a {{ color: #6ea8fe; }}
  header.demo {{ border-color: #444; }}
}}
</style>
</head>
<body>
<header class="demo">{book} · bookrag demo: select a sentence and press “Ask about this”,
or open “Ask the book”.</header>
<main>
<article id="chapter">
<h1>{title}</h1>
{body}
</article>
<nav class="chapters" aria-label="Other chapters"><h2>Other chapters</h2><ul>{nav}</ul></nav>
</main>
<script src="/widget/v1/bookrag.js" data-book="{book}" data-page-url="{page_url}" defer></script>
</body>
</html>
"""
