"""An answer as it is written: the `delta` events of a streamed request (`BookRAGAgent.events`).

The stream's rule: what it sends is the final answer's beginning, or, where the answerer's markers come only at
the end, a preview that the leak guard has read. The agent gives its final check and its leak guard; nothing here
decides what the answer holds.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator

from bookrag.answering.agent_events import AgentEvent, deltas, numbered
from bookrag.answering.answerers.base import (
    Answerer,
    DocumentSet,
    Draft,
    NotTheAnswer,
    Retrieve,
    StreamingAnswerer,
    cited_labels,
    draft_sentences,
    is_refusal_text,
)
from bookrag.contracts.agent import Response
from bookrag.domain.deadline import Deadline
from bookrag.domain.models import SearchHit

__all__ = ["streamed"]

Check = Callable[[Draft], Response]  # the agent's check of a growing text (leaks, grounding, citations)
Leaks = Callable[[str], bool]


def streamed(answerer: Answerer, question: str, hits: list[SearchHit], retrieve: Retrieve, deadline: Deadline,
             check: Check, leaks: Leaks) -> Generator[AgentEvent, None, tuple[Draft, str | None]]:
    """The answerer's draft, with `delta` events of its text as it is written: (the draft, the text
    sent when it is the start of the final answer, which then follows it; None for a preview).

    The text sent is exactly the final answer so far when the answerer's text carries its markers
    as it streams (`_checked`) or when it writes its draft at once (the extractive answerer, which
    chooses its sentences together: its final answer then follows, sentence by sentence).
    Otherwise (Cohere: markers only at the end) it is a preview, sentence by sentence (`_relay`)."""
    if not isinstance(answerer, StreamingAnswerer):
        return answerer.answer(question, hits, retrieve, deadline), ""
    documents = DocumentSet()
    pieces = answerer.stream(question, hits, retrieve, deadline, documents)
    if answerer.marks_inline:
        return (yield from _checked(pieces, documents, check))
    return (yield from _relay(pieces, leaks)), None


def _checked(pieces: Generator[str, None, Draft], documents: DocumentSet,
             check: Check) -> Generator[AgentEvent, None, tuple[Draft, str]]:
    """The final check applied to the text so far, up to its last whole sentence with a marker (an
    unmarked sentence is judged with the next marked one), and what it adds sent: a sentence the final
    answer drops (unsupported, citing what was not retrieved, a leak) is not shown. Returns the draft
    and the text sent.

    What is sent stays sent: a refusal, or a tool call, that the model writes after answering
    text makes `final` differ from it (the stream then sends nothing more; `final` is the answer)."""
    buffer, sent, judged = "", "", ""
    while True:
        try:
            piece = next(pieces)
        except StopIteration as done:
            return done.value, sent
        if isinstance(piece, NotTheAnswer):
            buffer = ""  # what the model said before a tool call; the draft holds what follows
            continue
        buffer += piece
        segments = draft_sentences(buffer)
        if not segments:
            continue
        # The last segment may still be growing; while it opens with "[", it may be markers that
        # belong to the sentence before ("claim. [S1] [" + "S2]"), which then is not whole either.
        whole = segments[:-2] if segments[-1][0].startswith("[") else segments[:-1]
        marked = [i for i, (sentence, _) in enumerate(whole) if cited_labels(sentence)]
        if not marked:
            continue
        prefix = "".join(sentence + sep for sentence, sep in whole[: marked[-1] + 1])
        if prefix == judged:
            continue
        judged = prefix
        if is_refusal_text(prefix):  # the model declines: `final` is the refusal
            continue
        checked = check(Draft(prefix, citations=documents.citations()))
        if not checked.is_refusal and checked.answer.startswith(sent) and checked.answer != sent:
            yield from deltas(checked.answer[len(sent):])
            sent = checked.answer


def _relay(pieces: Generator[str, None, Draft], leaks: Leaks) -> Generator[AgentEvent, None, Draft]:
    """Whole sentences of the draft as they come, markers numbered in order of appearance as the
    final answer numbers them: a preview of an answer whose markers come at the end. Each is
    checked by the leak guard with everything sent before it: text the final check would refuse
    as `unsafe_output` must not reach the reader first. Returns the draft."""
    buffer, sent, blocked = "", "", False
    numbers: dict[str, int] = {}

    def release(segments: list[tuple[str, str]]) -> Iterator[AgentEvent]:
        nonlocal sent, blocked
        for sentence, sep in segments:
            if blocked or not sentence.strip():
                continue
            text = numbered(sentence + sep, numbers)
            if leaks(sent + text):
                blocked = True  # the final event carries the verdict; nothing more is streamed
                return
            sent += text
            yield AgentEvent("delta", text=text)

    while True:
        try:
            piece = next(pieces)
        except StopIteration as done:
            draft: Draft = done.value
            break
        buffer += piece
        segments = draft_sentences(buffer)
        if len(segments) > 1:  # the last segment may still be growing
            yield from release(segments[:-1])
            buffer = segments[-1][0] + segments[-1][1]
    if not draft.refused:
        yield from release(draft_sentences(buffer))
    return draft
