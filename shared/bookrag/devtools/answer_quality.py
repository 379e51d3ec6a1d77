"""One answer scored against its gold sections, and the scores summarised per shape (eval/README.md).

A sentence's section (`sentence_section`): its citation marker names a source; the sentence's words
are looked up in that source's file; failing that (a table row reworded as "Row (Column: value; ...)")
the words of the source's quote sharing most words with the sentence; failing both, the whole book.
`lead_from_gold`: the first sentence's section is a gold section (or inside one). A sentence is
**off topic** when its section is neither a gold section nor one whose headings below the page title
share a content word with the question (`answer_metrics.content_words`). A sentence found nowhere
counts as unlocated, never as off topic.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from bookrag.devtools import answer_metrics as m
from bookrag.devtools.book_sections import Book, Section, tokens

if TYPE_CHECKING:
    from bookrag.contracts.agent import Response, Source

__all__ = ["Quality", "score_answer", "sentence_section", "summarise"]


@dataclass(frozen=True, slots=True)
class Quality:
    """The reader's checks of one answer; None where a check does not apply (a refusal, no label...)."""

    sentences: int = 0
    unlocated: int = 0
    lead_from_gold: bool | None = None
    off_topic_sentences: int | None = None
    label_kept: bool | None = None
    markup_in_prose: int | None = None
    definition_lead: bool | None = None


def _shared(a: str, b: str) -> int:
    return len(set(tokens(a)) & set(tokens(b)))


def sentence_section(book: Book, sentence: m.Sentence, sources: Sequence[Source]) -> Section | None:
    for n in sentence.markers:
        if not 1 <= n <= len(sources):
            continue
        source = sources[n - 1]
        found = book.locate(sentence.text, source.source_file)
        quotes = sorted((q.text for q in source.quotes), key=lambda q: -_shared(q, sentence.text))
        if found is None and quotes:
            found = book.locate(quotes[0], source.source_file)
        if found is not None:
            return found
    return book.locate(sentence.text)


def _with_items(sentences: Sequence[m.Sentence], at: int) -> m.Sentence:
    """A list's lead-in with its first items: a short heading ("Educational Platform (Basic):") recurs
    across a page, the heading with its list sits in one place."""
    sentence = sentences[at]
    if not sentence.text.rstrip().endswith(":"):
        return sentence
    items = [s.text.lstrip("-* ").strip() for s in sentences[at + 1:at + 3] if s.text.lstrip().startswith(("-", "*"))]
    return replace(sentence, text=" ".join([sentence.text, *items])) if items else sentence


def _cited_quotes(sentence: m.Sentence, sources: Sequence[Source]) -> list[str]:
    return [q.text for n in sentence.markers if 1 <= n <= len(sources) for q in sources[n - 1].quotes]


def score_answer(book: Book, response: Response, gold: Iterable[Section], question: str, *,
                 label: str = "", term: str = "", definitions: Sequence[str] = ()) -> Quality:
    """Score an answer (not a refusal) against `gold`, for a question asked as `question` in full."""
    if response.is_refusal:
        return Quality()
    gold = list(gold)
    sentences = m.split_answer(response.answer)
    sections = [sentence_section(book, _with_items(sentences, i), response.sources) for i in range(len(sentences))]
    wanted = m.content_words(question)
    off_topic = sum(1 for s in sections
                    if s is not None and s not in gold and not (m.content_words(s.topic()) & wanted))
    markup = sum(1 for s in sentences if s.prose and (
        m.has_markup(s.text) or m.flattened_code(s.text, _cited_quotes(s, response.sources))))
    return Quality(
        sentences=len(sentences), unlocated=sum(1 for s in sections if s is None),
        lead_from_gold=bool(sections) and sections[0] is not None and sections[0] in gold,
        off_topic_sentences=off_topic,
        label_kept=m.label_kept(response.answer, label) if label else None,
        markup_in_prose=markup,
        definition_lead=m.definition_lead([s.text for s in sentences[:2]], term, definitions) if term else None)


def _share(values: list[bool]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def summarise(rows: Sequence[tuple[bool, bool, float, Quality]]) -> dict[str, Any]:
    """rows: (answerable, refused, keyword recall, quality) per question -> the figures of a group."""
    answerable = [r for r in rows if r[0]]
    answered = [r[3] for r in answerable if not r[1]]
    unanswerable = [r for r in rows if not r[0]]
    off = [q.off_topic_sentences for q in answered if q.off_topic_sentences is not None]
    out: dict[str, Any] = {
        "n": len(rows), "refused": _share([r[1] for r in rows]),
        "false_refusals": _share([r[1] for r in answerable]),
        "false_answers": _share([not r[1] for r in unanswerable]),
        "keyword_recall": round(statistics.fmean(r[2] for r in answerable), 4) if answerable else None,
        "lead_from_gold": _share([bool(q.lead_from_gold) for q in answered]),
        "with_off_topic": _share([n > 0 for n in off]),
        "off_topic_sentences": round(statistics.fmean(off), 4) if off else None,
        "label_kept": _share([q.label_kept for q in answered if q.label_kept is not None]),
        "with_markup_in_prose": _share([bool(q.markup_in_prose) for q in answered]),
        "definition_lead": _share([q.definition_lead for q in answered if q.definition_lead is not None]),
        "unlocated_sentences": _share_of(sum(q.unlocated for q in answered), sum(q.sentences for q in answered)),
    }
    return out


def _share_of(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def as_dict(quality: Quality) -> dict[str, Any]:
    return asdict(quality)
