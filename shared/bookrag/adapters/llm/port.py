"""The one chat port: what an answerer or the follow-up rewriter asks of a model, whoever serves it.

A `ChatModel` takes a `ChatRequest` (messages, the tools it may call, documents for a model that
grounds natively, a token cap, how many attempts) and gives a `ChatReply` (text, tool calls, citations
of the documents). `complete` returns the whole reply; `stream` yields its text as it arrives and
returns the same reply. Both:
- cap every call by the request's `Deadline` (and by the model's own timeout, or the request's);
- retry (at most `attempts` calls in all, by `adapters.retrying`) only before any text has been
  yielded, so no text is ever sent twice; after that a failure ends the stream with its error;
- raise only our `AnswerError` family (`adapters.http_errors`), never an SDK's or a transport's.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from bookrag.domain.deadline import Deadline

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call the model asked for: `arguments` is the JSON text it wrote (the caller parses it);
    `id` is "" when the model gave none. `extra`: the provider's other fields of the call, sent back with
    it unchanged (Gemini's thinking models sign their calls and refuse a call returned without it)."""

    id: str
    name: str
    arguments: str
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Message:
    """One message of the conversation: an assistant message may carry the tool calls it made, a tool
    message answers the call `tool_call_id`."""

    role: Role
    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class Tool:
    """A function the model may call: its name, what it does, its parameters' JSON Schema."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Document:
    """A document for a model that grounds natively (`ChatModel.cites_documents`): its citations name `id`."""

    id: str
    title: str
    snippet: str


@dataclass(frozen=True, slots=True)
class ChatRequest:
    messages: tuple[Message, ...]
    tools: tuple[Tool, ...] = ()
    documents: tuple[Document, ...] = ()
    max_tokens: int | None = None
    attempts: int = 2  # calls in all: one retry of a recoverable failure, none on a request's timeout
    timeout_s: float | None = None  # a tighter cap per call than the model's own (LLM_TIMEOUT_S)

    def timeout(self, deadline: Deadline, own_s: float) -> float:
        """One call's timeout: at most the model's own `own_s`, this request's `timeout_s` and what the
        deadline has left; raises `AnswerTimeoutError` when too little is left."""
        return deadline.timeout(own_s if self.timeout_s is None else min(own_s, self.timeout_s))


@dataclass(frozen=True, slots=True)
class Citation:
    """A span of the reply's text that rests on documents: it ends at offset `end`, `sources` are their ids."""

    end: int
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ChatReply:
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    citations: tuple[Citation, ...] = ()


class ChatModel(Protocol):
    """A chat model of one provider. `name` is its LLM_PROVIDER, `model` the model it calls.
    `cites_documents`: it takes `ChatRequest.documents` and cites them in `ChatReply.citations`
    (Cohere); otherwise documents are shown in the messages and it may call `tools` instead."""

    name: str
    model: str
    cites_documents: bool

    def complete(self, request: ChatRequest, deadline: Deadline) -> ChatReply: ...

    def stream(self, request: ChatRequest, deadline: Deadline) -> Generator[str, None, ChatReply]: ...
