"""An agent answering with a configured LLM over a store that is already open (its retriever is shared)."""

from __future__ import annotations

from typing import Any

from bookrag.answering.agent import BookRAGAgent
from bookrag.answering.answerers import build_answerer
from bookrag.config.settings import Settings, load_settings
from bookrag.services.container import container_for


def llm_agent(store: Settings, **llm: Any) -> BookRAGAgent:
    """The agent on `store`'s retriever (the embedded store is opened once per process) with the LLM settings
    `llm`; the model's clients come from the container of those settings."""
    settings = load_settings(qdrant_path=store.qdrant_path, embedding_provider="local", **llm)
    retriever = container_for(store).retriever
    return BookRAGAgent(settings, retriever, build_answerer(settings, retriever, container_for(settings).chat_model))
