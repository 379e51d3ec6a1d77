"""Course scaffolding: the parts of a textbook that organise the reader's work rather than say what
the book teaches (learning objectives, "in this chapter", schedules, lab steps and checklists, quiz
items, assignments), and the reading list at a chapter's end. Such a statement often shares every
word of a question about its chapter's subject ("Demonstration of embodied cognition principles."),
yet never answers it: it may join an answer, but not lead one, unless the question asks about the scaffolding itself.
The book asking is scaffolding too, read from its form whatever its heading says (`asks`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

# A section whose heading names scaffolding. Not "checklist" or "verification": a safety appendix's
# pre-operation checklist is what the book teaches.
_HEADING = re.compile(
    r"\b(?:learning\s+(?:objectives|outcomes|goals)|objectives|what\s+you(?:'ll|\s+will)\s+learn|"
    r"in\s+this\s+(?:chapter|module|section|lab)|schedule|weekly|week\s*\d+|day\s*\d+|exercises?|"
    # A lab exercise, not the lab a robot lives in ("Research Lab", "Lab Architecture", "lab network").
    r"lab\s*\d+|(?:practical|hands-on)\s+labs?|lab\s+(?:overview|exercises?|extensions?|instructions|report|tasks?)|"
    r"quiz|quizzes|answer\s+key|assignments?|deliverables|grading|rubric|grade\s+scale|grades|assessment|summary|recap|key\s+takeaways|key\s+terms|submission|self[-\s]check|review\s+questions|"
    r"(?:module|course|chapter)\s+(?:structure|outline|overview)|"
    # Back matter: a reading list names where to read more, in the words of the chapter's subject.
    r"references|further\s+reading|bibliography|additional\s+resources)\b",
    re.IGNORECASE)
# A heading that is only an exercise's part ("Analysis", "Tasks"): "Stability analysis" is what the book teaches.
_BARE_HEADING = re.compile(r"^\s*(?:\d+(?:\.\d+)*\.?\s+)?(?:analysis|discussion|reflection|questions|tasks|"
                           r"challenges?\s+questions|extensions?|further\s+exploration|try\s+it)\s*:?\s*$",
                           re.IGNORECASE)
# A statement that opens like scaffolding.
_STATEMENT = re.compile(
    r"^(?:by\s+the\s+end\s+of\s+this|after\s+completing\s+this|upon\s+completion|in\s+this\s+(?:chapter|module|"
    r"section|lab|lesson)|this\s+(?:chapter|module|lab|lesson)\s+(?:covers|introduces|will)|you\s+will\s+(?:learn|be\s+able)|"
    r"students\s+will|learners\s+will|(?:day|week|step|task|exercise|part)\s*\d+\s*[:.)-]|verification\s*:|"
    r"instructions\s*:|objectives?\s*:|deliverables?\s*:|demonstration\s+of\b|submit\b|[a-d]\)\s|"
    # An exercise's prompt to the student ("Explain how ...", "Compare the advantages ...").
    r"(?:explain|describe|discuss|compare|analy[sz]e|evaluate|justify|reflect\s+on|assess)\s)", re.IGNORECASE)
# A question about the scaffolding itself: then it may lead.
_ASKS = re.compile(
    r"\b(?:objectives?|outcomes|learn|schedule|week|day|lab\s*\d+|(?:practical|hands-on)\s+labs?|"
    r"lab\s+(?:exercises?|instructions|report|tasks?)|exercises?|instructions|verif\w*|checklist|quiz|"
    r"assessment|assignments?|deliverables?|grad\w*|rubric|submi\w*|steps?|prerequisites|syllabus|course|"
    r"read(?:ing)?\s+more|further\s+reading|references?|bibliography|"
    # "How often is it audited?" asks for a schedule ("Audit Schedule — Quarterly: ...").
    r"how\s+(?:often|frequently))\b",
    re.IGNORECASE)


def is_scaffolding(text: str, headings: tuple[str, ...] | list[str]) -> bool:
    """Whether a statement (`text`, under `headings`: its section's heading path) is scaffolding."""
    return bool(_STATEMENT.match(text)) or any(_HEADING.search(h) or _BARE_HEADING.match(h) for h in headings if h)


def asks_about_scaffolding(question: str) -> bool:
    return bool(_ASKS.search(question))


def asks(listed: Sequence[str]) -> bool:
    """Whether a list asks rather than tells: every item a question ("Discussion Questions: How does ...?;
    What are ...?"), or an item that is one. `listed`: a lead-in's items, or an item alone."""
    return bool(listed) and all(item.rstrip().endswith("?") for item in listed)
