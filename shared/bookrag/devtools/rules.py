"""How many hand-written rules a package holds (issue 37): `re.compile` patterns plus word lists (set and
frozenset literals of strings, and frozensets of a literal's `.split()`). Decisions belong to fitted scores;
this count is how we see the rules go.

Usage: python -m bookrag.devtools.rules shared/bookrag/answering
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def _is_rule(node: ast.AST) -> bool:
    if isinstance(node, ast.Set):
        return all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    if isinstance(f, ast.Attribute) and f.attr == "compile" and isinstance(f.value, ast.Name) and f.value.id == "re":
        return True
    if isinstance(f, ast.Name) and f.id == "frozenset" and node.args:
        arg = node.args[0]
        if isinstance(arg, ast.Set | ast.List | ast.Tuple):
            return True
        return (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "split"
                and isinstance(arg.func.value, ast.Constant))
    return False


def count_rules(root: Path) -> dict[str, int]:
    """Rules per module under `root` (modules without any left out)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        n = sum(_is_rule(node) for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))
        if n:
            out[path.relative_to(root).as_posix()] = n
    return out


if __name__ == "__main__":
    counts = count_rules(Path(sys.argv[1]))
    for name, n in counts.items():
        sys.stdout.write(f"{n:3d} {name}\n")
    sys.stdout.write(f"{sum(counts.values()):3d} in all\n")
