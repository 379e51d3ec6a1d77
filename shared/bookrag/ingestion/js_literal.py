"""A tolerant reader of the literal values in a `docusaurus.config.js`, without running it.

Ingest never executes the site's JavaScript (in production it would run someone's code with the
ingest's credentials). The configuration is read as data instead: object and array literals, strings
(template strings without `${}`), numbers, `true`/`false`/`null`. Anything computed (a call, an
environment variable, an imported constant, a spread, a template with `${}`) reads as `UNKNOWN`, and the
caller keeps Docusaurus's default for it and says so. Comments are skipped. The scan is linear in the
file's size and never recurses deeper than `_MAX_DEPTH`.

Limits, stated: a value held in a variable (`const locales = ['en', 'ur']` then `locales,`) is read when
the variable is a top-level `const`/`let`/`var` assigned a literal; a configuration built by a function
(`module.exports = async () => ({...})`) is read from the object it returns, when that is a literal.
"""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = ["UNKNOWN", "read_config_object"]


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Final = _Unknown()  # a value only running the file could tell
_MAX_DEPTH = 64

_TOKEN = re.compile(
    r"""\s+|//[^\n]*|/\*.*?\*/"""  # skipped
    r"""|(?P<str>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`)"""
    r"""|(?P<num>-?\d+(?:\.\d+)?)"""
    r"""|(?P<name>[A-Za-z_$][\w$]*)"""
    r"""|(?P<punct>\.\.\.|=>|[{}\[\](),:;=?.])"""
    r"""|(?P<other>.)""",
    re.S,
)
_ESCAPE = re.compile(r"\\(.)", re.S)


def _tokens(source: str) -> list[tuple[str, str]]:
    out = []
    for m in _TOKEN.finditer(source):
        kind = m.lastgroup
        if kind is not None:
            out.append((kind, m.group(kind)))
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], variables: dict[str, Any]) -> None:
        self.tokens = tokens
        self.i = 0
        self.variables = variables

    def peek(self, offset: int = 0) -> tuple[str, str]:
        j = self.i + offset
        return self.tokens[j] if j < len(self.tokens) else ("end", "")

    def value(self, depth: int = 0) -> Any:
        kind, text = self.peek()
        if depth > _MAX_DEPTH:
            self.skip_expression()
            return UNKNOWN
        if text == "{" and kind == "punct":
            return self.object(depth)
        if text == "[" and kind == "punct":
            return self.array(depth)
        if text == "(" and kind == "punct" and self.peek(1)[1] == "{":  # `() => ({...})`'s body
            self.i += 1
            found = self.object(depth)
            if self.peek()[1] == ")":
                self.i += 1
            return found
        start = self.i
        self.skip_expression()
        if self.i - start == 1:
            if kind == "str" and not (text.startswith("`") and "${" in text):
                return _ESCAPE.sub(r"\1", text[1:-1])
            if kind == "num":
                return float(text) if "." in text else int(text)
            if kind == "name" and text in ("true", "false", "null"):
                return {"true": True, "false": False, "null": None}[text]
            if kind == "name":
                return self.variables.get(text, UNKNOWN)
        return UNKNOWN

    def skip_expression(self) -> None:
        """Past one expression: up to a `,`, `;` or closing bracket at this depth."""
        depth = 0
        while True:
            kind, text = self.peek()
            if kind == "end":
                return
            if kind == "punct" and text in "([{":
                depth += 1
            elif kind == "punct" and text in ")]}":
                if depth == 0:
                    return
                depth -= 1
            elif kind == "punct" and text in ",;" and depth == 0:
                return
            self.i += 1

    def object(self, depth: int) -> dict[str, Any]:
        self.i += 1  # {
        out: dict[str, Any] = {}
        while True:
            kind, text = self.peek()
            if kind == "end" or text == "}":
                self.i += 1
                return out
            if text == ",":
                self.i += 1
                continue
            if kind in ("name", "str", "num") and self.peek(1)[1] == ":":
                key = _ESCAPE.sub(r"\1", text[1:-1]) if kind == "str" else text
                self.i += 2
                out[key] = self.value(depth + 1)
            elif kind == "name" and self.peek(1)[1] in (",", "}"):  # shorthand `locales,`
                out[text] = self.variables.get(text, UNKNOWN)
                self.i += 1
            else:  # a spread, a method, a computed key: not data we can read
                self.skip_expression()
                if self.peek()[1] not in (",", "}"):
                    self.i += 1

    def array(self, depth: int) -> list[Any]:
        self.i += 1  # [
        out: list[Any] = []
        while True:
            kind, text = self.peek()
            if kind == "end" or text == "]":
                self.i += 1
                return out
            if text == ",":
                self.i += 1
                continue
            before = self.i
            out.append(self.value(depth + 1))
            if self.i == before:  # a stray token: step over it rather than loop
                self.i += 1


def _top_level_variables(tokens: list[tuple[str, str]]) -> dict[str, Any]:
    """`const name = <literal>` at the top level, in order (later ones may use earlier ones)."""
    variables: dict[str, Any] = {}
    depth = 0
    j = 0
    while j < len(tokens):
        kind, text = tokens[j]
        if kind == "punct" and text in "([{":
            depth += 1
        elif kind == "punct" and text in ")]}":
            depth -= 1
        elif (depth == 0 and kind == "name" and text in ("const", "let", "var") and j + 2 < len(tokens)
              and tokens[j + 1][0] == "name" and tokens[j + 2][1] == "="):
            parser = _Parser(tokens, variables)
            parser.i = j + 3
            variables[tokens[j + 1][1]] = parser.value()
            j = parser.i
            continue
        j += 1
    return variables


def read_config_object(source: str) -> dict[str, Any]:
    """The configuration object's literal data; {} when no literal configuration is found."""
    tokens = _tokens(source)
    variables = _top_level_variables(tokens)
    start = _export_start(tokens)
    if start is None:
        found = variables.get("config")
        return found if isinstance(found, dict) else {}
    parser = _Parser(tokens, variables)
    parser.i = start
    # `async () => ({...})` or `function () {...}`: step to the object an arrow function returns.
    while parser.peek()[1] in ("async", "function", "(", ")", "=>") and parser.peek()[0] != "end":
        if parser.peek()[1] == "(" and parser.peek(1)[1] == "{":
            break
        parser.i += 1
    if parser.peek(-1)[1] == ")" and parser.peek()[1] == "{":
        return {}  # a function body builds the configuration: only running it could tell
    value = parser.value()
    return value if isinstance(value, dict) else {}


def _export_start(tokens: list[tuple[str, str]]) -> int | None:
    """The index of the token after `module.exports =` or `export default`, read from the tokens (so never from
    a comment or a string that mentions them); None when the file exports nothing."""
    texts = [text for _, text in tokens]
    for j, (kind, text) in enumerate(tokens):
        if kind != "name":
            continue
        if text == "module" and texts[j + 1:j + 4] == [".", "exports", "="]:
            return j + 4
        if text == "export" and texts[j + 1:j + 2] == ["default"]:
            return j + 2
    return None
