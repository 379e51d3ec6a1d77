"""What the agent's request yields, step by step (`BookRAGAgent.events`), and how a stream's text is cut."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from bookrag.answering.answerers.base import CITATION, draft_sentences
from bookrag.contracts.agent import Response, Source

__all__ = ["AgentEvent", "deltas", "numbered"]


@dataclass(frozen=True, slots=True)
class AgentEvent:
    """One step of `BookRAGAgent.events`: `sources` (the sections retrieved), `delta` (answer text),
    `final` (the complete `Response`)."""

    kind: Literal["sources", "delta", "final"]
    sources: list[Source] = field(default_factory=list)
    text: str = ""
    response: Response = field(default_factory=lambda: Response(answer="", sources=[], is_refusal=False,
                                                                refusal_reason=""))


def deltas(text: str) -> Iterator[AgentEvent]:
    """`text`, a piece of the final answer, as `delta` events sentence by sentence (joined, `text`)."""
    lead = text[: len(text) - len(text.lstrip())]
    for i, (sentence, sep) in enumerate(draft_sentences(text) if text.strip() else []):
        yield AgentEvent("delta", text=(lead if i == 0 else "") + sentence + sep)


def numbered(text: str, numbers: dict[str, int]) -> str:
    """`[S3]` markers as `[1]`, in order of first appearance across the stream (`numbers` is shared)."""

    def renumber(match: re.Match[str]) -> str:
        return "".join(f"[{numbers.setdefault(label, len(numbers) + 1)}]"
                       for label in dict.fromkeys(re.findall(r"S\d+", match.group(1))))

    return CITATION.sub(renumber, text)
