"""Follow-ups: what a question means given the earlier turns (selections: `answering.selection`).

Follow-ups. "What are its downsides?" searched alone finds nothing: it has no subject. Before retrieval
a follow-up becomes a standalone question:
- offline (`resolve_follow_up`, deterministic): the subject of the most recent earlier question that
  has one (X of "What is X?" as a whole, else its best run of content words, preferring named terms:
  "Gazebo physics engine"; a turn that itself referred back keeps the subject before it) replaces the
  follow-up's pronouns and anaphoric "one(s)" ("its downsides" -> "Gazebo physics engine's
  downsides"), takes the place of the earlier subject in an elliptical switch ("What about Unity?" ->
  the earlier question about Unity), or is appended to a question that has no subject of its own
  ("What are the downsides?"); "Why?" and "one into the other" take the last question whole.
  A question with its own subject and no pronoun is a new topic and is left alone.
- with an LLM answerer, one short call to the same model (`answering.rewriters`).
When the earlier question asked the book to pick something ("Which physics engine is the most
accurate?"), a pronoun means what the answer picked ("its downsides" -> "DART's downsides";
`answer_focus`). A refused turn is skipped when an answered one has a subject (`answered`). A
question about a selection uses the earlier turns only when it refers back to them (`selection.about_selection`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bookrag.answering.answerers.base import is_refusal_text
from bookrag.answering.answerers.questions import what_is
from bookrag.answering.question_words import (
    DEMONSTRATIVES,
    GENERIC,
    POSSESSIVES,
    QUESTION_WORDS,
    SUBJECT_PRONOUNS,
    VERBS,
    Tok,
    is_function_word,
    is_named,
    is_participle,
    tokens,
)
from bookrag.domain.conversation import Turn

# --- offline follow-up resolution -----------------------------------------------------------------

# "What is/are X?" (`questions.what_is`): the definition question's subject is X as a whole ("week 5 of the
# capstone project", "actions in ROS 2"), up to a participle or verb ("What is a Kalman filter used for?").
_MAX_DEFINED_TOKENS = 8
# "And for nonlinear systems?": a phrase opening with one of these narrows the earlier question; it is
# not a new subject.
_QUALIFIERS = frozenset({"for", "in", "on", "at", "with", "without", "during", "under", "over", "inside", "outside",
                         "within", "across", "after", "before", "near", "beyond"})
_SWITCH = re.compile(r"^\s*(?:and\s+)?(?:what|how)\s+about\s+(.+?)\s*[?.!]*\s*$|^\s*and\s+(.+?)\s*\?+\s*$",
                     re.IGNORECASE)


def _defined(question: str) -> str:
    """X of "What is X?" (`questions.what_is`), or "" when the question is not one or X is generic
    ("What is the difference between ...": its parts are the subject, not "difference")."""
    rest = what_is(question)
    if not rest:
        return ""
    toks = tokens(rest)
    kept: list[Tok] = []
    for i, tok in enumerate(toks):
        verb = tok.low in VERBS and i < len(toks) - 1  # "model predictive control?": a noun at the end
        clause = bool(kept) and "," in rest[kept[-1].end:tok.start]
        if tok.low in QUESTION_WORDS or verb or is_participle(tok) or clause:
            break
        kept.append(tok)
    while kept and is_function_word(kept[-1].low):
        kept.pop()  # "week 5 of the capstone project about"
    if not kept or len(kept) > _MAX_DEFINED_TOKENS or is_function_word(kept[0].low) \
            or any(t.low in GENERIC for t in kept):
        return ""  # "system requirements for running Gazebo": its subject (Gazebo) is found the usual way
    return rest[kept[0].start:kept[-1].end]


def subject_of(question: str) -> str:
    """The question's subject: X of a definition question ("What is X?"), else its best run of adjacent
    content words (named terms first, then the longest run), as written; "" when it has none."""
    defined = _defined(question)
    if defined:
        return defined
    toks = tokens(question)
    runs: list[list[tuple[int, Tok]]] = []
    current: list[tuple[int, Tok]] = []
    for i, tok in enumerate(toks):
        if is_function_word(tok.low) or (tok.low in (GENERIC | VERBS) and not is_named(tok, i == 0)):
            if current:
                runs.append(current)
            current = []
        else:
            current.append((i, tok))
    if current:
        runs.append(current)
    if not runs:
        return ""
    best = max(runs, key=lambda run: (any(is_named(t, i == 0) for i, t in run), len(run), -run[0][0]))
    named = [n for n, (i, t) in enumerate(best) if is_named(t, i == 0)]
    if named:  # "install ROS 2 Humble": the verb before the name is not the subject
        # but a bare number names the word before it ("module 1 practical lab", "week 5")
        first = named[0] - (named[0] > 0 and best[named[0]][1].text.isdigit())
        best = best[first:]
    while len(best) > 1 and is_participle(best[-1][1]):
        best = best[:-1]  # "LQR controller obtained", "Isaac Sim built": nor is a participle after it
    return question[best[0][1].start:best[-1][1].end]


def _own_content(toks: list[Tok]) -> list[Tok]:
    return [t for i, t in enumerate(toks)
            if not is_function_word(t.low) and (t.low not in GENERIC or is_named(t, i == 0))]


def earlier_subject(history: Sequence[Turn]) -> tuple[str, str, str]:
    """(subject, the question it came from, the entity its answer picked) of the most recent earlier turn
    that has a subject. A turn that referred back by a pronoun ("Does it apply the whole sequence?") kept
    the subject before it: its rewritten question's longest run ("whole control sequence") is not the
    conversation's subject."""
    found = _subject_turn(history)
    if found is None:
        return "", "", ""
    subject, turn = found
    return subject, turn.searched, answer_focus(turn.searched, turn.answer)


