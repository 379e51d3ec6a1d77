"""What a reader checks in one answer, as pure functions of its text and sources (eval/README.md).

An answer is cut into sentences: a fenced block is one (not prose), a list or table line is one (not
prose), other lines are split by the book's sentence splitter (prose). Each sentence keeps its own
`[n]` markers; one without a marker takes the next marker after it (an answerer cites a run of
sentences once, at its end). Mapping a sentence to the book section it was quoted from is
`answer_quality.sentence_section`; the checks here need only the text:

- `markup_in_prose`: a prose sentence holding an XML/HTML tag or comment (inline code in backticks
  excepted), a fence (```), a Markdown table row (`| a | b |`), or two or more lines of one fenced
  block its cited quotes hold (code flattened into prose; a one-line equation reads as prose);
- `label_kept`: the list item's label (its words, in order) appears in the answer;
- `definition_lead`: the lead quotes a definition the book gives (a gold passage: 80 % of its content words;
  the lead is the first sentence, with the next when that one continues it: "It's the point ..."), or
  names the term as the subject of a defining verb (its words in order, a word may carry a plural s or
  share its first five letters: "Morphological computing refers to ..." names "morphological
  computation"; a subject of at most 8 words; is, are, refers to, means, represents, denotes, stands for);
- `content_words`: a text's words of three letters or more, minus stop words, a plural s dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bookrag.devtools.book_sections import tokens
from bookrag.text.sentence_splitter import split_sentences

__all__ = ["Sentence", "content_words", "definition_lead", "flattened_code", "has_markup", "label_kept",
           "split_answer"]

_MARKER = re.compile(r"\s*\[(\d+)\]")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST_LINE = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
_TABLE_LINE = re.compile(r"^\s*\|.*\|\s*$")
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_TAG = re.compile(r"<!--|</?[A-Za-z][\w:.-]*(?:\s[^<>\n]*)?/?>")
_TABLE_ROW = re.compile(r"\|[^|\n]+\|[^|\n]+\|")
_DEFINING = re.compile(r"^(?P<subject>(?:\S+\s+){0,7}?)(?:is|are|refers? to|means|represents|denotes|stands for)\b",
                       re.IGNORECASE)
# A sentence that goes on about the one before it: "The ZMP is a critical concept ... It's the point ...".
_CONTINUES = re.compile(r"^(?:it|it's|this|these|they|such)\b", re.IGNORECASE)
_DEFINITION_SHARE = 0.8
_STOP = frozenset({
    "the", "and", "for", "are", "was", "were", "what", "which", "who", "whom", "whose", "when", "where", "why",
    "how", "does", "did", "doing", "done", "this", "that", "these", "those", "with", "from", "into", "onto",
    "about", "than", "then", "them", "they", "their", "there", "here", "have", "has", "had", "can", "could",
    "should", "would", "will", "shall", "may", "might", "must", "not", "but", "you", "your", "yours", "our",
    "ours", "its", "also", "any", "all", "some", "each", "other", "such", "only", "own", "same", "very", "just",
    "more", "most", "much", "many", "one", "two", "use", "used", "using", "get", "got", "make", "made", "like",
    "between", "tell", "explain", "mean", "book",
})


@dataclass(frozen=True, slots=True)
class Sentence:
    text: str  # markers removed
    markers: tuple[int, ...]  # 1-based source numbers, its own or inherited from the next cited sentence
    prose: bool


def split_answer(answer: str) -> list[Sentence]:
    """The answer's sentences in order (see the module docstring)."""
    raw: list[tuple[str, bool]] = []
    block: list[str] | None = None
    for line in answer.split("\n"):
        if block is not None:
            block.append(line)
            if _FENCE.match(line):
                raw.append(("\n".join(block), False))
                block = None
        elif _FENCE.match(line):
            block = [line]
        elif _LIST_LINE.match(line) or _TABLE_LINE.match(line):
            raw.append((line.strip(), False))
        elif line.strip():
            raw.extend((s, True) for s in split_sentences(line.strip()))
    if block is not None:
        raw.append(("\n".join(block), False))
    out: list[Sentence] = []
    pending: list[tuple[str, bool]] = []
    for text, prose in raw:
        markers = tuple(int(m) for m in _MARKER.findall(text))
        pending.append((text, prose))
        if markers:
            out.extend(Sentence(_MARKER.sub("", t).strip(), markers, p) for t, p in pending)
            pending = []
    out.extend(Sentence(_MARKER.sub("", t).strip(), (), p) for t, p in pending)
    return [s for s in out if s.text]


def flattened_code(sentence: str, quotes: Sequence[str]) -> bool:
    """Whether a prose sentence holds two or more lines (8+ characters each) of one fenced block of
    `quotes`: code run together into a sentence. One line alone (an equation) reads as prose."""
    flat = " ".join(sentence.split())
    for quote in quotes:
        inside, found = False, 0
        for line in quote.split("\n"):
            if _FENCE.match(line):
                inside, found = not inside, 0
                continue
            code = " ".join(line.split())
            found += inside and len(code) >= 8 and code in flat
            if found >= 2:
                return True
    return False


def has_markup(sentence: str) -> bool:
    """A tag or HTML comment outside inline code, a fence, or a Markdown table row, in a prose sentence."""
    bare = _INLINE_CODE.sub(" ", sentence)
    return bool(_TAG.search(bare) or "```" in sentence or _TABLE_ROW.search(bare))


def _contains(haystack: list[str], needle: list[str], same: Callable[[str, str], bool] = str.__eq__) -> bool:
    n = len(needle)
    return n > 0 and any(all(same(h, w) for h, w in zip(haystack[i:i + n], needle, strict=True))
                         for i in range(len(haystack) - n + 1))


def label_kept(answer: str, label: str) -> bool:
    return _contains(tokens(answer), tokens(label))


def _same_word(found: str, wanted: str) -> bool:
    """Equal, a plural s, or (5+ letters) one stem: "computing" names "computation", "cpgs" names "cpg"."""
    return found in (wanted, wanted + "s") or (min(len(found), len(wanted)) >= 5 and found[:5] == wanted[:5])


def definition_lead(sentences: Sequence[str], term: str, definitions: Sequence[str] = ()) -> bool:
    """Whether the answer's `sentences` lead with a definition of `term` (the module docstring)."""
    if not sentences:
        return False
    lead = sentences[0] + (" " + sentences[1] if len(sentences) > 1 and _CONTINUES.match(sentences[1]) else "")
    said = content_words(lead)
    for definition in definitions:
        wanted = content_words(definition)
        if wanted and len(wanted & said) >= _DEFINITION_SHARE * len(wanted):
            return True
    m = _DEFINING.match(sentences[0])
    return m is not None and _contains(tokens(m.group("subject")), tokens(term), _same_word)


def content_words(text: str) -> set[str]:
    out = set()
    for word in tokens(text):
        if len(word) < 3 or word in _STOP or word.isdigit():
            continue
        out.add(word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word)
    return out
