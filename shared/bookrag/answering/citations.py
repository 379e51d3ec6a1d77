"""Citations are checked in code, not by the model: only chunks this request retrieved may be cited."""

from __future__ import annotations

import re

from bookrag.answering.answerers.base import CITATION, Draft, cited_labels, draft_sentences, group_labels
from bookrag.answering.answerers.grounding import GroundingCache
from bookrag.domain.models import SearchHit

_SPACE_BEFORE_STOP = re.compile(r"[ \t]+([.,;:!?])")



def verify_citations(draft: Draft, ledger: Ledger) -> tuple[str, list[SearchHit]]:
    """Keep only citations of retrieved chunks, renumbered [1], [2], ... in order of appearance.

    A sentence whose markers all cite chunks this request did not retrieve is dropped (its claims
    rest on nothing we can show). Returns the rewritten text and the cited hits in marker order.
    """

    def valid(label: str) -> SearchHit | None:
        chunk_id = draft.citations.get(label)
        return ledger.hits.get(chunk_id) if chunk_id is not None else None

    kept: list[str] = []
    for sentence, sep in draft_sentences(draft.text):
        labels = cited_labels(sentence)
        if labels and not any(valid(label) for label in labels):
            continue
        kept.append(sentence + sep)
    numbers: dict[str, int] = {}
    cited: list[SearchHit] = []

    def renumber(match: re.Match[str]) -> str:
        out = []
        for label in group_labels(match.group(1)):
            hit = valid(label)
            if hit is None:
                continue
            if hit.chunk_id not in numbers:
                numbers[hit.chunk_id] = len(numbers) + 1
                cited.append(hit)
            marker = f"[{numbers[hit.chunk_id]}]"
            if marker not in out:
                out.append(marker)
        return "".join(out)

    rewritten = CITATION.sub(renumber, "".join(kept).strip())
    return _SPACE_BEFORE_STOP.sub(r"\1", rewritten).strip(), cited


class Ledger:
    """Every chunk retrieved during one request: the only chunks an answer may cite."""

    def __init__(self) -> None:
        self.hits: dict[str, SearchHit] = {}
        # What grounding read of them: a stream grounds its growing text once per sentence.
        self.grounding = GroundingCache()

    def record(self, hits: list[SearchHit]) -> list[SearchHit]:
        for hit in hits:
            self.hits.setdefault(hit.chunk_id, hit)
        return hits
