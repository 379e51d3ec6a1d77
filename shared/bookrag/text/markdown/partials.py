"""Partials: a page that imports a local Markdown/MDX file and renders it as a component (`<Setup />`)
shows that file's content in place, so the text we index holds it there too.

Docusaurus never serves a `_`-prefixed file as a page, so its text is only ever read where a page includes
it: indexed once per including page, cited to that page. The partial's front matter is dropped (the site
ignores it too), its own imports and partials are expanded the same way, and its content is set between
`PARTIAL_START` and `PARTIAL_END` lines: Docusaurus compiles each file apart, so a partial's headings get
ids from a slugger of their own, which the chunker follows. A missing, unreadable, escaping or cyclic
include is a warning naming the file, and the page is indexed without it.

Paths are docs-relative. A site keeps partials outside its docs too (`@site/src/partials/_x.md`, or
`../../src/...` from a page): with the site folder known (`site`, docs-relative: `..` for `site/docs`),
an import may reach anywhere inside the site, as the site's bundler resolves it, and never beyond it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from bookrag.errors import DocumentError
from bookrag.text.markdown.blocks import closes_fence, indices_outside_fences, open_fence
from bookrag.text.markdown.esm import SITE_ALIAS, local_imports, split_esm
from bookrag.text.markdown.front_matter import split_front_matter
from bookrag.text.markdown.marks import PARTIAL_END, PARTIAL_START, normalise_source

__all__ = ["Expansion", "PartialReader", "expand_partials"]

# A docs-relative path -> that file's text, None when there is no such file; DocumentError when it cannot
# be read safely (a symlink out of the docs, too large, binary).
PartialReader = Callable[[str], "str | None"]

_MAX_DEPTH = 8  # partials inside partials; deeper ones are left out with a warning
# A component rendered without children, `<Setup />` or `<Setup></Setup>`; the page's imports say which
# of them are partials.
_COMPONENT = re.compile(r"<([A-Za-z_$][\w$]*)(?:\s[^<>]*?)?/\s*>|<([A-Za-z_$][\w$]*)(?:\s[^<>]*)?>\s*</\2\s*>")


@dataclass(frozen=True, slots=True)
class Expansion:
    text: str
    included: tuple[str, ...] = ()  # every partial it tried to read (docs-relative), in first-read order
    warnings: tuple[str, ...] = ()


@dataclass(slots=True)
class _State:
    read: PartialReader
    budget: int  # characters of partial text this page may still take in
    site: str | None  # the site folder, docs-relative (`..`), when known
    included: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def expand_partials(body: str, rel_path: str, read: PartialReader, *, max_chars: int,
                    site: str | None = None) -> Expansion:
    """`body` (front matter already removed) with each rendered local import replaced by its content.

    `max_chars` bounds the text partials may add to one page (a partial included by every partial of a
    deep tree must not multiply the page without end); `site` is the site folder relative to the docs
    (`..`), None for a docs folder alone: then `@site/` imports and paths out of the docs are warnings.
    """
    state = _State(read, max_chars, site)
    text = _expand(body, rel_path, (rel_path,), state)
    return Expansion(text, tuple(state.included), tuple(state.warnings))


def _close_open_fence(text: str) -> str:
    """A partial whose last fence never closes would swallow the page after it: close it."""
    fence = None
    for line in text.split("\n"):
        if fence is None:
            fence = open_fence(line)
        elif closes_fence(line, fence):
            fence = None
    return text if fence is None else f"{text}\n{fence.char * fence.length}"


def _expand(body: str, rel_path: str, chain: tuple[str, ...], state: _State) -> str:
    if "import" not in body:  # most pages import nothing: no need to walk their fences and ESM
        return body
    lines = body.split("\n")
    prose = list(indices_outside_fences(lines))
    _, blocks = split_esm([lines[i] for i in prose])
    imports = local_imports(blocks)
    if not imports:
        return body

    def render(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        return _rendered(name, imports, rel_path, chain, state) if name in imports else m.group(0)

    for i in prose:
        if "<" in lines[i]:
            lines[i] = _COMPONENT.sub(render, lines[i])
    return "\n".join(lines)


def _outside(target: str, site: str | None) -> bool:
    """Whether a normalised docs-relative path climbs out of the docs (or, when known, the site)."""
    ups = 0
    for part in target.split("/"):
        if part != "..":
            break
        ups += 1
    allowed = 0 if site is None else site.split("/").count("..")
    return ups > allowed or posixpath.isabs(target)


def _rendered(name: str, imports: dict[str, str], rel_path: str, chain: tuple[str, ...], state: _State) -> str:
    spec = imports[name]
    if spec.startswith(SITE_ALIAS):
        if state.site is None:
            state.warnings.append(f"{rel_path}: imports {spec}, but no site folder is known (ingest the site "
                                  "folder, or a docs folder beside its docusaurus.config.js); not included")
            return ""
        target = posixpath.normpath(posixpath.join(state.site, spec[len(SITE_ALIAS):]))
    else:
        target = posixpath.normpath(posixpath.join(posixpath.dirname(rel_path), spec))
    if _outside(target, state.site):
        where = "the docs folder" if state.site is None else "the site folder"
        state.warnings.append(f"{rel_path}: imports {spec}, which is outside {where}; not included")
        return ""
    if target in chain:
        state.warnings.append(f"{rel_path}: imports {spec}, which includes {rel_path} back (a cycle); "
                              "not included again")
        return ""
    if len(chain) > _MAX_DEPTH:
        state.warnings.append(f"{rel_path}: imports {spec} more than {_MAX_DEPTH} partials deep; not included")
        return ""
    if target not in state.included:
        state.included.append(target)  # even a missing one: the page changes when it appears
    try:
        raw = state.read(target)
    except DocumentError as exc:
        state.warnings.append(f"{rel_path}: imports {spec}, which cannot be read ({exc.message}); not included")
        return ""
    if raw is None:
        state.warnings.append(f"{rel_path}: imports {spec}, which does not exist; not included")
        return ""
    text = normalise_source(raw)
    _, content = split_front_matter(text)
    if len(content) > state.budget:
        state.warnings.append(f"{rel_path}: including {spec} would make the page too large; not included")
        return ""
    state.budget -= len(content)
    content = _close_open_fence(_expand(content, target, (*chain, target), state))
    return f"\n\n{PARTIAL_START}\n\n{content.strip(chr(10))}\n\n{PARTIAL_END}\n\n"
