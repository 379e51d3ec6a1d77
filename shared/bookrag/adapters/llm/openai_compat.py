"""Any OpenAI-compatible chat completions endpoint (OpenAI, Gemini's `/v1beta/openai/`), over httpx.

It uses plain `httpx` (already in the layer: qdrant-client and cohere depend on it) rather than the
`openai` or `google-genai` SDKs, which would add megabytes and import time to the Lambda package for
one POST request. Each model holds one HTTP pool, built on its first call (no redirects, explicit
timeouts), so building the container's chat model imports no HTTP client.

`stream` sends the same request with `"stream": true` and reads the wire format's Server-Sent Events
(`data: {chunk}` lines, then `data: [DONE]`), yielding content as it arrives and assembling tool calls
from their pieces. A call is retried only until its first chunk with content or a tool call has been
read, so no text is ever sent twice; after that a failure ends the stream with its typed error.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Generator, Iterator
from itertools import chain
from typing import TYPE_CHECKING, Any

from bookrag.adapters.http_errors import translate_http_error, unavailable
from bookrag.adapters.llm.port import ChatReply, ChatRequest, Message, ToolCall
from bookrag.adapters.retrying import call_with_retries
from bookrag.config.llm import llm_base_url, llm_key
from bookrag.errors import BookRAGError, ConfigError

if TYPE_CHECKING:
    import httpx
    from pydantic import SecretStr

    from bookrag.adapters.llm import Provider, SharedClients
    from bookrag.config.settings import Settings
    from bookrag.domain.deadline import Deadline


def build(name: str, provider: Provider, settings: Settings, shared: SharedClients) -> OpenAICompatibleChat:
    """LLM_PROVIDER=`name`'s model: its key `<NAME>_API_KEY`, its endpoint `<NAME>_BASE_URL` or the
    registry's default, LLM_MODEL or the registry's default model."""
    key = llm_key(settings, name)
    if key is None:
        raise ConfigError(f"{name.upper()}_API_KEY is not set")
    base_url = llm_base_url(settings, name) or provider.base_url
    if base_url is None:
        raise ConfigError(f"{name.upper()}_BASE_URL is not set")
    return OpenAICompatibleChat(name, settings.llm_model or provider.model, base_url, key, settings.llm_timeout_s)


class OpenAICompatibleChat:
    cites_documents = False  # documents go in the messages; the model may call tools for more

    def __init__(self, name: str, model: str, base_url: str, key: SecretStr, timeout_s: float) -> None:
        self.name = name
        self.model = model
        self._base_url = base_url.rstrip("/") + "/"
        self._key = key
        self._timeout_s = timeout_s
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    def complete(self, request: ChatRequest, deadline: Deadline) -> ChatReply:
        client, body = self._http(), self._body(request)

        def attempt() -> ChatReply:
            import httpx

            try:
                timeout = request.timeout(deadline, self._timeout_s)
                response = client.post("chat/completions", json=body, timeout=timeout)
                response.raise_for_status()
            except httpx.HTTPStatusError as exc:
                raise translate_http_error(exc, "answer", exc.response.status_code,
                                           dict(exc.response.headers)) from None
            except httpx.HTTPError as exc:
                raise translate_http_error(exc, "answer") from None
            try:
                message = response.json()["choices"][0]["message"]
                if not isinstance(message, dict):
                    raise TypeError
            except (ValueError, KeyError, IndexError, TypeError):
                # 200 with a body we cannot read: a broken upstream (retried if attempts allow).
                raise unavailable("answer") from None
            content = message.get("content")
            raw_calls = message.get("tool_calls")
            return ChatReply(content if isinstance(content, str) else "",
                             tuple(_tool_call(c) for c in raw_calls if isinstance(c, dict))
                             if isinstance(raw_calls, list) else ())

        return call_with_retries(attempt, attempts=request.attempts, max_wait=1.0, retry_timeouts=False)

    def stream(self, request: ChatRequest, deadline: Deadline) -> Generator[str, None, ChatReply]:
        """`complete`'s request, streamed: its content as it arrives, then the reply `complete` would
        have returned for the same output (content, tool calls assembled from their pieces)."""
        client, body = self._http(), {**self._body(request), "stream": True}

        def opened() -> tuple[httpx.Response, Iterator[dict[str, Any]]]:
            import httpx

            timeout = request.timeout(deadline, self._timeout_s)
            try:
                response = client.send(client.build_request("POST", "chat/completions", json=body, timeout=timeout),
                                       stream=True)
            except httpx.HTTPError as exc:
                raise translate_http_error(exc, "answer") from None
            try:
                if not response.is_success:
                    raise translate_http_error(ValueError(), "answer", response.status_code, dict(response.headers))
                deltas = _deltas(response, deadline)
                # Read up to the first delta before anything is yielded: until then a retry repeats nothing.
                first = next(deltas, None)
            except BaseException:
                response.close()
                raise
            return response, iter(()) if first is None else chain([first], deltas)

        response, deltas = call_with_retries(opened, attempts=request.attempts, max_wait=1.0, retry_timeouts=False)
        content: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        try:
            for delta in deltas:
                piece = delta.get("content")
                if isinstance(piece, str) and piece:
                    content.append(piece)
                    yield piece
                _add_tool_call_pieces(calls, delta.get("tool_calls"))
        finally:
            response.close()
        return ChatReply("".join(content), tuple(_tool_call(calls[i]) for i in sorted(calls)))

    def _http(self) -> httpx.Client:
        """This model's HTTP pool, built once, on first use."""
        with self._lock:
            if self._client is None:
                import httpx

                timeout = httpx.Timeout(self._timeout_s, connect=min(3.0, self._timeout_s))
                self._client = httpx.Client(base_url=self._base_url, timeout=timeout, follow_redirects=False,
                                            headers={"Authorization": f"Bearer {self._key.get_secret_value()}"})
            return self._client

    def _body(self, request: ChatRequest) -> dict[str, Any]:
        if request.documents:
            raise ConfigError(f"LLM_PROVIDER={self.name} takes no documents: show them in the messages")
        body: dict[str, Any] = {"model": self.model, "messages": [_wire(m) for m in request.messages],
                                "temperature": 0}
        if request.tools:
            body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                               "parameters": t.parameters}} for t in request.tools]
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        return body


