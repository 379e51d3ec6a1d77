"""Answerers: one port (`base.Answerer`), four adapters, chosen by `LLM_PROVIDER`.

Adapters are imported only when chosen: a container that answers extractively never imports an
HTTP client for an LLM, and one that calls Gemini never loads sentence-splitting code it won't use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bookrag.answering.answerers.base import Answerer, Deadline, Draft
from bookrag.contracts.agent import REFUSAL

if TYPE_CHECKING:
    from bookrag.config.settings import Settings
    from bookrag.retrieval.retriever import Retriever

__all__ = ["REFUSAL", "Answerer", "Deadline", "Draft", "build_answerer"]


def build_answerer(settings: Settings, retriever: Retriever) -> Answerer:
    provider = settings.resolved_llm_provider
    if provider == "cohere":
        from bookrag.answering.answerers.cohere import CohereAnswerer

        return CohereAnswerer(settings)
    if provider in ("gemini", "openai"):
        from bookrag.answering.answerers.chat_completions import ChatCompletionsAnswerer

        return ChatCompletionsAnswerer(settings, provider)
    from bookrag.answering.answerers.extractive import ExtractiveAnswerer

    return ExtractiveAnswerer(retriever)
