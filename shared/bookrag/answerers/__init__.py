"""Answerers: one port (`base.Answerer`), four adapters, chosen by `LLM_PROVIDER`.

Adapters are imported only when chosen: a container that answers extractively never imports an
HTTP client for an LLM, and one that calls Gemini never loads sentence-splitting code it won't use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bookrag.answerers.base import REFUSAL, Answerer, Deadline, Draft

if TYPE_CHECKING:
    from bookrag.retrieval import Retriever
    from bookrag.settings import Settings

__all__ = ["REFUSAL", "Answerer", "Deadline", "Draft", "build_answerer"]


def build_answerer(settings: Settings, retriever: Retriever) -> Answerer:
    provider = settings.resolved_llm_provider
    if provider == "cohere":
        from bookrag.answerers.cohere import CohereAnswerer

        return CohereAnswerer(settings)
    if provider in ("gemini", "openai"):
        from bookrag.answerers.chat_completions import ChatCompletionsAnswerer

        return ChatCompletionsAnswerer(settings, provider)
    from bookrag.answerers.extractive import ExtractiveAnswerer

    return ExtractiveAnswerer(retriever)
