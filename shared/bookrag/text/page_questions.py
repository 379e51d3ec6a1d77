"""Questions a page may answer, read from its own text (issue 36): the widget offers up to three of them when a
reader opens it on the page. These are only candidates: `services.suggestions` keeps one only when the agent
answers it from this page, so a candidate may be clumsy but never reaches a reader unless the book answers it.

The sources, in the order a section's candidates are tried (the page's own phrasing first, then what it
defines, then what it lists): a heading that is a question ("1.1 What is Physical AI?"), a term the page
defines in bold ("A **node** is ...") or names in a glossary item ("- **Elastic Resources**: ..."), a heading
over a list whose name is plural ("Advantages" under "Cloud Deployment": "What are the advantages of cloud
deployment?"), a question the page asks in a line of its own, and last a section named after a thing ("What is
digital twin technology?").
A page's sections are visited in reading order and a section gives at most one candidate, so three kept
questions cover three places of the page.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from bookrag.domain.models import ChunkPayload

MAX_WORDS = 6  # a heading or a term longer than this is a sentence, not a name to ask about
_NUMBERING = re.compile(r"^\s*(?:(?:chapter|module|part|appendix|lab|section)\s+)?[\dIVXivx]+(?:\.\d+)*[.:)]?\s+")
# "A **node** is the ...", "**Physical AI** represents ...": a paragraph's opening bold term and its verb.
_DEFINITION = re.compile(r"^(?:(?P<article>an?|the)\s+)?\*\*(?P<term>[^*\n]{2,60})\*\*\s+(?P<verb>is|are|refers to|"
                         r"means|represents|describes)\b", re.IGNORECASE)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")
_GLOSSARY_ITEM = re.compile(r"^\s*[-*+]\s+\*\*(?P<term>[^*\n]{2,60})\*\*\s*[:—–-]\s+\S{2,}")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+#.'-]*")
# A multiple-choice option ("a) Reliability policy", "B. Goal, feedback, result"): the line before it is a quiz's
# question, which its page asks and never answers.
_OPTION = re.compile(r"^\s*(?:[-*+]\s+)?\(?[a-dA-D][).]\s+\S")
# A heading's last word naming a part of the document, not a thing it teaches ("Lab Overview", "Module
# Structure", "Lab Duration", "Analysis Template"): "What is lab overview?" asks about the page, not its subject.
_DOCUMENT_PART = re.compile(r"\b(?:overview|introduction|structure|outline|duration|template|information|notice|"
                            r"summary|contents)$", re.IGNORECASE)
# "Introduction to Gazebo Harmonic": the part is the document's, its subject is what follows.
_PART_OF = re.compile(r"^(?:an?\s+)?(?:introduction|overview)\s+(?:to|of)\s+", re.IGNORECASE)


def _clean_heading(heading: str) -> str:
    return _PART_OF.sub("", _NUMBERING.sub("", heading.replace("**", "").replace("`", "")).strip())


def _words(text: str) -> list[str]:
    return text.split()


def _plain(text: str) -> bool:
    """A name to put in a question: a few words, letters, no sentence punctuation or step numbering."""
    words = _words(text)
    return 0 < len(words) <= MAX_WORDS and not re.search(r"[:;!?()\[\]{}<>=|/\\]|\d", text) and bool(
        _WORD.match(text))


def _lower_first(text: str) -> str:
    """"Cloud Deployment" -> "cloud deployment"; an acronym or a name with inner capitals stays ("ROS", "PyTorch")."""
    out = []
    for word in _words(text):
        inner = word[1:]
        out.append(word if any(ch.isupper() for ch in inner) or word.isupper() else word.lower())
    return " ".join(out)


def _question_heading(heading: str) -> str | None:
    cleaned = _clean_heading(heading)
    if cleaned.endswith("?") and 3 <= len(_words(cleaned)) <= 14:
        return cleaned[0].upper() + cleaned[1:]
    return None


def _definition(text: str) -> str | None:
    for paragraph in text.split("\n"):
        found = _DEFINITION.match(paragraph.strip())
        if found is None:
            continue
        term = found.group("term").strip().rstrip(":")
        if not _plain(term):
            continue
        article = (found.group("article") or "").lower()
        verb = "are" if found.group("verb").lower() == "are" else "is"
        subject = f"{article} {term}" if article else term
        return f"What {verb} {subject}?"
    return None


def _names_a_thing(name: str) -> bool:
    """A heading that names a thing, not an action ("Resolving dependencies with rosdep", a step of a how-to):
    asked as "What is ...?", an action reads wrong."""
    first = name.split()[0].lower() if name.split() else ""
    return _plain(name) and not (first.endswith("ing") and len(first) > 5) and not _DOCUMENT_PART.search(name)


def _plural(name: str) -> bool:
    last = name.lower().split()[-1] if name.split() else ""
    return last.endswith("s") and not last.endswith(("ss", "us", "is"))


def _glossary(text: str) -> str | None:
    """A list item that names and explains a term ("- **Embodiment**: the physical form ..."): what is it?"""
    for line in text.split("\n"):
        found = _GLOSSARY_ITEM.match(line)
        if found and _plain(term := found.group("term").strip()):
            return f"What {'are' if _plural(term) else 'is'} {_lower_first(term)}?"
    return None


def _listed(chunk: ChunkPayload, title: str) -> str | None:
    lines = [line for line in chunk.content_text.split("\n") if line.strip()]
    items = sum(1 for line in lines if _LIST_ITEM.match(line))
    heading = _clean_heading(chunk.heading_path[-1]) if chunk.heading_path else ""
    if items < 2 or not _plain(heading) or not _plural(heading):
        return None
    # Whose list it is: the nearest heading above that names a thing, not another list ("Advantages").
    parents = [_clean_heading(h) for h in chunk.heading_path[1:-1]]
    owner = next((p for p in reversed(parents) if _names_a_thing(p) and not _plural(p)), None) or _topic(title)
    if not owner:
        return None
    return f"What are the {_lower_first(heading)} of {_lower_first(owner)}?"


def _topic(title: str) -> str | None:
    """A page title's subject: "Module 1: Physical AI Foundations - Embodied ..." -> "Physical AI Foundations"."""
    for part in re.split(r"\s+[—–-]\s+|:\s+", title):
        cleaned = _clean_heading(part)
        if _names_a_thing(cleaned):
            return cleaned
    return None


