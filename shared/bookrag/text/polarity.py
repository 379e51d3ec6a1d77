"""Does a claim reverse the passage it rests on? Word overlap cannot see "little tooling support" against
"extensive tooling support": this check looks for the words that flip a statement.

`reverses(claim, passage)` is True when
- the claim negates a term the passage states plainly ("no role" against "a crucial role"), or states
  plainly the first term the passage negates ("needs rhythmic inputs" against "without rhythmic
  inputs"); a negator ("not", "no", "never", "cannot", "without", "few" but not "a few", "ignores", "prevents", ...)
  reaches up to three content words, up to the next punctuation mark; one that reaches a restrictor or a
  comparative ("not only", "not ... alone", "no less than") narrows the statement and is not read as one, nor
  is one in a condition that a comma closes ("when none of these fit, ..."); or
- the claim uses a word whose antonym the passage uses (a curated list of general English pairs: "extensive" /
  "little", "increase" / "decrease", "required" / "optional", "tightly" / "loosely", ...), and not the word
  itself; or
- the claim prefixes a passage's word with "un", "in", "im", "non", "dis" or "a", or the passage the claim's
  ("unstable" against "stable"), in any of the word's forms ("asynchronously" against "synchronous").

`aligned_polarity(claim, passages)` reads polarity where the claim and the book say the same thing: each
clause of the claim is aligned with the passage clause that shares most of its terms (at least two), and the
reading is whether one of the pair holds a negator the other lacks. It counts no words against a list of
pairs, so it means the same in any book; the fitted verdict (`answerers.grounding_score`) weighs it.

Its limits, measured on the grounding sets (benchmarks/grounding-after.md): a swap of roles ("Unity is
complex, Gazebo easy" against a table saying the reverse) uses the same words and passes; an antonym pair
missing from the list passes; a claim that merges a negated passage with a plain one is compared with
the passages that support it together (the caller passes them), so a negator in either one counts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

from bookrag.text.claims import TermIndex, word_term

__all__ = ["ANTONYMS", "NEGATORS", "Clause", "aligned_polarity", "clauses", "reverses", "swaps"]

NEGATORS = frozenset("""
    not no never cannot can't won't don't doesn't didn't isn't aren't wasn't weren't shouldn't couldn't
    mustn't hasn't haven't without none nor neither nothing nobody lack lacks lacking lacked absent
    unable fail fails failed ignore ignores ignored few little less rarely seldom hardly barely
    prevent prevents prevented preventing avoid avoids avoided avoiding
""".split())  # noqa: SIM905 - a word list reads better as text

_PAIRS = """
    extensive:little extensive:limited extensive:minimal rich:poor good:poor good:bad excellent:poor well:poorly
    increase:decrease increase:reduce increases:decreases increases:reduces increasing:decreasing
    increased:reduced higher:lower high:low more:less most:least larger:smaller large:small faster:slower
    fast:slow quick:slow easy:hard easy:difficult easier:harder easier:more-difficult simple:complex
    simpler:complex simpler:more-complex simplest:most-complex required:optional require:optional
    requires:optional mandatory:optional always:never always:rarely before:after older:newer old:new
    stable:unstable robust:fragile robustness:fragility strong:weak accurate:inaccurate precise:imprecise
    cheap:expensive cheaper:more-expensive lower-cost:expensive enable:prevent enables:prevents allow:prevent
    allows:prevents continue:stop continues:stops keep:stop support:lack supports:lacks safe:dangerous
    safe:unsafe safer:riskier prefer:avoid preferred:avoided recommended:discouraged recommend:discourage
    open:closed open-source:proprietary centralized:distributed central:distributed synchronous:asynchronous
    sync:async blocking:non-blocking static:dynamic local:remote online:offline first:last maximum:minimum
    max:min upper:lower inside:outside within:outside above:below gain:lose improve:degrade improves:degrades
    improve:worsen better:worse best:worst efficient:inefficient efficiency:inefficiency crucial:irrelevant
    important:unimportant important:irrelevant essential:optional match:differ matches:differs same:different
    light:heavy lightweight:heavy lighter:heavier deterministic:non-deterministic success:failure
    succeed:fail tight:loose tightly:loosely coupled:decoupled explicit:implicit explicitly:implicitly
    manual:automatic manually:automatically allowed:forbidden allow:forbid permitted:forbidden include:exclude
    includes:excludes accept:reject accepts:rejects visible:hidden public:private internal:external
    inner:outer encourage:discourage encouraged:discouraged add:remove adds:removes added:removed
    enable:disable enabled:disabled true:false early:late earlier:later start:end begin:end
    single:multiple shallow:deep narrow:broad specific:general strict:lenient strict:loose
    positive:negative isolated:shared dedicated:shared separate:shared often:rarely often:seldom
    sometimes:always partial:complete partially:fully present:absent analytically:numerically
