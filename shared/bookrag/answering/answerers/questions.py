"""What a question asks, read before any answer is chosen: the things it names (an off-book question
names something the book never uses) and its shape (a list, or several parts a complete answer
covers). Used by the extractive answerer."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from bookrag import errors
from bookrag.answering.question_words import is_function_word, tokens
from bookrag.domain.models import SearchHit
from bookrag.text.bm25 import STOP_WORDS, tokenize
from bookrag.text.facets import facets, without_facet_words
from bookrag.text.lexicon import closest, english

# "1980s", "90s": a decade, not a name.
_YEAR_LIKE = re.compile(r"\d+'?s?")
_TWO_PART = (
    re.compile(r"\bdifferences?\s+between\s+(.+?)\s+and\s+(.+?)(?:\?|$|,|\s+(?:in|when|for)\s)", re.IGNORECASE),
    re.compile(r"\bcompar\w*\s+(.+?)\s+(?:and|with|to)\s+(.+?)(?:\?|$|,)", re.IGNORECASE),
    re.compile(r"([\w\s-]+?)\s+(?:vs\.?|versus)\s+([\w\s-]+)", re.IGNORECASE),
)



# "What is X, and what example shows Y?"; "When ... ? How ...?"
_CLAUSE_BREAK = re.compile(r",?\s+and\s+(?=(?:what|which|how|why|when|where|who|does|do|is|are|can)\b)|(?<=\?)\s+",
                           re.IGNORECASE)



_LIST_QUESTION = re.compile(
    r"\b(?:what|which)\s+(?:\w+\s+){0,3}(?:parts|components|layers|steps|types|kinds|stages|phases|elements|"
    r"parameters|modes|levels|categories|commands|pieces|principles|features|properties|sensors|options|"
    r"variants|ways|tools|packages|nodes|fields)\b|\bmake\s+up\b|\bconsists?\s+of\b|\bmade\s+of\b|"
    r"\bcomposed\s+of\b|\blist\b|\bname\s+the\b|\bwhich\s+commands\b|\bwhat\s+are\s+the\s+(?:\w+\s+)?\w+s\b",
    re.IGNORECASE)



# "What is X?", "What are Xs?", "What does X mean?", "Define X": X, unless X is a relation ("the
# difference between", "the role of"), which no sentence of the form "X is ..." answers.
_WHAT_IS = re.compile(r"^\s*(?:(?:so|ok|okay|and|but|then|hey|hi)\b[\s,]*)?"
                      r"(?:(?:what|who)\s+(?:exactly\s+|really\s+)?(?:is|are|was|were)|what's|whats)\s+"
                      r"(?:exactly\s+|really\s+|actually\s+)?(?:an?\s+|the\s+)?(?P<x>[^?,]+?)\s*(?:[?,].*)?$"
                      r"|^\s*what\s+does\s+(?:an?\s+|the\s+)?(?P<y>[^?,]+?)\s+mean"
                      r"|^\s*define\s+(?:an?\s+|the\s+)?(?P<z>[^?,]+?)\s*\??\s*$", re.IGNORECASE)
_MAX_TERM_WORDS = 5
# A definition: the term as the sentence's subject, then a defining verb.
# Not "X is <adjective>": "Physical AI is computationally demanding ..." says how X is, not what.
_DEFINING = re.compile(r"^(?P<subject>[^;:]{1,100}?)\s+(?:is\s+(?:an?|the|one|any|what|how|where|when|that|"
                       r"defined|called|known)\b|are|refers?\s+to|means|"
                       r"can\s+be\s+defined\s+as|describes|denotes|represents)\s", re.IGNORECASE)
# The question asks for code or configuration, so a code block is part of the answer.
_CODE_QUESTION = re.compile(r"\b(?:code|configur\w*|config|commands?|files?|script|syntax|snippet|"
                            r"launch\s+files?|install\w*|set\s+up|setup|docker|pull|"
                            # A formula the book sets as a block: "How is the ZMP computed?"
                            r"formulas?|equations?|computed|calculated?|derived)\b"
                            # "How do I ...": a how-to, which a block answers when it names what the question asks
                            # about (`QuestionShape.code_terms`).
                            r"|(?P<how>\bhow\s+(?:do|can|should|would)\s+(?:i|you|we|one)\b|\bhow\s+to\b)",
                            re.IGNORECASE)


# "can you summarize module 3", "tl;dr of the style guide", "what's the essentials tutorial part 6 about":
# the subject after the asking, or between "what's" and "about" ending its clause ("what is the capstone
# project about, short version").
_SUMMARY = re.compile(r"^.*?\b(?:summari[sz]e|summary\s+of|sum\s+up|tl;?\s*dr(?:\s+of)?|gist\s+of|recap\s+of|"
                      r"overview\s+of)\b(?P<s>.+)$|^\s*what(?:'s|s|\s+is|\s+does)\s+(?P<t>.+?)\s+(?:about|cover)"
                      r"\s*(?:[,;?!.:-].*)?$", re.IGNORECASE)


def summary_subject(question: str) -> str:
    """What a request for a summary names ("module 3 for me" of "can you summarize module 3 for me"), else ''."""
    m = _SUMMARY.match(" ".join(question.split()))
    return (m.group("s") or m.group("t")).strip(" ?.!") if m else ""


def what_is(question: str) -> str:
    """The X of "What is X?", "What does X mean?", "Define X", as written up to a comma or the question mark;
    '' for another question."""
    m = _WHAT_IS.match(" ".join(question.split()))
    return next(g for g in m.group("x", "y", "z") if g) if m else ""


def defined_term(question: str) -> str:
    """The X of "What is X?" up to its first function word, else ''."""
    term = what_is(question)
    # "What is X in Y?" still asks what X is: X ends at its first function word ("the ZMP in bipedal walking");
    # "the role of X" is then "role", which no sentence of the book defines as the subject of its question.
    words = tokens(term)
    end = next((i for i, t in enumerate(words) if is_function_word(t.low)), len(words))
    term = term[:words[end - 1].end] if end else ""
    if len(term.split()) > _MAX_TERM_WORDS or not tokenize(term):
        return ""
    return term


def defines(sentence: str, term: str) -> bool:
    """Whether `sentence` defines `term`: the term (its head word, and at least half of its words) in
    the subject before a defining verb ("Isaac Robot Operating System (ROS) is a collection ..."), or
    the term followed by an appositive that says what it is ("They use costmaps, grids in which ..."), or
    a definition line that names the term before its colon ("Enactivism: Intelligence emerges from ...")."""
    wanted = tokenize(term)
    head, colon, _ = sentence.partition(":")
    if colon and wanted and tokenize(head) == wanted:
        return True
    m = _DEFINING.match(sentence)
    if m is None:  # most sentences: no need to read the term
        return _appositive(sentence, term)
    if not wanted:
        return False
    subject = set(tokenize(m.group("subject")))
    named = wanted[-1] in subject and 2 * len(subject & set(wanted)) >= len(set(wanted))
    return named or _appositive(sentence, term)


# After the term (and its acronym): a comma, or a colon after a short aside, then a noun phrase of up
# to four words and a relative word: "costmaps, grids in which ...", "the zero moment point (ZMP),
# introduced by ... in the late 1960s: the point on the ground where ...". No "and"/"or" in the noun
# phrase: "sensors, actuators and controllers that ..." is a list, not an appositive.
_APPOSITION = (r"(?:\s*\([^()]{1,40}\))?(?:,\s+|(?:,[^:;.()]{0,80})?:\s+)(?:an?\s+|the\s+)?"
               r"(?:(?!and\b|or\b)[\w-]+\s+){1,4}?(?:in\s+which|on\s+which|that|which|where|whose|wherein)\b")


def _appositive(sentence: str, term: str) -> bool:
    words = term.split()
    if not words:
        return False
    named = r"[\s-]+".join(re.escape(w) + r"\w*" for w in words)
    return re.search(rf"\b{named}{_APPOSITION}", sentence, re.IGNORECASE) is not None


@dataclass(frozen=True, slots=True)
class Unknown:
    """Question words the book never uses (stems). `named` are the names among them: proper nouns, acronyms,
    versions, and words no English lexicon holds ("svelte", "kalibr"); the others are a reader's own words."""

    words: list[str]
    named: list[str]
    total: int


