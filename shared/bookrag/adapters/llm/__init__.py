"""Chat models: one port (`port.ChatModel`), one module per wire format, one registry of providers.

`PROVIDERS` maps each LLM_PROVIDER to how its model is built: the module whose `build(name, provider,
settings, shared)` makes it, and the defaults (model, endpoint) that LLM_MODEL and `<NAME>_BASE_URL`
override. To add a provider:
1. its module here (none if it speaks a wire format we have: OpenAI-compatible endpoints share one);
2. one entry in `PROVIDERS`;
3. its key field `<name>_api_key: LLMKey` (and `<name>_base_url: BaseUrl`) in `config.settings.Settings`:
   the field is what makes LLM_PROVIDER=<name> valid there (see `config.llm`).
Nothing outside `adapters/` changes: the answerers and the follow-up rewriter take any `ChatModel`.

A provider's module is imported when its model is built: a container that answers with Cohere never
imports the OpenAI-compatible one, and this package imports no SDK or HTTP client.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from bookrag.adapters.llm.port import ChatModel
from bookrag.config.llm import EXTRACTIVE
from bookrag.errors import ConfigError

if TYPE_CHECKING:
    from bookrag.adapters.cohere import ClientProvider
    from bookrag.config.settings import Settings

__all__ = ["PROVIDERS", "ChatModel", "Provider", "SharedClients", "build_chat_model"]


@dataclass(frozen=True, slots=True)
class Provider:
    module: str  # dotted path of the module whose `build` makes the model
    model: str  # the model called unless LLM_MODEL names another
    base_url: str | None = None  # the endpoint unless <NAME>_BASE_URL names another
    shares_cohere: bool = False  # calls through the container's one Cohere client (a warm-up loads its SDK)


@dataclass(frozen=True, slots=True)
class SharedClients:
    """The container's clients a chat model may share with other components."""

    cohere: ClientProvider  # the one Cohere client (embed, rerank, chat), built on first use


PROVIDERS: dict[str, Provider] = {
    "cohere": Provider(f"{__name__}.cohere", model="command-r-plus-08-2024", shares_cohere=True),
    "gemini": Provider(f"{__name__}.openai_compat", model="gemini-2.0-flash",
                       base_url="https://generativelanguage.googleapis.com/v1beta/openai"),
    "openai": Provider(f"{__name__}.openai_compat", model="gpt-4o-mini", base_url="https://api.openai.com/v1"),
}


class Build(Protocol):
    def __call__(self, name: str, provider: Provider, settings: Settings, shared: SharedClients) -> ChatModel: ...


def build_chat_model(settings: Settings, shared: SharedClients) -> ChatModel | None:
    """The chat model LLM_PROVIDER names, or None for the extractive answerer (no model). Builds no
    client: each is built on the model's first call. Raises `ConfigError`."""
    name = settings.resolved_llm_provider
    if name == EXTRACTIVE:
        return None
    provider = PROVIDERS.get(name)
    if provider is None:  # a key field declared in the settings, no entry here
        raise ConfigError(f"LLM_PROVIDER={name} has no chat model (bookrag.adapters.llm.PROVIDERS)")
    build: Build = importlib.import_module(provider.module).build
    return build(name, provider, settings, shared)
