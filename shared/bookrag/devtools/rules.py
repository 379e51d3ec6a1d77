"""How many hand-written rules a package holds (issue 37): `re.compile` patterns plus word lists (set and
frozenset literals of strings, and frozensets of a literal's `.split()`). Decisions belong to fitted scores;
this count is how we see the rules go.

Usage: python -m bookrag.devtools.rules shared/bookrag/answering
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def _words(elts: list[ast.expr]) -> bool:
    return all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elts)


def _is_rule(node: ast.AST) -> bool:
    if isinstance(node, ast.Set):
        return _words(node.elts)
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    if isinstance(f, ast.Attribute) and f.attr == "compile" and isinstance(f.value, ast.Name) and f.value.id == "re":
        return True
    if isinstance(f, ast.Name) and f.id == "frozenset" and node.args:
        arg = node.args[0]
        if isinstance(arg, ast.Set | ast.List | ast.Tuple):
            return _words(arg.elts)
        return (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "split"
                and isinstance(arg.func.value, ast.Constant))
    return False


def _rules(tree: ast.AST) -> list[ast.AST]:
    """The rules of one module, each once: `frozenset({"a", "b"})` is one word list, not the call and its set."""
    found = [node for node in ast.walk(tree) if _is_rule(node)]
    inner = {id(arg) for node in found if isinstance(node, ast.Call) for arg in node.args}
    return [node for node in found if id(node) not in inner]


def count_rules(root: Path) -> dict[str, int]:
    """Rules per module under `root` (modules without any left out)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        n = len(_rules(ast.parse(path.read_text(encoding="utf-8"))))
        if n:
            out[path.relative_to(root).as_posix()] = n
    return out


if __name__ == "__main__":
    counts = count_rules(Path(sys.argv[1]))
    for name, n in counts.items():
        sys.stdout.write(f"{n:3d} {name}\n")
    sys.stdout.write(f"{sum(counts.values()):3d} in all\n")
