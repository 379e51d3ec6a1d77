"""Cohere Chat API v2 (command-r-plus family) through the container's one Cohere client.

Cohere grounds natively: documents go in `documents=[{"id": "S1", "data": {...}}]` and the reply's
`message.citations[].sources[].id` name the documents each span rests on; they become the reply's
`Citation`s (where each span ends, which documents).

`stream` makes the same request with the SDK's `chat_stream` and yields the text of its
`content-delta` events as they arrive. Cohere sends each citation as its own `citation-start` event,
usually after the text it cites has streamed; they are collected into the returned reply. An event
the SDK cannot read, which it would drop and log raw, ends the stream as unavailable
(`adapters.cohere.next_event`): retried before the first text, like any failure there.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from bookrag.adapters.cohere import ClientProvider, call_cohere, next_event
from bookrag.adapters.llm.port import ChatReply, ChatRequest, Citation
from bookrag.errors import AnswerError, AnswerUnavailableError, ConfigError

if TYPE_CHECKING:
    from cohere.core.request_options import RequestOptions

    from bookrag.adapters.llm import Provider, SharedClients
    from bookrag.config.settings import Settings
    from bookrag.domain.deadline import Deadline


def build(name: str, provider: Provider, settings: Settings, shared: SharedClients) -> CohereChat:
    """LLM_PROVIDER=cohere's model (LLM_MODEL or the registry's default) on the container's Cohere client."""
    return CohereChat(name, settings.llm_model or provider.model, shared.cohere, settings.llm_timeout_s)


class CohereChat:
    cites_documents = True

    def __init__(self, name: str, model: str, client: ClientProvider, timeout_s: float) -> None:
        self.name = name
        self.model = model
        self._client = client
        self._timeout_s = timeout_s

    def complete(self, request: ChatRequest, deadline: Deadline) -> ChatReply:
        """One chat call (`request.attempts` at most). Raises `AnswerError` subclasses."""
        kwargs = self._kwargs(request)

        def chat(options: RequestOptions) -> Any:
            return self._client().chat(**kwargs, request_options=options)

        response = call_cohere(chat, "answer", timeout_s=lambda: request.timeout(deadline, self._timeout_s),
                               attempts=request.attempts)
        message = getattr(response, "message", None)
        if message is None:
            raise AnswerError("The answer service returned an unexpected response")
        text = "".join(getattr(item, "text", "") or "" for item in (message.content or [])
                       if getattr(item, "type", "text") == "text")
        return ChatReply(text, citations=_citations(message.citations or []))

    def stream(self, request: ChatRequest, deadline: Deadline) -> Generator[str, None, ChatReply]:
        """`complete`'s request, streamed: the reply's text as it arrives, then the same reply. Retried
        only until its first text has been read; raises as `complete` does, also mid-stream."""
        kwargs = self._kwargs(request)

        def opened(options: RequestOptions) -> tuple[Iterator[Any], Any]:
            events = iter(self._client().chat_stream(**kwargs, request_options=options))
            try:  # up to the first text, a failure is retried: nothing has been yielded yet
                event = next_event(events, "answer")
                while event is not None and not (_text_of(event) or event.type == "message-end"):
                    event = next_event(events, "answer")
                return events, event
            except BaseException:
                _close(events)
                raise

        events, first = call_cohere(opened, "answer", timeout_s=lambda: request.timeout(deadline, self._timeout_s),
                                    attempts=request.attempts)
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
        return ChatReply("".join(text), citations=_citations(citations))

    def _kwargs(self, request: ChatRequest) -> dict[str, Any]:
        if request.tools or any(m.tool_calls or m.tool_call_id for m in request.messages):
            raise ConfigError("Tool calls are not wired for Cohere: it grounds on `documents` instead")
        kwargs: dict[str, Any] = {"model": self.model,
                                  "messages": [{"role": m.role, "content": m.content} for m in request.messages],
                                  "temperature": 0.0}
        if request.documents:
            kwargs["documents"] = [{"id": d.id, "data": {"title": d.title, "snippet": d.snippet}}
                                   for d in request.documents]
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        return kwargs


def _citations(raw: Iterable[Any]) -> tuple[Citation, ...]:
    """The SDK's citations as ours: where each cited span ends, and the ids of the documents it rests on."""
    out = []
    for citation in raw:
        end = getattr(citation, "end", None)
        if isinstance(end, int):
            sources = tuple(label for label in (getattr(s, "id", None) for s in citation.sources or [])
                            if isinstance(label, str))
            out.append(Citation(end, sources))
    return tuple(out)


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
