"""Gemini 2.0 Flash and any OpenAI-compatible endpoint: chat completions with tool calling, over httpx.

Gemini speaks the OpenAI wire format at `.../v1beta/openai/`, so one adapter serves both. It uses
plain `httpx` (already in the layer: qdrant-client and cohere depend on it) rather than the `openai`
or `google-genai` SDKs, which would add megabytes and import time to the Lambda package for two
POST requests.

The first `retrieve_book_context` call is made by the agent before the model runs (the contract's
"always retrieve first" is enforced in code, not left to the model); its result is in the user
message. The model may then call the tool again with a reformulated query, for at most
`llm_max_steps` model calls in total, the last of them without tools so that it must answer.
Every call's timeout is capped by the request's `Deadline`.

`stream` runs the same loop with `"stream": true` on every call (any call may turn out to be the
answer: a model usually answers at once from the first results), reading the OpenAI wire format's
Server-Sent Events (`data: {chunk}` lines, then `data: [DONE]`) and yielding content as it arrives.
A call is retried only until its first chunk with content or a tool call has been read, so no text
is ever sent twice; after that a failure ends the stream with the same typed error `answer` raises.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Iterator
from itertools import chain
from typing import TYPE_CHECKING, Any

from bookrag.adapters.cohere import translate_http_error
from bookrag.adapters.retrying import call_with_retries
from bookrag.answering.answerers.base import (
    SYSTEM_PROMPT,
    Deadline,
    DocumentSet,
    Draft,
    NotTheAnswer,
    Retrieve,
    drained,
    is_refusal_text,
    render_documents,
    run_within,
    user_message,
)
from bookrag.contracts.tools import TOOL_DEFINITIONS
from bookrag.domain.models import SearchHit
from bookrag.domain.query import normalize_query
from bookrag.errors import BookRAGError, ConfigError

if TYPE_CHECKING:
    import httpx

    from bookrag.config.settings import Settings

DEFAULTS = {
    "gemini": ("https://generativelanguage.googleapis.com/v1beta/openai", "gemini-2.0-flash"),
    "openai": ("https://api.openai.com/v1", "gpt-4o-mini"),
}
RETRIEVE_TOOL = next(d for d in TOOL_DEFINITIONS if d["name"] == "retrieve_book_context")
# A model-requested search may use what is left minus the final answer's reserve, if that is at least
# MIN_SEARCH_S; past its budget it is abandoned and the model answers from what it has.
FINAL_ANSWER_RESERVE_S = 5.0
MIN_SEARCH_S = 0.5
MAX_TOOL_CALLS_PER_STEP = 3


def build_http_client(settings: Settings) -> httpx.Client:
    """The HTTP pool of the configured chat provider; no redirects, explicit timeouts."""
    import httpx

    provider = settings.resolved_llm_provider
    if provider not in DEFAULTS:
        raise ConfigError(f"LLM_PROVIDER={provider} does not speak the chat-completions API")
    key = settings.gemini_api_key if provider == "gemini" else settings.openai_api_key
    if key is None:
        raise ConfigError(f"{provider.upper()}_API_KEY is not set")
    base = (settings.gemini_base_url if provider == "gemini" else settings.openai_base_url) or DEFAULTS[provider][0]
    timeout = httpx.Timeout(settings.llm_timeout_s, connect=min(3.0, settings.llm_timeout_s))
    return httpx.Client(base_url=base.rstrip("/") + "/", timeout=timeout, follow_redirects=False,
                        headers={"Authorization": f"Bearer {key.get_secret_value()}"})


class ChatCompletionsAnswerer:
    marks_inline = True  # the model writes the markers into its text

    def __init__(self, settings: Settings, provider: str, http: Callable[[], httpx.Client]) -> None:
        self.settings = settings
        self._http = http
        self.provider = provider
        self.name = provider
        self.model = settings.llm_model or DEFAULTS[provider][1]

    def answer(self, question: str, hits: list[SearchHit], retrieve: Retrieve, deadline: Deadline) -> Draft:
        """Raises `AnswerError` subclasses, and whatever `retrieve` raises for a model-requested search."""
        return drained(self._tool_loop(question, hits, retrieve, deadline, streaming=False))[1]

    def stream(self, question: str, hits: list[SearchHit], retrieve: Retrieve, deadline: Deadline,
               documents: DocumentSet | None = None) -> Generator[str, None, Draft]:
        """`answer`, yielding the model's text as it arrives; raises as `answer` does, also after
        some text has been yielded (the agent's stream then ends with its error event)."""
        return (yield from self._tool_loop(question, hits, retrieve, deadline, streaming=True, docs=documents))

    def _tool_loop(self, question: str, hits: list[SearchHit], retrieve: Retrieve, deadline: Deadline, *,
                   streaming: bool, docs: DocumentSet | None = None) -> Generator[str, None, Draft]:
        """The tool loop shared by `answer` and `stream`: the same requests (but `stream`), the same
        message handling, the same draft for the same model output."""
        docs = DocumentSet() if docs is None else docs
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user_message(question, docs.add(hits))},
        ]
        steps = self.settings.llm_max_steps
        for step in range(steps):
            body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0}
            if step < steps - 1:
                body["tools"] = [{"type": "function", "function": RETRIEVE_TOOL}]
            message = (yield from self._stream_message(body, deadline)) if streaming else self._complete(body, deadline)
            raw_calls = message.get("tool_calls")
            calls = [{**c, "id": str(c.get("id") or f"call_{step}_{i}")}
                     for i, c in enumerate(raw_calls[:MAX_TOOL_CALLS_PER_STEP] if isinstance(raw_calls, list) else [])
                     if isinstance(c, dict)]
            if calls and step < steps - 1:
                if streaming and message.get("content"):
                    # Text before a tool call ("Let me search.") has been streamed but is not the
                    # answer: a line break keeps the answer from running on from it.
                    yield NotTheAnswer("\n")
                messages.append({"role": "assistant", "content": message.get("content"), "tool_calls": calls})
                messages.extend({"role": "tool", "tool_call_id": c["id"],
                                 "content": self._run_tool(c, docs, retrieve, deadline)} for c in calls)
                continue
            text = message.get("content")
            text = text if isinstance(text, str) else ""
            if is_refusal_text(text):
                return Draft(text, refused=True, reason="model_refused")
            return Draft(text, citations=docs.citations())
        raise AssertionError("unreachable: the last step offers no tools")  # pragma: no cover

    def _run_tool(self, call: dict[str, Any], docs: DocumentSet, retrieve: Retrieve, deadline: Deadline) -> str:
        function = call.get("function") or {}
        if function.get("name") != RETRIEVE_TOOL["name"]:
            return "Unknown tool. The only tool is retrieve_book_context."
        try:
            args = json.loads(function.get("arguments") or "{}")
        except ValueError:
            args = None
        query = normalize_query(args["query"]) if isinstance(args, dict) and isinstance(args.get("query"), str) else ""
        if not query or len(query) > 1000:
            return "Invalid arguments: query must be a non-empty string of at most 1000 characters."
        budget = deadline.remaining() - FINAL_ANSWER_RESERVE_S
        if budget < MIN_SEARCH_S:
            return "No time left for another search: answer from the documents you already have."
        try:
            hits = run_within(lambda: retrieve(query), budget)
        except TimeoutError:
            return "The search took too long: answer from the documents you already have."
        return render_documents(docs.add(hits))

    def _complete(self, body: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
        client = self._http()

        def attempt() -> dict[str, Any]:
            import httpx

            timeout = deadline.timeout(self.settings.llm_timeout_s)
            try:
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
                # 200 with a body we cannot read: a broken upstream (retried once).
                raise translate_http_error(ValueError(), "answer", response.status_code) from None
            return message

        return call_with_retries(attempt, attempts=2, max_wait=1.0, retry_timeouts=False)

    def _stream_message(self, body: dict[str, Any], deadline: Deadline) -> Generator[str, None, dict[str, Any]]:
        """One streamed call: yields its content as it arrives and returns the message `_complete`
        would have returned for the same output (content, tool calls assembled from their pieces)."""
        client = self._http()
        body = {**body, "stream": True}

        def opened() -> tuple[httpx.Response, Iterator[dict[str, Any]]]:
            import httpx

            timeout = deadline.timeout(self.settings.llm_timeout_s)
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

        response, deltas = call_with_retries(opened, attempts=2, max_wait=1.0, retry_timeouts=False)
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
        message: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
        if calls:
            message["tool_calls"] = [calls[i] for i in sorted(calls)]
        return message


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
                raise translate_http_error(ValueError(), "answer", response.status_code) from None
            finished = finished or bool(choice.get("finish_reason"))
            if delta.get("content") or delta.get("tool_calls"):
                yield delta
    except BookRAGError:
        raise
    except httpx.HTTPError as exc:
        raise translate_http_error(exc, "answer") from None
    if not finished:  # the connection closed mid-answer: what arrived is not the model's whole reply
        raise translate_http_error(ValueError(), "answer", response.status_code)


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
        function = piece.get("function")
        if isinstance(function, dict):
            for key in ("name", "arguments"):
                if isinstance(function.get(key), str):
                    call["function"][key] += function[key]
