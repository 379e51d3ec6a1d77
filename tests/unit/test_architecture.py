"""What the import contract in pyproject.toml cannot see, checked on the source itself.

- The package root re-exports the public API lazily from `services`: a room that imported the root would
  point up, and the import graph does not record an import of a package's own `__init__` names
  (`from bookrag import __version__` leaves no arrow), so import-linter cannot catch it.
- A module a newcomer reads in a minute: none over `MAX_LINES`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.paths import ROOT

PACKAGE = ROOT / "shared" / "bookrag"
MAX_LINES = 400
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p != PACKAGE / "__init__.py")


def _submodules() -> set[str]:
    return {p.stem for p in PACKAGE.glob("*.py")} | {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}


def root_names_imported(source: str) -> list[str]:
    """Names a module takes from the package root itself (`import bookrag`, `from bookrag import X` where X
    is not a submodule), not from one of its modules (`from bookrag import errors` is `bookrag.errors`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name == "bookrag"]
        elif isinstance(node, ast.ImportFrom) and node.module == "bookrag" and node.level == 0:
            found += [a.name for a in node.names if a.name not in _submodules()]
    return found


def test_the_check_sees_an_import_of_the_root() -> None:
    assert root_names_imported("from bookrag import __version__, errors\nimport bookrag\n") == ["__version__",
                                                                                               "bookrag"]
    assert root_names_imported("from bookrag import errors\nfrom bookrag.version import __version__\n") == []


@pytest.mark.parametrize("module", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_the_package_root(module: Path) -> None:
    assert root_names_imported(module.read_text()) == []


@pytest.mark.parametrize("module", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_over_the_size_a_newcomer_reads(module: Path) -> None:
    lines = len(module.read_text().splitlines())
    assert lines <= MAX_LINES, f"{lines} lines: split it by concern"