def typed_words(text: str) -> list[str]:
    """The words of `text` as a reader typed them ("ROS2", "co-simulaton", "18.04")."""
    return [t.text for t in tokens(text)]


def respell(question: str, hits: Sequence[SearchHit], vocabulary: Callable[[], Collection[str]] = frozenset) -> str:
    """`question` with each misspelt word replaced by the word it misspells (`text.lexicon.closest`): a word of
    the retrieved text or a function word ("shoud" -> "should"), else of the whole book (`vocabulary`, read
    only then): "reducr" -> "reducer", "diffrence" -> "difference". A word the book or English knows is kept as
    typed: "really" is a reader's word, not a typo."""
    seen = {w.lower() for hit in hits for w in typed_words(" ".join([hit.text, *hit.payload.heading_path]))}
    seen |= STOP_WORDS
    out = question
    # A hyphenated word is respelt part by part: "co-simulaton" is "co-simulation" when the book says so.
    words = [p for w in typed_words(question) for p in (w.split("-") if "-" in w else (w,))]
    for word in dict.fromkeys(words):
        lower = word.lower()
        if lower in seen or not lower.isalpha() or english(lower):
            continue
        found = closest(lower, seen)
        if found is None:
            book = vocabulary()
            found = None if lower in book else closest(lower, book)
        # "teleoperated" where the book says "teleoperation": another form of a book word, not a typo.
        if found and tokenize(found) != tokenize(lower):
            out = re.sub(rf"\b{re.escape(word)}\b", found, out)
    return out


