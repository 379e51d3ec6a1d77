"""BM25 as Qdrant sparse vectors.

Documents carry BM25 term-frequency weights; Qdrant's IDF modifier supplies the inverse document
frequency at query time from the collection itself, so the index stays correct as files are added
or removed without recomputing corpus statistics. Queries carry weight 1 per distinct term.
Term ids are CRC32 hashes of stemmed tokens: stable across processes and Python versions (unlike
`hash()`), and collisions in 2**32 buckets are negligible for a book-sized vocabulary.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

from bookrag.domain.models import SparseVector

# Technical tokens keep inner dots, dashes and underscores ("ros2", "nav2_bringup", "setup.bash").
_TOKEN = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*")
# A word of any script: letters and digits (Python's `\w` is Unicode-aware), underscore excluded.
_OTHER_WORD = re.compile(r"[^\W_]+")
_OTHER_LETTER = re.compile(r"[^\W\d_a-z]")  # in lower-cased text: a letter beyond ASCII

# Snowball's English stop list, lightly extended with Markdown/code noise.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before being
    below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't
    down during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's
    her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it
    it's its itself let's me more most mustn't my myself no nor not of off on once only or other ought
    our ours ourselves out over own same shan't she she'd she'll she's should shouldn't so some such
    than that that's the their theirs them themselves then there there's these they they'd they'll
    they're they've this those through to too under until up very was wasn't we we'd we'll we're we've
    were weren't what what's when when's where where's which while who who's whom why why's with won't
    would wouldn't you you'd you'll you're you've your yours yourself yourselves also use used using may
    might must shall will just e.g i.e etc
    """.split()  # noqa: SIM905 - a word list reads better as text
)




@lru_cache(maxsize=1)
def _stemmer() -> object:
    from py_rust_stemmers import SnowballStemmer  # Rust extension: loaded on first use only

    return SnowballStemmer("english")


def stem_words(words: list[str]) -> list[str]:
    """The Snowball (English) stems of `words`: the one stemmer of the project."""
    stemmed: list[str] = _stemmer().stem_words(words)  # type: ignore[attr-defined]
    return stemmed


def tokenize(text: str) -> list[str]:
    """Lower-case, split into word tokens, drop stop words and one-character tokens, stem.

    Words in any other script (a translated book's Urdu, Hindi, Greek...) are tokens too, after the English
    ones: Unicode letters and digits, compared exactly (no stemmer is known for them: see `other_words`).
    ASCII text is read exactly as before."""
    lowered = text.lower()
    words = [w for w in _TOKEN.findall(lowered) if len(w) > 1 and w not in STOP_WORDS]
    stems = stem_words(words)
    if not lowered.isascii() and _OTHER_LETTER.search(lowered):  # an em dash or a curly quote is no word
        stems.extend(other_words(lowered))
    return stems


def words(text: str) -> list[str]:
    """The words of `text` as written: runs of letters and digits of any script (underscore excluded)."""
    return _OTHER_WORD.findall(text)


def other_words(text: str) -> list[str]:
    """The words of `text` that hold a letter beyond ASCII, folded so a book and a reader write them alike:
    NFKC, optional vowel marks and tatweel dropped (Urdu and Arabic write them or not), a zero-width
    non-joiner kept inside its word. Exact terms: one stemmer (Snowball, English) serves the project."""
    folded = "".join(c for c in unicodedata.normalize("NFKC", text).replace("\u200c", "")
                     if not unicodedata.combining(c) and c != "\u0640")
    return [w for w in words(folded) if not w.isascii() and len(w) > 1]


def term_id(term: str) -> int:
    return zlib.crc32(term.encode("utf-8"))


class BM25Encoder:
    """Encodes documents and queries. `avg_doc_len` is in stemmed tokens of the embedded text.

    Measured: 57.7 on textbook-2 and 56.3 on the sample book (200-token chunks). 80 stays the default
    because 58 measured no better (benchmarks/eval-textbook-2.md) and the weights are stored at ingest,
    so changing any parameter here means re-ingesting every book.
    """

    def __init__(self, *, k1: float = 1.2, b: float = 0.75, avg_doc_len: float = 80.0) -> None:
        self.k1 = k1
        self.b = b
        self.avg_doc_len = avg_doc_len

    def encode_document(self, text: str) -> SparseVector:
        tokens = tokenize(text)
        if not tokens:
            return SparseVector([], [])
        norm = self.k1 * (1.0 - self.b + self.b * len(tokens) / self.avg_doc_len)
        weights: dict[int, float] = {}
        for term, tf in Counter(tokens).items():
            # Distinct terms can collide on one id; their weights add, as BM25 would for a merged term.
            tid = term_id(term)
            weights[tid] = weights.get(tid, 0.0) + tf * (self.k1 + 1.0) / (tf + norm)
        return _sorted(weights)

    def encode_documents(self, texts: Iterable[str]) -> list[SparseVector]:
        return [self.encode_document(t) for t in texts]

    def encode_query(self, text: str, also: Iterable[str] = ()) -> SparseVector:
        """`also`: stems the query means without writing them (a facet's other words)."""
        return _sorted({term_id(t): 1.0 for t in {*tokenize(text), *also}})


def _sorted(weights: dict[int, float]) -> SparseVector:
    indices = sorted(weights)
    return SparseVector(indices, [weights[i] for i in indices])