"""
ANTONYMS: dict[str, frozenset[str]] = {}
for _pair in _PAIRS.split():
    _a, _b = _pair.split(":")
    ANTONYMS[_a] = ANTONYMS.get(_a, frozenset()) | {_b}
    ANTONYMS[_b] = ANTONYMS.get(_b, frozenset()) | {_a}

_TOKEN = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*|[.,;:!?()|]")
_SCOPE = 3  # content words a negator reaches, up to the next punctuation mark or contrast
_CONTRAST = frozenset({"but", "yet", "while", "whereas", "although", "though"})
_STOPS = frozenset(".,;:!?()|") | _CONTRAST | {"rather", "instead", "and", "or"}
_WIDE = 6  # how far a claim's own negator reaches when the book negates a term the claim states
# Words whose negation narrows a statement (`_softened`): general English restrictors and comparatives.
_RESTRICTORS = frozenset("""only just merely simply solely exclusively alone all every everything everyone always
    necessarily""".split())  # noqa: SIM905 - a word list reads better as text
_COMPARATIVES = frozenset({"less", "more", "fewer"})
_CONDITIONS = frozenset({"if", "when", "whenever", "unless", "whether", "once"})
_SOFT = frozenset({"few", "little"})  # "a few minutes" is not a negation; "few tools" is
# A negator before a word that negates too says the plain thing ("don't forget X": remember X).
_UNDONE = frozenset("""forget forgets forgetting ignore ignores ignoring neglect neglects overlook overlooks
    miss misses hesitate hesitates fail fails lose loses""".split())  # noqa: SIM905 - a word list reads better as text


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower().replace("’", "'"))


def _is_negator(tokens: list[str], i: int) -> bool:
    word = tokens[i]
    negates = word in NEGATORS or word.endswith("n't")
    if negates and (_softened(tokens, i) or _conditional(tokens, i)):
        return False
    if word in _COMPARATIVES and i > 0 and _softened(tokens, i - 1):
        return False  # the "less" of "no less than"
    if tokens[i + 1:i + 2] and tokens[i + 1] in _UNDONE:
        return False
    if word in _UNDONE and i > 0 and (tokens[i - 1] in NEGATORS or tokens[i - 1].endswith("n't")):
        return False
    if word in ("instead", "rather") and tokens[i + 1:i + 2] in (["of"], ["than"]):
        return True  # "links files instead of copying them" negates the copying
    if word in _SOFT:
        return i == 0 or tokens[i - 1] != "a"
    return negates


def _softened(tokens: list[str], i: int) -> bool:
    """A negator that reaches a restrictor or a comparative narrows a statement rather than reversing it:
    "doesn't rely on Wi-Fi alone", "not only", "isn't responsible for everything" (part of it still holds),
    "no less than 100 Hz" (at least 100 Hz)."""
    ahead = tokens[i + 1:i + 3]
    if len(ahead) == 2 and ahead[1] == "than" and (ahead[0] in _COMPARATIVES or ahead[0].endswith("er")):
        return True
    reached = 0
    for word in tokens[i + 1:]:
        if word in _STOPS or reached > _SCOPE:
            return False
        if word in _RESTRICTORS:
            return True
        reached += bool(word_term(word))
    return False


def _conditional(tokens: list[str], i: int) -> bool:
    """A negator in the condition of a clause ("when none of these fit, ...", "if it doesn't respond, ...")
    states the case the rest is about, not that the case holds."""
    for word in reversed(tokens[:i]):
        if word in _STOPS:
            return False
        if word in _CONDITIONS:
            return any(t == "," for t in tokens[i + 1:])  # the condition ends before what it conditions
    return False


def _scopes(tokens: list[str], reach: int = _SCOPE) -> tuple[set[str], set[str], set[str]]:
    """(terms a negator reaches, each negator's head, terms no negator reaches). A negator's head is
    the first term it reaches that the text does not also state plainly ("rhythmic outputs without
    rhythmic inputs": "inputs")."""
    reaches: list[list[str]] = []
    plain: set[str] = set()
    i = 0
    while i < len(tokens):
        if _is_negator(tokens, i):
            j, scope = i + 1, list[str]()
            while j < len(tokens) and len(scope) < reach and (tokens[j] not in _STOPS or reach > _SCOPE):
                term = word_term(tokens[j])
                if term and not _is_negator(tokens, j):
                    scope.append(term)
                j += 1
            reaches.append(scope)
            i = j
            continue
        term = word_term(tokens[i])
        if term:
            plain.add(term)
        i += 1
    heads = {next((t for t in scope if t not in plain), scope[0]) for scope in reaches if scope}
    return {t for scope in reaches for t in scope}, heads, plain


class _Passage(NamedTuple):
    tokens: tuple[str, ...]
    negated: frozenset[str]
    heads: frozenset[str]
    stated: frozenset[str]
    words: frozenset[str]


@lru_cache(maxsize=2048)
def _passage(text: str) -> _Passage:
    """A passage as `reverses` reads it: a unit of the book is read once, not again for every sentence (and,
    in a stream, every growing draft) that rests on it."""
    tokens = _tokens(text)
    negated, heads, stated = _scopes(tokens)
    return _Passage(tuple(tokens), frozenset(negated), frozenset(heads), frozenset(stated), frozenset(_words(tokens)))


def reverses(claim: str, passages: Sequence[str]) -> bool:
    """True when `claim` says the opposite of `passages`, the units that support it (see the module's
    docstring)."""
    said = _tokens(claim)
    negated, _, stated = _scopes(said)
    # "a shallow copy, not a deep copy": a term the claim also states plainly is the contrast's common ground; what
    # it negates is the rest ("deep").
    negated -= _agreeing(claim, passages) | stated
    mine = TermIndex(stated)
    widely_negated = TermIndex(_scopes(said, _WIDE)[0])
    read = [_passage(p) for p in passages]
    book_negated = TermIndex(t for p in read for t in p.negated)
    book_stated = TermIndex(t for p in read for t in p.stated)
    # The claim negates what the book states plainly (and nowhere negates), or states plainly what the
    # book negates (and nowhere states plainly).
    if any(book_stated.has(t) and not book_negated.has(t) for t in negated):
        return True
    if any(mine.has(t) and not widely_negated.has(t) and not book_stated.has(t)
           for p in read for t in p.heads):
        return True
    words = _words(said)
    everywhere = set().union(*(p.words for p in read))
    # An antonym counts only where the book never uses the claim's own word near it: a passage that
    # compares ("open-loop ... closed-loop") is not reversed by a claim about one side.
    roots = {h[:5] for h in everywhere}
    own = {w for w in words if w[:5] not in roots}
    heard_roots = {w[:5] for w in everywhere - words}
    for word in own:
        if any(o[:5] in heard_roots for o in ANTONYMS.get(word, frozenset()) - words):
            return True
    # A prefix that negates: the claim's ("unstable" against "stable") or the book's ("Unlike ROS 1" against "Like").
    if _prefix_negated(words, everywhere) or _prefix_negated(everywhere, words):
        return True
    return _order_reversed(said, [p.tokens for p in read])


# A negating prefix, read by what it leaves: no list of pairs, the other side's own word tells. The same word
# ("stable" in "unstable", "like" in "unlike") from 4 letters on; its stem ("asynchronously" against "synchronous",
# "inaccurate" against "accuracy") and the "a" prefix from 6, short enough words being unrelated words' tails
# ("across" is not "a" + "cross", "dispatch" not "dis" + "patch").
_PREFIXES = ("non-", "non", "un", "in", "im", "dis", "a")
_MIN_WORD, _MIN_STEM = 4, 6


def _prefix_negated(said: set[str], heard: set[str]) -> bool:
    """True when `said` uses a prefixed word whose rest `heard` states, and neither side uses the other side's
    form too (a passage that compares both is not reversed by a claim about one)."""
    said_terms = {word_term(w) for w in said}
    heard_terms = {word_term(w) for w in heard}
    for word in said - heard:
        if word_term(word) in heard_terms:
            continue
        for prefix in _PREFIXES:
            rest = word[len(prefix):]
            if not word.startswith(prefix) or len(rest) < _MIN_WORD or rest in said:
                continue
            if prefix != "a" and rest in heard:
                return True
            term = word_term(rest)
            if len(rest) >= _MIN_STEM and term and term in heard_terms and term not in said_terms:
                return True
    return False


_PREFERS = re.compile(r"([a-z][a-z-]+) (?:over|rather than|instead of|before) ([a-z][a-z-]+)")


def _order_reversed(claim: list[str], passages: Sequence[Sequence[str]]) -> bool:
    """"accuracy over appearance" against "appearance over accuracy"."""
    said = {(a[:5], b[:5]) for a, b in _PREFERS.findall(" ".join(claim))}
    heard = {(a[:5], b[:5]) for p in passages for a, b in _PREFERS.findall(" ".join(p))}
    return any((b, a) in heard and (b, a) not in said for a, b in said)


_NOT_NAMES = frozenset({"other", "others", "all", "any", "some", "most", "feature", "aspect"})
_CELL = re.compile(r"([A-Za-z][\w /.-]*?): ([^;()]+)")
_CLAUSE = re.compile(r"\b(?:but|whereas|while|versus|vs|compared with|compared to|unlike)\b|[;]", re.IGNORECASE)


def swaps(claim: str, row: str) -> bool:
    """True when `claim` gives a table row's value to the wrong column ("Unity makes asset creation
    complex, whereas Gazebo makes it easy" against "Asset Creation (Unity: Easy; Gazebo: Complex)")."""
    cells = {name.strip().split()[0].lower(): value.strip().lower() for name, value in _CELL.findall(row)
             if name.strip().split()[0].lower() not in _NOT_NAMES}
    if len(cells) < 2:
        return False
    label = {w[:5] for w in _tokens(row.split("(", 1)[0]) if w[0].isalpha()}
    for clause in _CLAUSE.split(claim):
        words = [w.removesuffix("'s") for w in _tokens(clause)]
        # A yes/no row ("Blocking (Topics: No; ...)"): the claim gives its label to a column that says No.
        said = [i for i, w in enumerate(words) if w[:5] in label]
        if said and not any(_is_negator(words, i) for i in range(len(words))):
            named = [w for w in words[:said[0]] if w in cells]
            if named and cells[named[-1]].split()[0] in ("no", "n/a"):
                return True
        for i, word in enumerate(words):
            owners = [c for c, v in cells.items() if word == v or word in v.split()]
            if not owners or len(set(cells.values())) < 2:
                continue
            before = [w for w in words[:i] if w in cells]
            after = [w for w in words[i + 1:] if w in cells]
            subject = before[-1] if before else after[0] if after else ""
            if subject and subject not in owners:
                return True
    return False


def _words(tokens: Sequence[str]) -> set[str]:
    """Words, and a hyphenated word's parts ("simpler-contact" reads as "simpler" too)."""
    words = {w for w in tokens if w[0].isalpha()}
    return words | {part for w in words for part in w.split("-")}


_CLAUSE_STOPS = frozenset(".;:!?()|") | _CONTRAST
_ALIGNED = 2  # terms a claim clause shares with a passage clause to be read as saying the same thing


class Clause(NamedTuple):
    terms: TermIndex
    negated: bool  # it holds a negator ("not", "without", "instead of", ...)
    negated_terms: frozenset[str] = frozenset()  # the terms its negators reach ("copying" of "instead of copying")
    after_negator: frozenset[str] = frozenset()  # every term after its first negator, to the clause's end


def clauses(text: str) -> tuple[Clause, ...]:
    """`text` split at punctuation and contrast words ("but", "whereas", ...): each clause's terms and
    whether it holds a negator."""
    tokens = _tokens(text)
    out: list[Clause] = []
    start = 0
    for end in [*(i for i, t in enumerate(tokens) if t in _CLAUSE_STOPS), len(tokens)]:
        part, start = tokens[start:end], end + 1
        terms = [t for t in (word_term(w) for w in part) if t]
        if terms:
            negated = any(_is_negator(part, i) for i in range(len(part)))
            out.append(Clause(TermIndex(terms), negated, frozenset(_scopes(part)[0]) if negated else frozenset(),
                              frozenset(_scopes(part, len(part))[0]) if negated else frozenset()))
    return tuple(out)


@lru_cache(maxsize=4096)
def _clauses_of(passage: str) -> tuple[Clause, ...]:
    return clauses(passage)  # a unit of the book is split once, not for every sentence that rests on it


def _aligned(clause: Clause, book: Sequence[Clause]) -> Clause | None:
    """The passage clause `clause` says the same thing as: the one sharing most of its terms, at least `_ALIGNED`."""
    if not book:
        return None
    shared = [sum(b.terms.has(t) for t in clause.terms.terms) for b in book]
    best = max(range(len(book)), key=shared.__getitem__)
    return book[best] if shared[best] >= _ALIGNED else None


def _agreeing(claim: str, passages: Sequence[str]) -> set[str]:
    """The terms the claim negates that its aligned passage clause holds after a negator too: "isn't strictly tied to
    any database" against "is not strictly tied to any particular database implementation" says the same thing,
    however far each negator reaches; "less efficient" against "contributes to efficient movement without
    requiring complex control" does not."""
    book = [c for p in passages for c in _clauses_of(p)]
    out: set[str] = set()
    for clause in clauses(claim):
        if clause.negated and (aligned := _aligned(clause, book)) is not None and aligned.negated:
            after = TermIndex(aligned.after_negator)
            out |= {t for t in clause.negated_terms if after.has(t)}
    return out


def aligned_polarity(claim: str, passages: Sequence[str]) -> tuple[float, float]:
    """(claim only, book only): the share of the claim's negated clauses whose aligned passage clause holds no
    negator ("X is not needed" against "X is needed"), and 1.0 when a claim clause without a negator is
    aligned with a passage clause that negates one of its terms ("approach the robot" against "do not approach
    the robot"; not "Python files are linked" against "links Python files instead of copying them").
    A clause aligned with nothing (it shares fewer than two terms with every passage clause) counts for
    neither: a faithful sentence's own "so you don't have to ..." usually explains, in words the book does
    not use there."""
    book = [c for p in passages for c in _clauses_of(p)]
    if not book:
        return 0.0, 0.0
    negated = unmatched = 0
    book_only = 0.0
    for clause in clauses(claim):
        negated += clause.negated
        aligned = _aligned(clause, book)
        if aligned is None:
            continue
        if clause.negated and not aligned.negated:
            unmatched += 1
        elif not clause.negated and any(clause.terms.has(t) for t in aligned.negated_terms):
            book_only = 1.0  # it states what the book negates there, not the half the book affirms
    return (unmatched / negated if negated else 0.0), book_only