def _asked_in_text(text: str) -> str | None:
    """A question the page itself asks in a line of its own (a FAQ, a review list): "- What does DDS do?"."""
    lines = [line for line in text.split("\n") if line.strip()]
    for n, line in enumerate(lines):
        cleaned = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line).replace("**", "").strip()
        quiz = n + 1 < len(lines) and _OPTION.match(lines[n + 1])
        if cleaned.endswith("?") and 4 <= len(_words(cleaned)) <= 14 and cleaned[0].isupper() and "`" not in cleaned \
                and not quiz:
            return cleaned
    return None


def _named_heading(chunk: ChunkPayload) -> str | None:
    """A section named after a thing ("Digital Twin Technology"): what is it? Tried last: the name may be the
    page's own word for a step or a part, which the agent's check then turns down."""
    heading = _clean_heading(chunk.heading_path[-1]) if len(chunk.heading_path) > 1 else ""
    # One word ("Notes", "Requirements") names a part of any page, not a thing this page is about.
    if not _names_a_thing(heading) or not 2 <= len(_words(heading)) <= 4 or heading.lower() == chunk.doc_title.lower():
        return None
    return f"What {'are' if _plural(heading) else 'is'} {_lower_first(heading)}?"


def _from_chunk(chunk: ChunkPayload, title: str) -> Iterator[str]:
    for heading in chunk.heading_path[1:]:
        asked = _question_heading(heading)
        if asked:
            yield asked
    for found in (_definition(chunk.content_text), _glossary(chunk.content_text), _listed(chunk, title),
                  _asked_in_text(chunk.content_text), _named_heading(chunk)):
        if found:
            yield found


def candidates(chunks: Sequence[ChunkPayload]) -> list[str]:
    """A page's candidate questions, best first: each section's first candidate in reading order, then each
    section's others. Distinct after case folding."""
    ordered = sorted(chunks, key=lambda c: c.chunk_index)
    title = ordered[0].doc_title if ordered else ""
    per_section: dict[str, list[str]] = {}
    for chunk in ordered:
        section = " > ".join(chunk.heading_path[:3])
        per_section.setdefault(section, []).extend(_from_chunk(chunk, title))
    seen: set[str] = set()
    out: list[str] = []
    rounds = max((len(found) for found in per_section.values()), default=0)
    for depth in range(rounds):
        for found in per_section.values():
            if depth < len(found) and found[depth].casefold() not in seen:
                seen.add(found[depth].casefold())
                out.append(found[depth])
    return out
