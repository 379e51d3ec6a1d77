"""The words of a question, as the offline follow-up resolution reads them (`answering.conversation`):
its tokens with their offsets, the function words around a subject, the generic words a follow-up uses
without naming one, the verbs and participles that end a subject, and which tokens are names."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bookrag.text.bm25 import STOP_WORDS

__all__ = ["DEMONSTRATIVES", "GENERIC", "PARTICIPLES", "POSSESSIVES", "QUESTION_WORDS", "SUBJECT_PRONOUNS", "VERBS",
           "Tok", "is_function_word", "is_named", "is_participle", "tokens"]

# A word as typed, names and versions whole: "ROS2", "C#", "18.04", "nav2_bringup", "TCP/IP", "Gazebo's".
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9+#._'/-]*[A-Za-z0-9+#]|[A-Za-z0-9]")
QUESTION_WORDS = frozenset("""what which how why when where who whom whose does do did is are was were can could
should would will shall may might must has have had tell explain describe give list show""".split())  # noqa: SIM905 (a word list reads better as prose)
# Words a follow-up uses without naming its subject: "What are the downsides?", "Give an example".
GENERIC = frozenset("""downside downsides drawback drawbacks advantage advantages disadvantage disadvantages
benefit benefits limitation limitations example examples difference differences purpose role step steps
requirement requirements problem problems issue issues part parts feature features type types kind kinds
version versions detail details alternative alternatives cost costs way ways reason reasons pros cons
better worse best worst faster slower main key important need needed recommended help helps good bad
simply simpler more detail mean means meaning happen happens matter matters much many often one ones
else another thing things work""".split())  # noqa: SIM905 (a word list reads better as prose)
# Verbs that questions put right after their subject ("Why did ROS 2 drop ...", "Isaac Sim generate ..."):
# a subject's run of words ends before them.
VERBS = frozenset("""drop dropped generate generates follow follows ask asks include includes require requires
run runs take takes produce produces export exports support supports handle handles recommend recommends
cause causes affect affects provide provides create creates build builds install installs learn learns
organise organised organize organized describe describes cover covers demonstrate demonstrates publish
publishes connect connects detect detects compute computes control controls move moves block blocks wait waits
return returns send sends receive receives""".split())  # noqa: SIM905
# Participles without "-ed" ("What platform is Isaac Sim built on?"): a subject ends before them too.
PARTICIPLES = frozenset("""built made written known based done given taken shown meant held kept found set put
sent drawn grown chosen run""".split())  # noqa: SIM905
SUBJECT_PRONOUNS = frozenset({"it", "they", "them", "he", "she", "him", "her"})
POSSESSIVES = frozenset({"its", "their", "his"})
DEMONSTRATIVES = frozenset({"this", "that", "these", "those"})


@dataclass(frozen=True, slots=True)
class Tok:
    text: str
    start: int
    end: int

    @property
    def low(self) -> str:
        return self.text.lower()


def tokens(text: str) -> list[Tok]:
    return [Tok(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def is_function_word(low: str) -> bool:
    return (low in STOP_WORDS or low in QUESTION_WORDS or low in SUBJECT_PRONOUNS or low in POSSESSIVES
            or low in DEMONSTRATIVES)


def is_named(tok: Tok, first: bool) -> bool:
    """A name or term: an acronym, a token with a digit, a capitalised word not opening the sentence."""
    t = tok.text
    return (any(c.isdigit() for c in t) or (len(t) > 1 and sum(c.isupper() for c in t) > 1)
            or (t[0].isupper() and not first))


def is_participle(tok: Tok) -> bool:
    """"obtained", "built": a subject ends before it (a capitalised one is part of a name)."""
    return (tok.low.endswith("ed") or tok.low in PARTICIPLES) and not is_named(tok, False)
