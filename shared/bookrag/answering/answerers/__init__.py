"""Answerers: one port (`base.Answerer`), four adapters, chosen by `LLM_PROVIDER`.

Adapters are imported only when chosen: a container that answers extractively never imports an
HTTP client for an LLM, and one that calls Gemini never loads sentence-splitting code it won't use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from bookrag.answering.answerers.base import Answerer, Deadline, Draft

if TYPE_CHECKING:
    import httpx

    from bookrag.adapters.cohere import ClientProvider
    from bookrag.config.settings import Settings
    from bookrag.retrieval.retriever import Retriever

__all__ = ["Answerer", "Deadline", "Draft", "build_answerer"]


def build_answerer(settings: Settings, retriever: Retriever, *, cohere: ClientProvider,
                   http: Callable[[], httpx.Client]) -> Answerer:
    """The answerer LLM_PROVIDER names; its client comes from the container, on first use."""
    provider = settings.resolved_llm_provider
    if provider == "cohere":
        from bookrag.answering.answerers.cohere import CohereAnswerer

        return CohereAnswerer(settings, cohere)
    if provider in ("gemini", "openai"):
        from bookrag.answering.answerers.chat_completions import ChatCompletionsAnswerer

        return ChatCompletionsAnswerer(settings, provider, http)
    from bookrag.answering.answerers.extractive import ExtractiveAnswerer

    return ExtractiveAnswerer(retriever)
