"""The count of hand-written rules (issue 37's target): each pattern and each word list once."""

from __future__ import annotations

from pathlib import Path

from bookrag.devtools.rules import count_rules

MODULE = '''
import re

_WORD = re.compile(r"\\w+")
_COLOURS = frozenset({"red", "green"})
_SIZES = frozenset("small large".split())
_ONE = {"one", "once"}
_NUMBERS = frozenset({1, 2})  # no words: not a rule
'''


def test_each_pattern_and_word_list_counts_once(tmp_path: Path) -> None:
    (tmp_path / "rules_here.py").write_text(MODULE, encoding="utf-8")
    (tmp_path / "none_here.py").write_text("X = 1\n", encoding="utf-8")

    assert count_rules(tmp_path) == {"rules_here.py": 4}
