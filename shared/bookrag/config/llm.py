"""Which values LLM_PROVIDER takes, read from the settings' own fields: a provider is declared to the
settings by its key field alone.

A field `<name>_api_key` typed `LLMKey` makes LLM_PROVIDER=<name> valid, and its key required (by value,
by LLM_API_KEY_SECRET_NAME, or by its own `<name>_api_key_secret_name` when there is one). How a provider
is called is not configuration: that is the adapters' registry (`bookrag.adapters.llm.PROVIDERS`), which
config cannot import (layers point down), so the settings know the names through the fields their
environment variables need anyway, and nothing else. `extractive` needs no model and no key.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, BeforeValidator, SecretStr

EXTRACTIVE = "extractive"


def blank_is_none(value: object) -> object:
    # SAM passes unset parameters as empty strings; treat them as absent.
    return None if isinstance(value, str) and not value.strip() else value


def http_url(value: str | None) -> str | None:
    if value is None:
        return None
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http(s) URL")
    return value.rstrip("/")


class _LLMKeyMark:
    """The mark of an `LLMKey` field (pydantic keeps it in the field's metadata)."""


LLM_KEY = _LLMKeyMark()
LLMKey = Annotated[SecretStr | None, BeforeValidator(blank_is_none), LLM_KEY]
# A provider's endpoint (`<name>_base_url`): absent when blank, else an http(s) URL without its last slash.
BaseUrl = Annotated[str | None, BeforeValidator(blank_is_none), AfterValidator(http_url)]


def llm_providers(settings: type[BaseModel]) -> frozenset[str]:
    """LLM_PROVIDER's valid values for these settings: `extractive` and every `LLMKey` field's provider."""
    return frozenset({EXTRACTIVE} | {name.removesuffix("_api_key") for name, info in settings.model_fields.items()
                                     if name.endswith("_api_key") and LLM_KEY in info.metadata})


def llm_key_rule(settings: BaseModel, provider: str, *, named: bool) -> str | None:
    """Why `settings` cannot call `provider` (its key is missing), or None. `named`: LLM_API_KEY_SECRET_NAME
    is set (its key is fetched by name, then validated again)."""
    field = f"{provider}_api_key"
    if field not in type(settings).model_fields:
        return None
    own_name = f"{field}_secret_name"
    if getattr(settings, field) is not None or named or getattr(settings, own_name, None):
        return None
    alternatives = [own_name.upper()] if own_name in type(settings).model_fields else []
    return (f"{field.upper()} (or {' or '.join([*alternatives, 'LLM_API_KEY_SECRET_NAME'])}) is required "
            f"when LLM_PROVIDER={provider}")


def llm_key(settings: BaseModel, provider: str) -> SecretStr | None:
    """The key of LLM_PROVIDER=`provider` (its `<provider>_api_key`), if it declares one and it is set."""
    key = getattr(settings, f"{provider}_api_key", None)
    return key if isinstance(key, SecretStr) else None


def llm_base_url(settings: BaseModel, provider: str) -> str | None:
    """The endpoint `<PROVIDER>_BASE_URL` sets for `provider`, if it declares one and it is set."""
    url = getattr(settings, f"{provider}_base_url", None)
    return url if isinstance(url, str) else None
