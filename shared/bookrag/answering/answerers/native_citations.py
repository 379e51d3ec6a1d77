"""Cohere Chat API v2 (command-r-plus family) with the retrieved chunks as grounding documents.

Cohere grounds natively: documents go in `documents=[{"id": "S1", "data": {...}}]` and the reply's
`message.citations[].sources[].id` name the documents each span rests on. Those spans become `[S1]`
markers in the text, so the agent verifies them like any other answerer's.

`stream` makes the same request with the SDK's `chat_stream` and yields the text of its
`content-delta` events as they arrive. Cohere sends each citation as its own `citation-start` event,
usually after the text it cites has streamed, so the streamed text carries no markers: they are
placed once the stream has ended, exactly as `answer` places them, and the final draft has them.
An event the SDK cannot read, which it would drop and log raw, ends the stream as unavailable
(`adapters.cohere.next_event`): retried before the first text, like any failure there.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

from bookrag.adapters.cohere import ClientProvider, call_cohere, next_event
from bookrag.answering.answerers.base import SYSTEM_PROMPT, Deadline, DocumentSet, Draft, Retrieve, is_refusal_text
from bookrag.domain.models import SearchHit
from bookrag.errors import AnswerError, AnswerUnavailableError

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

    marks_inline = False  # Cohere's citations are events of their own: the markers are placed at the end

    def _request(self, question: str, hits: list[SearchHit],
                 docs: DocumentSet | None = None) -> tuple[DocumentSet, dict[str, Any]]:
        docs = DocumentSet() if docs is None else docs
        documents = [{"id": label, "data": {"title": hit.citation_label, "snippet": hit.text}}
                     for label, hit in docs.add(hits)]
        messages = [{"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": question}]
        return docs, {"model": self.model, "messages": messages, "documents": documents, "temperature": 0.0}

    def answer(self, question: str, hits: list[SearchHit], retrieve: Retrieve, deadline: Deadline) -> Draft:
        """One grounded chat call (one retry at most). Raises `AnswerError` subclasses."""
        docs, request = self._request(question, hits)

        def chat(options: RequestOptions) -> Any:
            return self._client().chat(**request, request_options=options)

        response = call_cohere(chat, "answer", timeout_s=lambda: deadline.timeout(self.settings.llm_timeout_s))
        message = getattr(response, "message", None)
        if message is None:
            raise AnswerError("The answer service returned an unexpected response")
        text = "".join(getattr(item, "text", "") or "" for item in (message.content or [])
                       if getattr(item, "type", "text") == "text")
        return _draft(_with_markers(text, message.citations or []), docs)

    def stream(self, question: str, hits: list[SearchHit], retrieve: Retrieve, deadline: Deadline,
               documents: DocumentSet | None = None) -> Generator[str, None, Draft]:
        """`answer`'s request, streamed: the reply's text as it arrives, then the same draft. Retried
        (once) only until its first text has been read; raises as `answer` does, also mid-stream."""
        docs, request = self._request(question, hits, documents)

        def opened(options: RequestOptions) -> tuple[Iterator[Any], Any]:
            events = iter(self._client().chat_stream(**request, request_options=options))
            try:  # up to the first text, a failure is retried: nothing has been yielded yet
                event = next_event(events, "answer")
                while event is not None and not (_text_of(event) or event.type == "message-end"):
                    event = next_event(events, "answer")
                return events, event
            except BaseException:
                _close(events)
                raise

        events, first = call_cohere(opened, "answer", timeout_s=lambda: deadline.timeout(self.settings.llm_timeout_s))
        text: list[str] = []
        citations: list[Any] = []
        ended = False
        try:
            event = first
            while event is not None:
                piece = _text_of(event)
                if piece:
                    text.append(piece)
                    yield piece
                elif event.type == "citation-start":
                    cited = getattr(getattr(event.delta, "message", None), "citations", None)
                    if cited is not None:
                        citations.append(cited)
                elif event.type == "message-end":
                    ended = not getattr(event.delta, "error", None)
                    break
                deadline.check()
                event = next_event(events, "answer")
        finally:
            _close(events)
        if not ended:  # cut off, or the model reported an error: what arrived is not a whole reply
            raise AnswerUnavailableError()
        return _draft(_with_markers("".join(text), citations), docs)


def _draft(text: str, docs: DocumentSet) -> Draft:
    if is_refusal_text(text):
        return Draft(text, refused=True, reason="model_refused")
    return Draft(text, citations=docs.citations())


def _text_of(event: Any) -> str:
    if getattr(event, "type", None) != "content-delta":
        return ""
    content = getattr(getattr(getattr(event, "delta", None), "message", None), "content", None)
    text = getattr(content, "text", None)  # a reasoning model's `thinking` is not the answer
    return text if isinstance(text, str) else ""


def _close(events: Iterator[Any]) -> None:
    close = getattr(events, "close", None)
    if close is not None:  # the SDK's generator: closing it closes the HTTP response
        close()


def _with_markers(text: str, citations: list[Any]) -> str:
    """`text` with `[S1]`-style markers inserted where Cohere's citations end."""
    inserts: dict[int, list[str]] = {}
    for citation in citations:
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
