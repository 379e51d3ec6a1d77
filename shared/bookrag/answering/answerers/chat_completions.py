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
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bookrag.adapters.cohere import translate_http_error
from bookrag.adapters.retrying import call_with_retries
from bookrag.answering.answerers.base import (
    SYSTEM_PROMPT,
    Deadline,
    DocumentSet,
    Draft,
    Retrieve,
    is_refusal_text,
    render_documents,
    run_within,
    user_message,
)
from bookrag.contracts.tools import TOOL_DEFINITIONS
from bookrag.domain.models import SearchHit
from bookrag.domain.query import normalize_query
from bookrag.errors import ConfigError

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
    def __init__(self, settings: Settings, provider: str, http: Callable[[], httpx.Client]) -> None:
        self.settings = settings
        self._http = http
        self.provider = provider
        self.name = provider
        self.model = settings.llm_model or DEFAULTS[provider][1]

    def answer(self, question: str, hits: list[SearchHit], retrieve: Retrieve, deadline: Deadline) -> Draft:
        """Raises `AnswerError` subclasses, and whatever `retrieve` raises for a model-requested search."""
        docs = DocumentSet()
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user_message(question, docs.add(hits))},
        ]
        steps = self.settings.llm_max_steps
        for step in range(steps):
            body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0}
            if step < steps - 1:
                body["tools"] = [{"type": "function", "function": RETRIEVE_TOOL}]
            message = self._complete(body, deadline)
            raw_calls = message.get("tool_calls")
            calls = [{**c, "id": str(c.get("id") or f"call_{step}_{i}")}
                     for i, c in enumerate(raw_calls[:MAX_TOOL_CALLS_PER_STEP] if isinstance(raw_calls, list) else [])
                     if isinstance(c, dict)]
            if calls and step < steps - 1:
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
