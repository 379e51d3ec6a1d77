"""Which words of a question are English and which are names, and what a misspelt word meant.

A reader types "reducr", "dispatchng", "co-simulaton": words no book uses, which must not make a
question look off-book. `closest` maps such a word to the word of the book's text it misspells (the
same first letter, difflib's similarity ratio >= `TYPO_RATIO`): typing errors keep the first letter far
more often than not, and "preact" must not become "react".

`abbreviates` reads a reader's short form of a word the retrieved passages write ("std" for "standard", "deps"
for "dependencies"): like a typo, it is the book's word, not a name the book never mentions.

`english` tells an ordinary English word ("really", "flaky", "gist") from a name ("ethercat",
"kalibr", "jotai"): a question near the book's subject that names a product the book never mentions
is off-book; one that uses a colloquial word the book never writes is not. The lexicon is two lists,
read together and only when a word is first asked about:
- the whole-word entries of all-MiniLM-L6-v2's WordPiece vocabulary (`bookrag/data/english-words.txt`,
  21,719 words, Apache-2.0, the model we embed with offline): WordPiece keeps frequent words whole, the
  frequent names of its training text among them;
- a dictionary's: SCOWL's lower-case words up to its size 35, a small dictionary's (`scowl-words.txt`,
  40,198 words, SCOWL's permissive licence in `scowl-words.COPYRIGHT`, written by
  `python -m bookrag.devtools.scowl_words`). SCOWL grades words by how common they are and keeps proper
  names apart. A larger dictionary knows more of a reader's words ("squishy", "glitch") and more names that
  are English words too ("cartographer" at 35, "jazzy" at 40, "svelte" at 50); its size is chosen on
  textbook-2's gate set (eval/README.md, "Gate fit set").
A word that is neither may still be English by its form: an ending, a compound of two, a prefix. A
compound's parts have four letters or more: three let a name read as English ("ethercat" is "ether" +
"cat", "preact" "pre" + "act").
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection
from functools import cache
from importlib.resources import files

__all__ = ["TYPO_RATIO", "abbreviates", "closest", "english"]

TYPO_RATIO = 0.8
_MIN_TYPO_LEN = 4  # "wat" and "pls" are too short to tell a typo from another word
_ENDINGS = ("s", "es", "ed", "ing", "er", "ers", "est", "ly", "ize", "ise", "ized", "ised", "izing", "ising", "ness")
_MIN_PART = 4  # a compound's parts: "drawback" is "draw" + "back", "ethercat" no such pair
# "rename", "unmount", "preload": a common prefix before an English word of four letters or more ("redux"
# keeps its name: what follows "re" is too short to tell).
_PREFIXES = ("re", "un", "co", "de", "pre", "non", "dis", "mis", "sub", "over", "under", "multi", "inter")
_MIN_PREFIXED = 4


@cache
def _lexicon() -> frozenset[str]:
    data = files("bookrag") / "data"
    return frozenset(word for name in ("english-words.txt", "scowl-words.txt")
                     for word in data.joinpath(name).read_text(encoding="utf-8").split())


def english(word: str) -> bool:
    """Whether `word` is an ordinary English word, not a name or a typo: a lexicon entry, one with a common
    ending ("beginner", "cheapest"), a compound of two ("drawback", "workout"), one with a common prefix
    ("rename"), or a hyphenated word whose parts all are ("human-shaped")."""
    w = word.lower()
    if "-" in w:
        parts = [p for p in w.split("-") if p]
        return bool(parts) and all(english(p) for p in parts)
    return _inflected(w) or any(_inflected(w[:i]) and _inflected(w[i:])
                                for i in range(_MIN_PART, len(w) - _MIN_PART + 1)) \
        or any(w.startswith(p) and len(w) - len(p) >= _MIN_PREFIXED and _inflected(w[len(p):]) for p in _PREFIXES)


def _inflected(w: str) -> bool:
    words = _lexicon()
    if w in words:
        return True
    return any(w.endswith(e) and len(w) - len(e) >= 3 and (w[:-len(e)] in words or w[:-len(e)] + "e" in words)
               for e in _ENDINGS)


def closest(word: str, known: Collection[str]) -> str | None:
    """The word of `known` that `word` misspells, else None."""
    w = word.lower()
    if len(w) < _MIN_TYPO_LEN or w in known:
        return None
    same_start = [k for k in known if k[:1] == w[:1] and abs(len(k) - len(w)) <= 2]
    found = difflib.get_close_matches(w, same_start, n=1, cutoff=TYPO_RATIO)
    return found[0] if found else None


# "std" for "standard", "deps" for "dependencies": a reader's short form keeps the word's first two letters and
# some of its others in order, and is far shorter than the word ("ros" is not "routes", "grpc" not "graphics").
_ABBREVIATION = (3, 4)  # its length
_ABBREVIATED = 2.5  # how much longer the word is


def abbreviates(short: str, words: Callable[[], Collection[str]]) -> bool:
    """Whether `short`, no English word, is a reader's short form of one of `words` (read only then)."""
    s = short.lower()
    if not s.isalpha() or not _ABBREVIATION[0] <= len(s) <= _ABBREVIATION[1] or english(s):
        return False
    return any(w[:2] == s[:2] and len(w) >= _ABBREVIATED * len(s) and _in_order(s, w) for w in words())


def _in_order(short: str, word: str) -> bool:
    letters = iter(word)
    return all(c in letters for c in short)