def _subject_turn(history: Sequence[Turn]) -> tuple[str, Turn] | None:
    """The subject and the turn of `earlier_subject`, without reading its answer."""
    for at in range(len(history) - 1, -1, -1):
        turn = history[at]
        if at and _substitute(turn.question, "X") is not None:
            continue
        subject = subject_of(turn.searched)
        if subject:
            return subject, turn
    return None


# "Which engine ...", "What tool ...", "Who ...", "What is the most accurate engine?": the question asks the
# book to pick something; its answer names it.
_PICKING = re.compile(r"^\s*(?:which|who|what\s+(?:is|are)\s+the\s+(?:most|best|least|recommended|default|preferred)"
                      r"|what\s+(?!(?:is|are|was|were|does|do|did|can|could|should|would|will|has|have|happens?)\b)"
                      r"[a-z])", re.IGNORECASE)
# An answer that opens by naming what it is about: "CPGs are neural circuits ...", "The ZMP is ...".
_LEAD_NAME = re.compile(r"^(?:The\s+)?(?P<name>[A-Z][A-Za-z0-9+#.-]*[A-Z0-9][A-Za-z0-9+#.-]*s?)\s+(?:is|are)\s")
_CALLED = re.compile(r"\b(?:called|named|known\s+as|term\s+for)\b", re.IGNORECASE)
_MAX_KIND_WORDS = 2  # "Which control method finds ...": the kind, not the clause after it
_COPULA = re.compile(r"\b(?:is|are|was|were)\s+$", re.IGNORECASE)  # right before the question's subject
# An answer's items: its sentences, lines, and list items the extractive answer joins with "; ".
_ITEM_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+|;\s+(?=[A-Z0-9*#`])")
_LABEL = re.compile(r"^[\s*#>`-]*(?P<label>[A-Z0-9][\w+#.-]*(?:\s+[A-Z0-9][\w+#.-]*){0,3})\**\s*(?:[—–:(]|-\s)")
_MARKERS = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")


def _stem(low: str) -> str:
    return low[:5]


def answer_focus(question: str, answer: str) -> str:
    """The entity `answer` picked when `question` asked the book to pick one ("Which physics engine is the
    most accurate?" -> "DART"), else "". Only when the kind asked for is generic and singular: "Which
    Unity release ..." stays about Unity, "Which engines ..." gets a list. The answer's item that holds
    most of the question's other words gives it: its label ("DART (Dynamic ...): ...") or first name,
    followed by the kind ("DART physics engine"). A question whose subject has a name keeps it as the
    referent."""
    if not answer or _is_refusal(answer):
        return ""
    named_lead = _LEAD_NAME.match(_MARKERS.sub("", answer))
    toks = tokens(question)
    asked = {t.low for t in toks}
    if named_lead and (_PICKING.match(question) or _CALLED.search(question)) \
            and not asked & {t.low for t in tokens(named_lead.group("name"))}:
        return named_lead.group("name")  # "What neural circuits ...?" -> "CPGs are neural circuits ..."
    if not _PICKING.match(question):
        return ""
    at = next((i for i, t in enumerate(toks) if not is_function_word(t.low)), len(toks))
    kind: list[Tok] = []
    for tok in toks[at:]:
        if is_function_word(tok.low) or (tok.low in VERBS and kind):
            break  # "Which control method": the word after "which" is the kind, though "control" may be a verb
        kind.append(tok)
    if any(is_named(t, False) for t in kind):
        # "Which ROS 2 pattern ...": the name places the kind; the pick is what the answer opens with.
        return _opening_pick(answer, kind, asked)
    kind = kind[:_MAX_KIND_WORDS]
    plural = next((i for i, t in enumerate(kind) if _plural(t.low)), None)
    kind = kind if plural is None else kind[:plural + 1]  # "Which simulators focus on ...": not "focus"
    if not kind or any(is_named(t, False) for t in kind):
        return ""
    if _plural(kind[-1].low):
        # "Which simulators ...?" gets a kind, not one pick; the answer may name the kind more closely:
        # "Physics-based simulators focus on ..." ("they" next means those).
        closer = re.match(r"^((?:[\w-]+\s+){1,2}" + re.escape(kind[-1].text) + r")\b", _MARKERS.sub("", answer),
                          re.IGNORECASE)
        return closer.group(1) if closer and not is_function_word(closer.group(1).split()[0].lower()) else ""
    subject = subject_of(question)
    at = question.find(subject)
    if _COPULA.search(question[:max(at, 0)]) and any(
            is_named(t, i == 0) for i, t in enumerate(toks) if at <= t.start < at + len(subject)):
        # "What platform is Isaac Sim built on?": "it" next is still Isaac Sim. Not a name that only picks
        # or places ("Which engine does Gazebo recommend ...", "... for AI processing"): "its name" next is
        # the engine's.
        return ""
    taken = {_stem(t.low) for t in kind}
    wanted = {_stem(t.low) for t in _own_content(toks) if _stem(t.low) not in taken}
    best, best_score = "", 0
    for item in _ITEM_SPLIT.split(_MARKERS.sub("", answer)):
        item_toks = tokens(item)
        score = len(wanted & {_stem(t.low) for t in item_toks})
        if score <= best_score or item.rstrip().endswith(":"):
            continue  # a lead-in ("ROS 2 Integration Patterns:") introduces the pick, it is not one
        label = _LABEL.match(item)
        names = [label.group("label")] if label else []
        names += _name_runs(item, item_toks, asked)
        # Not a label made of the question's own words ("ROS 2 Integration Patterns" for a ROS 2 question).
        name = next((n for n in names if not asked & {t.low for t in tokens(n)}
                     and not is_function_word(n.lower())), "")
        if name:
            best, best_score = _placed(name, item, item_toks, taken), score
    named_kind = question[kind[0].start:kind[-1].end]  # "Bullet physics engine": the kind keeps it findable
    placed = bool({_stem(t.low) for t in tokens(best)} & taken)  # "Unity Perception": placed by the answer already
    return f"{best} {named_kind}" if best and not best.lower().endswith(kind[-1].low) and not placed else best


def _placed(name: str, item: str, toks: list[Tok], kind: set[str]) -> str:
    """`name` with the words of the `kind` asked for that `item` writes right before it: "Unity Perception" of
    "Using Unity Perception for ..." after "Which Unity package ...?", which names what the book writes."""
    start = item.find(name)
    if start < 0:
        return name
    at, before = start, [t for t in toks if t.end <= start]
    while before and _stem(before[-1].low) in kind and not item[before[-1].end:at].strip():
        at = before.pop().start
    return item[at:start + len(name)]


def _name_runs(text: str, toks: list[Tok], asked: set[str]) -> list[str]:
    """The names of `text`, adjacent named words together ("Data Distribution Service", not "Data"), the
    question's own words left out ("Docker" of "Pull Isaac ROS Docker image" for an Isaac ROS question).
    A number alone names nothing ("2" of "ROS 2 can be installed ...")."""
    runs: list[list[Tok]] = []
    for i, tok in enumerate(toks):
        if not is_named(tok, i == 0) or tok.low in asked:
            continue
        if runs and runs[-1][-1] is toks[i - 1] and not text[toks[i - 1].end:tok.start].strip():
            runs[-1].append(tok)
        else:
            runs.append([tok])
    return [text[run[0].start:run[-1].end] for run in runs if not (len(run) == 1 and run[0].text.isdigit())]


def _opening_pick(answer: str, kind: list[Tok], asked: set[str]) -> str:
    """What the answer opens with when its first sentence calls it the kind asked for ("Actions in ROS 2
    provide a communication pattern ..." for "Which ROS 2 pattern ...?"); never the question's own words."""
    kind = kind[:next((i for i, t in enumerate(kind) if not is_named(t, False)), len(kind)) + _MAX_KIND_WORDS]
    first = _ITEM_SPLIT.split(_MARKERS.sub("", answer).strip(), maxsplit=1)[0]
    toks = tokens(first)
    n = next((i for i, t in enumerate(toks) if is_function_word(t.low) or t.low in VERBS or t.low in asked),
             len(toks))
    if not kind or is_named(kind[-1], False) or not 0 < n <= _MAX_KIND_WORDS or not toks[0].text[0].isupper() \
            or _stem(kind[-1].low) not in {_stem(t.low) for t in toks[n:]}:
        return ""  # "ROS 2 communication pattern", not "... pattern blocks": the kind ends at its noun
    return first[toks[0].start:toks[n - 1].end]


def _plural(low: str) -> bool:
    # Not "physics", "robotics", "analysis", "status".
    return low.endswith("s") and len(low) > 3 and not low.endswith(("ss", "ics", "is", "us"))


def _ends(question: str) -> str:
    return question.rstrip(" ?.!")


def _substitute(question: str, subject: str, focus: str = "") -> str | None:
    """`question` with its pronouns, possessives, lone demonstratives and anaphoric "one(s)" replaced by
    `subject`; None when it has none. With a `focus` (the entity the earlier answer picked), a pronoun means
    it ("What are its downsides?"); "one" still means the kind ("Which one is faster?")."""
    toks = tokens(question)
    pieces: list[str] = []
    last = 0
    substituted = False
    referent = focus or subject
    for i, tok in enumerate(toks):
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        prev = toks[i - 1] if i else None
        replacement = None
        if tok.low in POSSESSIVES:
            replacement = f"{referent}'s"
        elif tok.low in SUBJECT_PRONOUNS:
            replacement = referent
        elif tok.low in DEMONSTRATIVES and (prev is None or is_function_word(prev.low)) and (
                nxt is None or is_function_word(nxt.low) or question[tok.end:nxt.start].strip()):
            replacement = referent  # "this", "that" standing alone (not "this engine", not "that publishes")
        elif tok.low in ("one", "ones") and prev is not None and (nxt is None or is_function_word(prev.low)) \
                and prev.low not in ("no", "any", "every", "some", "each"):
            # "which one", "the one"; closing the question: "use one?", "standard ones"; not "no one", "one of them"
            replacement = subject
        if replacement is not None:
            pieces += [question[last:tok.start], replacement]
            last = tok.end
            substituted = True
    return "".join([*pieces, question[last:]]) if substituted else None


def resolve_follow_up(question: str, history: Sequence[Turn]) -> str:
    """The standalone form of `question` after `history` (deterministic; see the module docstring)."""
    turns = answered(history)
    subject, earlier, focus = earlier_subject(turns)
    if not subject:
        return question
    switch = _SWITCH.match(question)
    continued = False
    if switch:
        new = (switch.group(1) or switch.group(2) or "").strip()
        new_toks = tokens(new)
        whole = bool(new_toks) and new_toks[0].low in QUESTION_WORDS  # "And which engine does Isaac Sim use?"
        if whole and switch.group(2):
            question, continued = new[0].upper() + new[1:] + "?", True
        elif _own_content(new_toks) and not any(t.low in SUBJECT_PRONOUNS | POSSESSIVES for t in new_toks):
            if new_toks[0].low in _QUALIFIERS:
                return f"{_ends(earlier)} {new}?"  # "... used for in robotics for nonlinear systems?"
            renumbered = _renumbered(earlier, new)
            if renumbered is not None:
                return renumbered
            replaced = earlier.replace(subject, new, 1)
            return replaced if replaced != earlier else f"{_ends(earlier)}: {new}?"
    substituted = _substitute(question, subject, focus)
    if substituted is not None:
        return substituted
    toks = tokens(question)
    last_asked = turns[-1].searched
    if any(t.low == "other" and i and toks[i - 1].low in ("the", "each") for i, t in enumerate(toks)):
        # "Can I convert one into the other?": the two are the earlier question's, whole
        return f"{_ends(question)} ({_ends(last_asked)})?"
    if continued and not any(is_named(t, i == 0) for i, t in enumerate(toks)):
        return f"{_ends(question)} ({focus or subject})?"  # "And how high does the ceiling need to be?"
    own = _own_content(toks)
    if not own:
        content = [t for t in toks if not is_function_word(t.low)]
        if not content:  # "Why?", "How so?": the whole earlier question is the subject
            return f"{_ends(question)} ({_ends(last_asked)})?"
        return f"{_ends(question)} ({focus or subject})?"
    determiner = any(t.low in DEMONSTRATIVES and (i == 0 or is_function_word(toks[i - 1].low))
                     for i, t in enumerate(toks))  # "is this engine", not "the node that publishes"
    if determiner and not any(is_named(t, i == 0) for i, t in enumerate(toks)):
        return f"{_ends(question)} ({focus or subject})?"  # "Is this engine fast?": the noun is ours, the name is not
    return question  # its own subject, no pronoun: a new topic


def _renumbered(earlier: str, new: str) -> str | None:
    """`earlier` with its numbered name of the same word as `new`'s renumbered ("how long is the module 1 lab?",
    "what about module 3's" -> "how long is the module 3 lab?"): the rest of its subject is still asked about.
    None when `new` is no numbered name, or `earlier` numbers no such word."""
    toks = tokens(new.removesuffix("'s").removesuffix("’s"))
    if len(toks) != 2 or not toks[1].text.replace(".", "").isdigit() or not toks[0].text.isalpha():
        return None
    word, number = toks[0].text, toks[1].text
    found = re.search(rf"\b{re.escape(word)}\s+\d+(?:\.\d+)*\b", earlier, re.IGNORECASE)
    if found is None:
        return None
    start = found.start()
    return f"{earlier[:start]}{earlier[start:start + len(word)]} {number}{earlier[found.end():]}"


def _is_refusal(answer: str) -> bool:
    return bool(answer.strip()) and is_refusal_text(answer)  # a client's turn may carry no answer


def answered(history: Sequence[Turn]) -> tuple[Turn, ...]:
    """The turns to resolve against: those the book answered, so that a refused turn ("What is the capital
    of France?") never makes the next question refused too. When none of them has a subject, all turns:
    a question refused by mistake is then still the only subject there is ("How is the capstone project
    organised?" refused, "How many weeks does it last?")."""
    kept = tuple(turn for turn in history if not _is_refusal(turn.answer))
    return kept if _subject_turn(kept) is not None else tuple(history)


def resolve_history(history: Sequence[Turn]) -> tuple[Turn, ...]:
    """Turns with each one's standalone question filled in (a client's history carries none)."""
    out: list[Turn] = []
    for turn in history:
        standalone = turn.standalone or resolve_follow_up(turn.question, out)
        out.append(Turn(turn.question, turn.answer, standalone))
    return tuple(out)
