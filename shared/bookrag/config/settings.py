"""Settings: the only module that reads the environment.

Every other module receives a `Settings` (usually through `get_settings()`). A missing or invalid
setting fails at start with a `ConfigError` that names the variable, so a bad deployment fails its
first (cold) invocation instead of its hundredth request.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import re
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bookrag.config.llm import EXTRACTIVE, BaseUrl, LLMKey, blank_is_none, http_url, llm_key_rule, llm_providers
from bookrag.config.origins import parse_origin
from bookrag.errors import ConfigError

EmbeddingProvider = Literal["local", "cohere"]
RetrievalMode = Literal["hybrid", "dense", "sparse"]
SecretsSource = Literal["secretsmanager", "ssm"]
# Secrets Manager names and ARNs, SSM parameter names and ARNs.
SecretName = Annotated[str | None, Field(default=None, pattern=r"^[A-Za-z0-9/_+=.@:-]{1,2048}$")]


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _is_private(host: str) -> bool:
    """An address of a private network (RFC 1918, ULA, link-local) or a single-label name (no dot:
    resolved on the local network, e.g. a Docker Compose service); a public DNS name is not."""
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return "." not in host
    return address.is_private or address.is_link_local


_KEY_ID = r"[0-9a-f]{12}"
_ORIGIN = r"https?://[a-z0-9.\-\[\]:]+"
# `<key id>:<sha256 hex>`, and for a publishable key `@<origin>|<origin>...` (its allowed sites).
_BOOK = r"[a-z0-9](?:[a-z0-9]|-(?!-)){0,39}"  # `domain.books._BOOK_ID` (config sits below domain)
_KEY_HASH_ENTRY = re.compile(rf"^{_KEY_ID}:[0-9a-f]{{64}}(@{_ORIGIN}(\|{_ORIGIN})*)?(#{_BOOK}(\|{_BOOK})*)?$")


class AuthSettings(BaseSettings):
    """Caller authentication and rate limits: all the API Gateway authorizer function loads.

    A class of its own so that the authorizer validates nothing else (no Qdrant, Cohere or LLM
    configuration, no secrets to resolve); `Settings` inherits these fields for the HTTP functions.
    """

    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore", frozen=True)

    auth_enabled: bool = False
    # DynamoDB (Lambda): key records (read-only for the functions) and rate counters (TTL), two tables
    # so that no function that counts requests can also write a key.
    api_keys_table: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]{3,255}$")
    rate_limit_table: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]{3,255}$")
    # In memory (`bookrag serve`): comma-separated `<key id>:<sha256 hex>` entries from `bookrag.auth.guard.mint_key`.
    api_key_hashes: str | None = None
    rate_limit_per_minute: int = Field(default=60, ge=1, le=100_000)
    auth_failure_limit_per_minute: int = Field(default=10, ge=1, le=1_000)
    # A publishable key is shared by every reader of a site: each reader (source IP) gets this much of it.
    publishable_rate_limit_per_minute: int = Field(default=10, ge=1, le=1_000)

    @field_validator("api_keys_table", "rate_limit_table", "api_key_hashes", mode="before")
    @classmethod
    def _blank_table_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("api_key_hashes")
    @classmethod
    def _hash_entries(cls, value: str | None) -> str | None:
        if value is None:
            return None
        entries = [e.strip() for e in value.split(",") if e.strip()]
        if not entries or not all(_KEY_HASH_ENTRY.match(e) for e in entries):
            # Never echo the value: a pasted plaintext key would end up in the error message.
            raise ValueError("must be comma-separated '<key id>:<sha256 hex>[@<origin>|...][#<book>|...]' entries "
                             "(see bookrag mint-key)")
        return ",".join(entries)

    @model_validator(mode="after")
    def _auth_consistent(self) -> AuthSettings:
        if self.api_keys_table and self.api_key_hashes:
            raise ValueError("set API_KEYS_TABLE (DynamoDB) or API_KEY_HASHES (in memory), not both")
        if self.api_keys_table and not self.rate_limit_table:
            # A per-container in-memory counter would multiply the limit by the number of containers.
            raise ValueError("RATE_LIMIT_TABLE is required with API_KEYS_TABLE")
        if self.auth_enabled and not (self.api_keys_table or self.api_key_hashes):
            raise ValueError("AUTH_ENABLED requires API_KEYS_TABLE or API_KEY_HASHES")
        if self.auth_failure_limit_per_minute > self.rate_limit_per_minute:
            raise ValueError("AUTH_FAILURE_LIMIT_PER_MINUTE must not exceed RATE_LIMIT_PER_MINUTE "
                             "(failed authentication is limited more strictly)")
        return self


class Settings(AuthSettings):
    """All configuration, from environment variables of the same name in upper case."""

    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore", frozen=True)

    # --- Qdrant --------------------------------------------------------------------------------
    qdrant_url: str | None = None
    qdrant_host: str | None = None
    qdrant_port: int = Field(6333, ge=1, le=65535)
    # For QDRANT_HOST only (QDRANT_URL carries its scheme): None means https, except on loopback.
    # false (plain http) is for a private network and is refused with an API key on a public host.
    qdrant_https: bool | None = None
    qdrant_api_key: SecretStr | None = None
    qdrant_collection: str = Field("book_chunks", min_length=1, max_length=255, pattern=r"^[A-Za-z0-9_.-]+$")
    qdrant_path: Path = Path(".bookrag/qdrant")
    qdrant_timeout_s: float = Field(5.0, gt=0, le=25)
    # QDRANT_COLLECTION is an alias of the live book version: a warm process looks its target up at most
    # this often, so it serves a new version (or a rollback) within this many seconds of the switch.
    qdrant_alias_ttl_s: float = Field(5.0, ge=0, le=3600)

    # --- embeddings ----------------------------------------------------------------------------
    embedding_provider: EmbeddingProvider | None = None
    cohere_api_key: LLMKey = None  # also LLM_PROVIDER=cohere's
    cohere_base_url: str | None = None
    cohere_embed_model: str = "embed-english-v3.0"
    cohere_timeout_s: float = Field(5.0, gt=0, le=25)
    # Ingest is a batch job: it may wait out rate limits that a request must not.
    cohere_ingest_timeout_s: float = Field(30.0, gt=0, le=300)
    cohere_ingest_retries: int = Field(5, ge=0, le=10)
    cohere_rerank_model: str | None = None
    query_cache_size: int = Field(1024, ge=0, le=100_000)

    # --- book & ingest -------------------------------------------------------------------------
    book_base_url: str = "http://localhost:3000/docs"
    chunk_max_tokens: int = Field(200, ge=32, le=512)
    chunk_overlap_tokens: int = Field(32, ge=0, le=128)
    max_document_bytes: int = Field(2_000_000, ge=1_000)

    # --- browsers -------------------------------------------------------------------------------
    # Sites whose pages may call the API (CORS), comma-separated origins; empty: none (same-origin only,
    # e.g. /demo). A publishable key's origins must be listed here too, or browsers block its requests.
    cors_allowed_origins: str = Field("", max_length=4000)

    # --- MCP ------------------------------------------------------------------------------------
    # Host names /mcp answers to besides loopback and the API Gateway domain a request came in on
    # (a custom domain, comma-separated): the DNS-rebinding check refuses any other Host header.
    mcp_allowed_hosts: str = Field("", max_length=2000, pattern=r"^[A-Za-z0-9.:,*\[\] -]*$")

    # --- retrieval -----------------------------------------------------------------------------
    retrieval_mode: RetrievalMode = "hybrid"
    rrf_k: int = Field(60, ge=1, le=1000)
    diversity_max_per_section: int = Field(2, ge=0, le=10)

    # --- answering -----------------------------------------------------------------------------
    # LLM_PROVIDER: `extractive`, or a provider whose key field `<name>_api_key` is an `LLMKey` (its
    # chat model: `bookrag.adapters.llm.PROVIDERS`); `<name>_base_url` overrides its endpoint.
    llm_provider: str | None = None
    llm_model: str | None = None
    llm_timeout_s: float = Field(12.0, gt=0, le=25)
    llm_max_steps: int = Field(3, ge=1, le=6)
    gemini_api_key: LLMKey = None
    gemini_base_url: BaseUrl = None
    openai_api_key: LLMKey = None
    openai_base_url: BaseUrl = None
    # Conversation sessions (DynamoDB, Lambda); unset: kept in the process's memory (`bookrag serve`).
    sessions_table: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]{3,255}$")

    # The question log (what readers ask, for the book's owner): on unless QUESTION_LOG=off. Kept in
    # DynamoDB when QUESTION_LOG_TABLE is set (Lambda), else as JSON lines under QUESTION_LOG_PATH.
    question_log: Literal["on", "off"] = "on"
    question_log_table: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]{3,255}$")
    question_log_path: Path = Path(".bookrag/question-log")
    question_log_retention_days: int = Field(90, ge=1, le=3650)

    @field_validator("cors_allowed_origins")
    @classmethod
    def _origins(cls, value: str) -> str:
        return ",".join(dict.fromkeys(parse_origin(o) for o in value.split(",") if o.strip()))

    @property
    def cors_origins(self) -> frozenset[str]:
        return frozenset(o for o in self.cors_allowed_origins.split(",") if o)

    @field_validator("sessions_table", "question_log_table", mode="before")
    @classmethod
    def _blank_sessions_table_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    # --- secrets by reference (deployed) -------------------------------------------------------
    # Names of the Secrets Manager secrets (or SSM SecureString parameters) that hold the keys; a key
    # set by value wins over its name. LLM_API_KEY_SECRET_NAME holds the key of LLM_PROVIDER.
    cohere_api_key_secret_name: SecretName = None
    qdrant_api_key_secret_name: SecretName = None
    llm_api_key_secret_name: SecretName = None
    secrets_source: SecretsSource = "secretsmanager"
    # How long a fetched key is used before it is read again (so a rotation reaches warm containers).
    secrets_max_age_s: int = Field(300, ge=0, le=86_400)

    @field_validator("qdrant_url", "qdrant_host", "cohere_base_url",
                     "cohere_rerank_model", "llm_model", "cohere_api_key_secret_name", "qdrant_api_key_secret_name",
                     "llm_api_key_secret_name", mode="before")
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        return blank_is_none(value)

    @field_validator("qdrant_api_key", mode="before")
    @classmethod
    def _blank_secret_is_none(cls, value: object) -> object:
        return blank_is_none(value)

    @field_validator("qdrant_url", "cohere_base_url", "book_base_url")
    @classmethod
    def _must_be_http_url(cls, value: str | None) -> str | None:
        return http_url(value)

    @model_validator(mode="after")
    def _refuse_unsafe(self) -> Settings:
        if self.qdrant_url and (self.qdrant_api_key is not None or self.qdrant_api_key_secret_name):
            parts = urlsplit(self.qdrant_url)
            if parts.scheme != "https" and not _is_loopback(parts.hostname):
                raise ValueError("QDRANT_URL must use https when QDRANT_API_KEY is set (the key would travel in clear)")
        if (not self.qdrant_url and self.qdrant_host and self.qdrant_https is False
                and (self.qdrant_api_key is not None or self.qdrant_api_key_secret_name)
                and not _is_loopback(self.qdrant_host) and not _is_private(self.qdrant_host)):
            raise ValueError("QDRANT_HTTPS=false is refused with QDRANT_API_KEY on a public host (the key "
                             "would travel in clear); it is for a private network only")
        # A key may come by value or by name (resolved by `load_settings`, which validates again).
        cohere_key = self.cohere_api_key is not None or bool(self.cohere_api_key_secret_name)
        llm_key_named = bool(self.llm_api_key_secret_name)
        if self.resolved_embedding_provider == "cohere" and not cohere_key:
            raise ValueError("COHERE_API_KEY (or COHERE_API_KEY_SECRET_NAME) is required when "
                             "EMBEDDING_PROVIDER=cohere")
        missing_key = llm_key_rule(self, self.resolved_llm_provider, named=llm_key_named)
        if missing_key:
            raise ValueError(missing_key)
        if self.chunk_overlap_tokens >= self.chunk_max_tokens:
            raise ValueError("CHUNK_OVERLAP_TOKENS must be smaller than CHUNK_MAX_TOKENS")
        return self

    # --- derived ---------------------------------------------------------------------------------

    @property
    def resolved_embedding_provider(self) -> EmbeddingProvider:
        if self.embedding_provider is not None:
            return self.embedding_provider
        return "cohere" if self.cohere_api_key is not None else "local"

    @field_validator("llm_provider")
    @classmethod
    def _known_llm_provider(cls, value: str | None) -> str | None:
        names = llm_providers(cls)
        if value is not None and value not in names:
            raise ValueError(f"must be one of {', '.join(sorted(names))}")
        return value

    @property
    def resolved_llm_provider(self) -> str:
        """LLM_PROVIDER if set; else gemini when GEMINI_API_KEY is set (the agent contract's model);
        else the extractive answerer, which needs no key."""
        if self.llm_provider is not None:
            return self.llm_provider
        return "gemini" if self.gemini_api_key is not None else EXTRACTIVE

    @property
    def qdrant_location(self) -> str:
        """Where the store lives, for health output: never includes credentials."""
        if self.qdrant_remote_url:
            parts = urlsplit(self.qdrant_remote_url)
            return f"remote:{parts.hostname}"
        return "embedded"

    @property
    def qdrant_remote_url(self) -> str | None:
        if self.qdrant_url:
            return self.qdrant_url
        if self.qdrant_host:
            https = self.qdrant_https if self.qdrant_https is not None else not _is_loopback(self.qdrant_host)
            host = f"[{self.qdrant_host}]" if ":" in self.qdrant_host and not self.qdrant_host.startswith("[") \
                else self.qdrant_host
            return f"{'https' if https else 'http'}://{host}:{self.qdrant_port}"
        return None


def _describe(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        name = ".".join(str(p) for p in item["loc"]).upper() or "settings"
        problems.append(f"{name}: {item['msg']}")
    return "Invalid configuration: " + "; ".join(problems)


def _keys_by_name(settings: Settings) -> dict[str, tuple[str, str]]:
    """Keys still to fetch: the variable that names each -> (its secret name, the field it fills)."""
    wanted: dict[str, tuple[str, str]] = {}
    if settings.cohere_api_key is None and settings.cohere_api_key_secret_name:
        wanted["COHERE_API_KEY_SECRET_NAME"] = (settings.cohere_api_key_secret_name, "cohere_api_key")
    if settings.qdrant_api_key is None and settings.qdrant_api_key_secret_name:
        wanted["QDRANT_API_KEY_SECRET_NAME"] = (settings.qdrant_api_key_secret_name, "qdrant_api_key")
    llm_field = f"{settings.resolved_llm_provider}_api_key"
    if (llm_field in type(settings).model_fields and settings.llm_api_key_secret_name
            and getattr(settings, llm_field) is None and llm_field not in {f for _, f in wanted.values()}):
        wanted["LLM_API_KEY_SECRET_NAME"] = (settings.llm_api_key_secret_name, llm_field)
    return wanted


def load_settings(**overrides: object) -> Settings:
    """Build settings from the environment (plus explicit overrides); raise `ConfigError` naming the variable.

    Keys given by name (*_SECRET_NAME) are fetched through `bookrag.config.secrets` and the settings validated
    again with them, so a deployed function fails its cold start on a missing or unreadable secret.
    """
    try:
        settings = Settings(**overrides)  # type: ignore[arg-type]
        wanted = _keys_by_name(settings)
        if not wanted:
            return settings
        from bookrag.config.secrets import resolve  # imports boto3: only when a key is given by name

        values = resolve({variable: name for variable, (name, _) in wanted.items()},
                         source=settings.secrets_source, max_age_s=settings.secrets_max_age_s)
        fetched = {field: values[variable] for variable, (_, field) in wanted.items()}
        return Settings(**{**overrides, **fetched})  # type: ignore[arg-type]
    except ValidationError as error:
        raise ConfigError(_describe(error)) from None


class _SettingsCache:
    """`get_settings()`: the settings, read once per container.

    Settings that fetched keys by name are read again once SECRETS_MAX_AGE_S has passed, so a rotated
    key reaches a warm container. Unchanged settings compare equal, so the clients cached per settings
    are kept; a failed re-read keeps the previous settings (and tries again after another max age).
    Ages are measured on the wall clock, which (unlike the monotonic one) moves on across a SnapStart
    snapshot: a container restored long after its snapshot re-reads its keys on its first request.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._settings: Settings | None = None
        self._stale_at = math.inf

    def __call__(self) -> Settings:
        settings = self._settings
        if settings is not None and time.time() < self._stale_at:
            return settings
        with self._lock:
            previous = self._settings
            if previous is None:
                return self._keep(load_settings())  # a failure is not cached: the next call tries again
            if time.time() < self._stale_at:
                return previous  # another thread re-read them while this one waited
            try:
                return self._keep(load_settings())
            except ConfigError as exc:
                logging.getLogger("bookrag.config.settings").warning(
                    "settings re-read failed; keeping the previous ones", extra={"reason": exc.message})
                self._stale_at = time.time() + max(1, previous.secrets_max_age_s)
                return previous

    def _keep(self, settings: Settings) -> Settings:
        self._settings = settings
        named = settings.cohere_api_key_secret_name or settings.qdrant_api_key_secret_name \
            or settings.llm_api_key_secret_name
        self._stale_at = time.time() + settings.secrets_max_age_s if named else math.inf
        return settings

    def cache_clear(self) -> None:
        with self._lock:
            self._settings = None
            self._stale_at = math.inf


get_settings = _SettingsCache()


@lru_cache(maxsize=1)
def get_auth_settings() -> AuthSettings:
    """Only the authentication settings (for the authorizer function); raises `ConfigError`."""
    try:
        return AuthSettings()
    except ValidationError as error:
        raise ConfigError(_describe(error)) from None
