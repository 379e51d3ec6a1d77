"""Writes `bookrag/data/scowl-words.txt`, the dictionary half of the English lexicon (`text.lexicon`), from
SCOWL (Spell Checker Oriented Word Lists, Kevin Atkinson; Debian's `scowl` package, 2020.12.07):

    apt-get install scowl
    python -m bookrag.devtools.scowl_words /usr/share/dict/scowl shared/bookrag/data/scowl-words.txt

SCOWL grades its words by how common they are: size 10 holds the most common, 35 a small dictionary's, 50 a
medium one's (Debian's `wamerican`), 70 a large one's, 95 the rarest. The output holds, one a line, the
lower-case words of the English, American and British (-ise and -ize) lists up to `SIZE` (`--size` for
another): capitalised entries are proper names ("Isaac", "Redux"), and the variant lists are spellings the
other lists already cover. Licence: SCOWL's own, permissive (`scowl-words.COPYRIGHT`).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

SIZE = 35  # chosen on textbook-2's gate set: eval/README.md, "Gate fit set"
_LIST = re.compile(r"(english|american|british|british_z)-words\.(\d+)")


def words(scowl: Path, size: int = SIZE) -> list[str]:
    """The lower-case words of two letters or more of SCOWL's lists in `scowl` up to `size`, sorted."""
    found: set[str] = set()
    for path in sorted(scowl.iterdir()):
        match = _LIST.fullmatch(path.name)
        if match and int(match[2]) <= size:
            found.update(w for w in path.read_text(encoding="utf-8").split()
                         if len(w) >= 2 and w.isascii() and w.isalpha() and w.islower())
    return sorted(found)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scowl", type=Path, help="SCOWL's final lists, e.g. /usr/share/dict/scowl")
    parser.add_argument("out", type=Path)
    parser.add_argument("--size", type=int, default=SIZE)
    args = parser.parse_args(argv)
    args.out.write_text("".join(f"{w}\n" for w in words(args.scowl, args.size)), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
