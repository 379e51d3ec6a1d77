"""Answerers: one port (`base.Answerer`), three adapters, chosen by the chat model LLM_PROVIDER names.

No model (`extractive`): the extractive answerer. A model that grounds natively on documents and cites
them (Cohere): `native_citations`. Any other model (Gemini, OpenAI-compatible): `tool_calling`, the
tool loop. Adapters are imported only when chosen: a container that answers with an LLM never loads
sentence-splitting code it won't use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bookrag.answering.answerers.base import Answerer, Draft

if TYPE_CHECKING:
    from bookrag.adapters.llm.port import ChatModel
    from bookrag.config.settings import Settings
    from bookrag.retrieval.retriever import Retriever

__all__ = ["Answerer", "Draft", "build_answerer"]


def build_answerer(settings: Settings, retriever: Retriever, chat: ChatModel | None) -> Answerer:
    """The answerer of `chat`, the container's chat model (None: the extractive answerer)."""
    if chat is None:
        from bookrag.answering.answerers.extractive import ExtractiveAnswerer

        return ExtractiveAnswerer(retriever)
    if chat.cites_documents:
        from bookrag.answering.answerers.native_citations import NativeCitationsAnswerer

        return NativeCitationsAnswerer(chat, retriever.book_title)
    from bookrag.answering.answerers.tool_calling import ToolCallingAnswerer

    return ToolCallingAnswerer(settings, chat, retriever.book_title)