def _wire(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [{**c.extra, "id": c.id, "type": "function",
                              "function": {"name": c.name, "arguments": c.arguments}}
                             for c in message.tool_calls]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    return out


_CALL_FIELDS = frozenset({"id", "type", "function", "index"})  # ours to read; the rest goes back as it came


def _tool_call(raw: dict[str, Any]) -> ToolCall:
    function = raw.get("function")
    function = function if isinstance(function, dict) else {}
    name, arguments = function.get("name"), function.get("arguments")
    extra = {k: v for k, v in raw.items() if k not in _CALL_FIELDS}
    return ToolCall(str(raw.get("id") or ""), name if isinstance(name, str) else "",
                    arguments if isinstance(arguments, str) else "", extra)


def _deltas(response: httpx.Response, deadline: Deadline) -> Iterator[dict[str, Any]]:
    """The `choices[0].delta` of each chunk that carries content or tool calls. Raises our typed
    errors: a broken or unreadable stream, or one that ends before the model finished, is
    `AnswerUnavailableError` (as an unreadable reply is); a stalled one times out; so does one
    still running when the request's deadline is spent (each read's timeout alone would not)."""
    import httpx

    finished = False
    try:
        for line in response.iter_lines():
            deadline.check()
            if not line.startswith("data:"):
                continue  # blank lines end events; `:` comments keep connections alive; `event:` unused
            data = line[5:].strip()
            if data == "[DONE]":
                return
            try:
                chunk = json.loads(data)
                choices = chunk["choices"]
                if not isinstance(choices, list):
                    raise TypeError
                if not choices:
                    continue  # a usage-only chunk
                choice = choices[0]
                delta = choice.get("delta") or {}
                if not isinstance(delta, dict):
                    raise TypeError
            except (ValueError, KeyError, TypeError, AttributeError):
                raise unavailable("answer") from None
            finished = finished or bool(choice.get("finish_reason"))
            if delta.get("content") or delta.get("tool_calls"):
                yield delta
    except BookRAGError:
        raise
    except httpx.HTTPError as exc:
        raise translate_http_error(exc, "answer") from None
    if not finished:  # the connection closed mid-answer: what arrived is not the model's whole reply
        raise unavailable("answer")


def _add_tool_call_pieces(calls: dict[int, dict[str, Any]], pieces: object) -> None:
    """Assemble streamed tool calls: each piece names its call by `index`, the first one brings its
    id and name, the arguments come in fragments to concatenate."""
    if not isinstance(pieces, list):
        return
    for piece in pieces:
        if not isinstance(piece, dict):
            continue
        index = piece.get("index")
        if not isinstance(index, int):  # some servers send whole calls without an index
            index = len(calls) if piece.get("id") or not calls else max(calls)
        call = calls.setdefault(index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
        if piece.get("id"):
            call["id"] = piece["id"]
        call.update((k, v) for k, v in piece.items() if k not in _CALL_FIELDS)
        function = piece.get("function")
        if isinstance(function, dict):
            for key in ("name", "arguments"):
                if isinstance(function.get(key), str):
                    call["function"][key] += function[key]
