"""The recipe for another LLM provider: a module with `build`, ONE entry in `bookrag.adapters.llm.PROVIDERS`,
and its key field in the settings (its environment variable). Nothing in answering or services changes:
a scripted in-process chat model registered so is what the container's answerer AND its follow-up
rewriter call, chosen by LLM_PROVIDER, on the indexed sample book.
"""

from __future__ import annotations

import re
from collections.abc import Generator
from typing import Any

import pytest

from bookrag.adapters.llm import PROVIDERS, Provider, SharedClients
from bookrag.adapters.llm.port import ChatReply, ChatRequest
from bookrag.answering.rewriters import REWRITE_MAX_TOKENS
from bookrag.config.llm import EXTRACTIVE, LLMKey, llm_providers
from bookrag.config.settings import Settings, load_settings
from bookrag.domain.conversation import Conversation, Turn
from bookrag.domain.deadline import Deadline
from bookrag.errors import ConfigError
from bookrag.services.container import container_for

HISTORY = (Turn("How do I install ROS 2 Humble?", "Install it with apt [1]."),)
REWRITTEN = "Which Ubuntu version does ROS 2 Humble need?"


class ScriptedChat:
    """A chat model that rewrites follow-ups to REWRITTEN and answers citing the first document it is shown."""

    cites_documents = False

    def __init__(self, name: str, model: str) -> None:
        self.name = name
        self.model = model
        self.requests: list[ChatRequest] = []

    def complete(self, request: ChatRequest, deadline: Deadline) -> ChatReply:
        self.requests.append(request)
        if not request.tools:
            return ChatReply(REWRITTEN)
        shown = re.findall(r'<document id="(S\d+)"', request.messages[1].content or "")
        return ChatReply(f"Humble binaries are built for Ubuntu 22.04 [{shown[0]}].")

    def stream(self, request: ChatRequest, deadline: Deadline) -> Generator[str, None, ChatReply]:
        reply = self.complete(request, deadline)
        yield reply.text
        return reply


def build(name: str, provider: Provider, settings: Settings, shared: SharedClients) -> ScriptedChat:
    """This module's `build`, as a provider's module has one."""
    return ScriptedChat(name, settings.llm_model or provider.model)


class ScriptedSettings(Settings):
    scripted_api_key: LLMKey = None  # SCRIPTED_API_KEY: declares LLM_PROVIDER=scripted to the settings


@pytest.fixture
def scripted(book_env: Settings, use_env: Any, monkeypatch: pytest.MonkeyPatch) -> ScriptedSettings:
    monkeypatch.setitem(PROVIDERS, "scripted", Provider(__name__, model="scripted-1"))  # the one registration
    use_env(LLM_PROVIDER="scripted", SCRIPTED_API_KEY="scripted-key")
    return ScriptedSettings()


def test_a_registered_provider_answers_and_rewrites_follow_ups(scripted: ScriptedSettings) -> None:
    container = container_for(scripted)
    chat = container.chat_model
    assert isinstance(chat, ScriptedChat) and chat.model == "scripted-1"

    response = container.agent.run("Which Ubuntu does it need?", Conversation(history=HISTORY))

    rewrite, answer = chat.requests  # one call each, to the one model
    assert rewrite.max_tokens == REWRITE_MAX_TOKENS and rewrite.attempts == 1 and not rewrite.tools
    assert [t.name for t in answer.tools] == ["retrieve_book_context"]
    assert response.standalone_question == REWRITTEN
    assert not response.is_refusal and "Ubuntu 22.04" in response.answer
    assert container.answerer.name == container.rewriter.name == "scripted"


def test_the_provider_must_be_declared_and_its_key_set(book_env: Settings, use_env: Any) -> None:
    use_env(LLM_PROVIDER="scripted")
    with pytest.raises(ConfigError, match="LLM_PROVIDER"):
        load_settings()  # no `scripted_api_key` field: not a provider of these settings
    with pytest.raises(ValueError, match="SCRIPTED_API_KEY"):
        ScriptedSettings()


def test_every_declared_provider_is_registered() -> None:
    assert set(PROVIDERS) == llm_providers(Settings) - {EXTRACTIVE}
