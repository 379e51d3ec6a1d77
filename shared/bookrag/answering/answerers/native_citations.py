"""An answerer for chat models that ground natively (Cohere): the retrieved chunks go as documents.

The model's reply cites the documents each span rests on (`ChatReply.citations`); those spans become
`[S1]` markers in the text, so the agent verifies them like any other answerer's.

`stream` makes the same request streamed and yields the reply's text as it arrives. Cohere sends its
citations after the text they cite, so the streamed text carries no markers: they are placed once the
stream has ended, exactly as `answer` places them, and the final draft has them.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence

from bookrag.adapters.llm.port import ChatModel, ChatReply, ChatRequest, Citation, Document, Message
from bookrag.answering.answerers.base import DocumentSet, Draft, Retrieve, is_refusal_text, reader_locale, system_prompt
from bookrag.domain.deadline import Deadline
from bookrag.domain.models import SearchHit


class NativeCitationsAnswerer:
    marks_inline = False  # the citations come apart from the text: the markers are placed at the end

    def __init__(self, chat: ChatModel, title: Callable[[], str] = str) -> None:
        self._chat = chat
        self._title = title  # the served book's title, read per request
        self.name = chat.name
        self.model = chat.model

    def _request(self, question: str, hits: list[SearchHit],
                 docs: DocumentSet | None = None) -> tuple[DocumentSet, ChatRequest]:
        docs = DocumentSet() if docs is None else docs
        documents = tuple(Document(label, hit.citation_label, hit.text) for label, hit in docs.add(hits))
        messages = (Message("system", system_prompt(self._title(), reader_locale())), Message("user", question))
        return docs, ChatRequest(messages, documents=documents)

    def answer(self, question: str, hits: list[SearchHit], retrieve: Retrieve, deadline: Deadline) -> Draft:
        """One grounded chat call (one retry at most). Raises `AnswerError` subclasses."""
        docs, request = self._request(question, hits)
        return _draft(self._chat.complete(request, deadline), docs)

    def stream(self, question: str, hits: list[SearchHit], retrieve: Retrieve, deadline: Deadline,
               documents: DocumentSet | None = None) -> Generator[str, None, Draft]:
        """`answer`'s request, streamed: the reply's text as it arrives, then the same draft. Retried
        (once) only until its first text has been read; raises as `answer` does, also mid-stream."""
        docs, request = self._request(question, hits, documents)
        reply = yield from self._chat.stream(request, deadline)
        return _draft(reply, docs)


def _draft(reply: ChatReply, docs: DocumentSet) -> Draft:
    text = _with_markers(reply.text, reply.citations)
    if is_refusal_text(text):
        return Draft(text, refused=True, reason="model_refused")
    return Draft(text, citations=docs.citations())


def _with_markers(text: str, citations: Sequence[Citation]) -> str:
    """`text` with `[S1]`-style markers inserted where the model's citations end."""
    inserts: dict[int, list[str]] = {}
    for citation in citations:
        if not 0 <= citation.end <= len(text):
            continue
        for label in citation.sources:
            if label not in inserts.get(citation.end, []):
                inserts.setdefault(citation.end, []).append(label)
    for end in sorted(inserts, reverse=True):
        space = " " if end and not text[end - 1].isspace() else ""
        text = text[:end] + space + "".join(f"[{label}]" for label in inserts[end]) + text[end:]
    return text