def searchable(question: str, vocabulary: Callable[[], Collection[str]]) -> str:
    """`question` as the reader meant it, for the search ("co-simulaton" finds nothing in BM25 and little in
    MiniLM): respelt with the book's words; as typed when they cannot be read, so that the search which follows
    reports what is wrong with the store."""
    try:
        return respell(question, (), vocabulary)
    except errors.RetrievalError:
        return question


def title_words(text: str) -> tuple[set[str], set[str]]:
    """Stems and numbered names of a subject, a title or a path ("module-3-digital-twin/index.md" -> {"modul",
    "digit", "twin", "index"}, {"modul 3"}): see `numbered_names`."""
    tokens = _title_tokens(text)
    return set(tokenize(" ".join(t for t in tokens if not t.isdigit()))), _numbered(tokens)


def numbered_names(text: str) -> set[str]:
    """The numbered names of `text` ("modul 3" of "how long is the module 3 lab?"): a number belongs to the word
    before it, so "module 1 / chapter 3" does not name "module 3"; a number with no word before it stands alone."""
    return _numbered(_title_tokens(text))


def _title_tokens(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]+|\d+", re.sub(r"[/_.-]+", " ", text))


def _numbered(tokens: list[str]) -> set[str]:
    numbered = set()
    for i, token in enumerate(tokens):
        if token.isdigit():
            word = tokenize(tokens[i - 1]) if i and not tokens[i - 1].isdigit() else []
            numbered.add(f"{word[0]} {token}" if word else token)
    return numbered


def named_terms(question: str) -> list[str]:
    """Stems of what the question names: capitalised words not opening the question, acronyms,
    versions and model numbers."""
    names: list[str] = []
    for at, word in enumerate(typed_words(question)):
        # Versions and model numbers ("18.04", "PX4", "RT-2") name things; years and decades do not.
        has_digit = any(c.isdigit() for c in word) and len(word) >= 2 and not _YEAR_LIKE.fullmatch(word)
        is_acronym = len(word) >= 2 and sum(c.isupper() for c in word) >= 2
        is_name = word[0].isupper() and at > 0
        if has_digit or is_acronym or is_name:
            names.append(word)
    stems: list[str] = []
    for name in names:
        for stem in tokenize(name):
            if stem not in stems:
                stems.append(stem)
    return stems


@dataclass(frozen=True, slots=True)
class QuestionShape:
    """What kind of answer a question asks for: a list, and the parts a complete answer covers."""

    wants_list: bool
    parts: tuple[str, ...]
    term: str = ""  # the X of "What is X?": the answer leads with the book's definition of X
    wants_code: bool = False  # code blocks belong in the answer only then
    # A how-to's words: a code block that names one of them belongs in its answer.
    code_terms: frozenset[str] = frozenset()

    @classmethod
    def of(cls, question: str) -> QuestionShape:
        q = " ".join(question.split())
        parts: list[str] = []
        for pattern in _TWO_PART:
            m = pattern.search(q)
            if m:
                parts = [m.group(1), m.group(2)]
                break
        if not parts:
            clauses = [c for c in _CLAUSE_BREAK.split(q) if len(tokenize(c)) >= 1]
            if len(clauses) >= 2:
                parts = clauses
        found = list(_CODE_QUESTION.finditer(q))
        wants_code = any(m.group("how") is None for m in found)  # code asked for by name, not a how-to alone
        return cls(wants_list=bool(_LIST_QUESTION.search(q)), parts=tuple(parts), term=defined_term(q),
                   wants_code=wants_code,
                   code_terms=frozenset(asked_words(q)) if found and not wants_code else frozenset())


# "When is an action the right tool?" and the heading "When to Use Actions": the question word a stop list
# drops is what the heading and the question share. Only these: "what" opens most questions and headings.
_INTERROGATIVE = re.compile(r"^\s*(?:(?:so|ok|okay|and|but|then)\b[\s,]*)?(?:\d+(?:\.\d+)*\.?\s+)?"
                            r"(when|why|how|where)\b", re.IGNORECASE)


def asked_words(text: str) -> set[str]:
    """The stemmed content words of a question or heading (`tokenize`), with the question word it opens
    with ("when", "why", "how", "where") as a word of its own, `?when`: a heading phrased as the question
    answers it. A verdict's word is its facet (`~cons` for "downsides" and "Disadvantages")."""
    words = set(tokenize(without_facet_words(text))) | facets(text)
    opener = _INTERROGATIVE.match(text)
    return words | {f"?{opener.group(1).lower()}"} if opener else words

