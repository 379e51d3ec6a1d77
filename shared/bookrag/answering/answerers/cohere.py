"""Cohere Chat API v2 (command-r-plus family) with the retrieved chunks as grounding documents.

Cohere grounds natively: documents go in `documents=[{"id": "S1", "data": {...}}]` and the reply's
`message.citations[].sources[].id` name the documents each span rests on. Those spans become `[S1]`
markers in the text, so the agent verifies them like any other answerer's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bookrag.adapters.cohere import ClientProvider, call_cohere
from bookrag.answering.answerers.base import SYSTEM_PROMPT, Deadline, DocumentSet, Draft, Retrieve, is_refusal_text
from bookrag.domain.models import SearchHit
from bookrag.errors import AnswerError

if TYPE_CHECKING:
    from cohere.core.request_options import RequestOptions

    from bookrag.config.settings import Settings

DEFAULT_MODEL = "command-r-plus-08-2024"


class CohereAnswerer:
    name = "cohere"

    def __init__(self, settings: Settings, client: ClientProvider) -> None:
        self.settings = settings
        self._client = client
        self.model = settings.llm_model or DEFAULT_MODEL

    def answer(self, question: str, hits: list[SearchHit], retrieve: Retrieve, deadline: Deadline) -> Draft:
        """One grounded chat call (one retry at most). Raises `AnswerError` subclasses."""
        docs = DocumentSet()
        labelled = docs.add(hits)
        documents = [{"id": label, "data": {"title": hit.citation_label, "snippet": hit.text}}
                     for label, hit in labelled]
        messages = [{"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": question}]
        def chat(options: RequestOptions) -> Any:
            return self._client().chat(model=self.model, messages=messages, documents=documents,  # type: ignore[arg-type]
                                       temperature=0.0, request_options=options)

        response = call_cohere(chat, "answer", timeout_s=lambda: deadline.timeout(self.settings.llm_timeout_s))
        text = _with_markers(response)
        if is_refusal_text(text):
            return Draft(text, refused=True, reason="model_refused")
        return Draft(text, citations=docs.citations())


def _with_markers(response: Any) -> str:
    """The reply's text with `[S1]`-style markers inserted where Cohere's citations end."""
    message = getattr(response, "message", None)
    if message is None:
        raise AnswerError("The answer service returned an unexpected response")
    text = "".join(getattr(item, "text", "") or "" for item in (message.content or [])
                   if getattr(item, "type", "text") == "text")
    inserts: dict[int, list[str]] = {}
    for citation in message.citations or []:
        end = citation.end
        if end is None or not 0 <= end <= len(text):
            continue
        for source in citation.sources or []:
            label = getattr(source, "id", None)
            if isinstance(label, str) and label not in inserts.get(end, []):
                inserts.setdefault(end, []).append(label)
    for end in sorted(inserts, reverse=True):
        space = " " if end and not text[end - 1].isspace() else ""
        text = text[:end] + space + "".join(f"[{label}]" for label in inserts[end]) + text[end:]
    return text
