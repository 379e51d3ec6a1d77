"""The one sentence splitter: where a text breaks into sentences, with each caller's rules as options.

Three readers need sentences and draw the line differently, on purpose:

- the chunker repeats a chunk's whole trailing sentences at the start of the next one; a stop may sit
  inside a closing quote or bracket (`He said "stop." Then`), and nothing else is second-guessed, since
  the overlap only has to end on a sentence boundary, not to be quoted;
- the extractive answerer quotes sentences back to the reader, so it must not cut "e.g. Gazebo" or
  "Dr. Smith" in two, and only breaks where the next word can open a sentence;
- the citation check drops a model's sentence whose citations are all invalid, so a line break ends a
  claim too (models write one claim per line or bullet), and the text is re-joined exactly as written.

One pattern is built from the options, so the rule for a stop, a closer or a sentence start is written
once. It is a single left-to-right regex pass with fixed-width lookarounds: linear on any input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["PROSE", "SentenceSplitter", "split_sentences"]

# Full stops and question marks of the scripts a translated book is written in as well: Urdu and Arabic
# (U+06D4, U+061F), Devanagari (U+0964), CJK (U+3002, fullwidth ! and ?).
_STOPS = ".!?\u06d4\u061f\u0964\u3002\uff01\uff1f"
_STOP = rf"(?<=[{_STOPS}])"
_STOP_IN_CLOSER = rf"""(?<=[{_STOPS}]["')\]”’])"""
# A capital, digit, quote, bracket or code span can open a sentence, and so can a letter of a script without
# case (Arabic, Devanagari, CJK); "e.g. the" cannot.
_SENTENCE_START = r"""(?=[A-Z0-9`"'(\[\u0600-\u06ff\u0750-\u077f\u0900-\u097f\u3040-\u30ff\u4e00-\u9fff])"""
# Common abbreviations and initials end in a stop but not a sentence.
_ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|approx|cf|Fig|Eq|No|Dr|Mr|Ms|Prof|St)|\b[A-Z])\.$")


@dataclass(frozen=True, slots=True)
class SentenceSplitter:
    """Breaks after `.`, `!` or `?` followed by whitespace; the options add or refuse breaks.

    closers: the stop may be followed by one closing quote or bracket before the break.
    line_breaks: a run of newlines is a break wherever it is; after a stop only spaces and tabs are.
    sentence_start: break only where the next character can open a sentence (see _SENTENCE_START).
    abbreviations: no break after a common abbreviation or an initial ("e.g.", "Dr.", "J.").
    """

    closers: bool = False
    line_breaks: bool = False
    sentence_start: bool = False
    abbreviations: bool = False
    _break: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        space = r"[ \t]+" if self.line_breaks else r"\s+"
        ahead = _SENTENCE_START if self.sentence_start else ""
        stops = [_STOP, _STOP_IN_CLOSER] if self.closers else [_STOP]
        pattern = "|".join(f"{stop}{space}{ahead}" for stop in stops)
        if self.line_breaks:
            pattern += r"|\n+"
        object.__setattr__(self, "_break", re.compile(pattern))

    def split(self, text: str) -> list[str]:
        """The sentences of `text`, stripped, empty ones left out.

        Where an abbreviation kept two pieces together they are joined by one space, however the
        text spaced them: the result is read, not re-joined.
        """
        return [s for s in (p.strip() for p, _ in self._segments(text, keep_breaks=False)) if s]

    def segments(self, text: str) -> list[tuple[str, str]]:
        """(sentence, the break after it) pairs that concatenate back to `text` exactly.

        Nothing is stripped or dropped (a sentence may be empty or only whitespace), so a caller can
        leave sentences out and re-join the rest with their own spacing. The last break is "".
        """
        return self._segments(text, keep_breaks=True)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) offsets of each sentence in `text`, breaks excluded, nothing stripped: for a
        caller that must quote the original text exactly."""
        out: list[tuple[int, int]] = []
        pos = 0
        for sentence, brk in self._segments(text, keep_breaks=True):
            out.append((pos, pos + len(sentence)))
            pos += len(sentence) + len(brk)
        return out

    def _segments(self, text: str, *, keep_breaks: bool) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        pos = 0
        for m in self._break.finditer(text):
            self._append(out, text[pos : m.start()], m.group(), keep_breaks)
            pos = m.end()
        self._append(out, text[pos:], "", keep_breaks)
        return out

    def _append(self, out: list[tuple[str, str]], sentence: str, brk: str, keep_breaks: bool) -> None:
        if self.abbreviations and out and _ABBREVIATION.search(out[-1][0]):
            prev, prev_brk = out[-1]
            out[-1] = (prev + (prev_brk if keep_breaks else " ") + sentence, brk)
        else:
            out.append((sentence, brk))


PROSE = SentenceSplitter(sentence_start=True, abbreviations=True)


def split_sentences(paragraph: str) -> list[str]:
    """Sentences of running prose as a reader would quote them (abbreviations and initials kept whole)."""
    return PROSE.split(paragraph)
