"""Settings: the only module that reads the environment.

Every other module receives a `Settings` (usually through `get_settings()`). A missing or invalid
setting fails at start with a `ConfigError` that names the variable, so a bad deployment fails its
first (cold) invocation instead of its hundredth request.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bookrag.errors import ConfigError

EmbeddingProvider = Literal["local", "cohere"]
LLMProvider = Literal["extractive", "cohere", "gemini", "openai"]
RetrievalMode = Literal["hybrid", "dense", "sparse"]


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Settings(BaseSettings):
    """All configuration, from environment variables of the same name in upper case."""

    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore", frozen=True)

    # --- Qdrant --------------------------------------------------------------------------------
    qdrant_url: str | None = None
    qdrant_host: str | None = None
    qdrant_port: int = Field(6333, ge=1, le=65535)
    qdrant_api_key: SecretStr | None = None
    qdrant_collection: str = Field("book_chunks", min_length=1, max_length=255, pattern=r"^[A-Za-z0-9_.-]+$")
    qdrant_path: Path = Path(".bookrag/qdrant")
    qdrant_timeout_s: float = Field(5.0, gt=0, le=25)

    # --- embeddings ----------------------------------------------------------------------------
    embedding_provider: EmbeddingProvider | None = None
    cohere_api_key: SecretStr | None = None
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

    # --- retrieval -----------------------------------------------------------------------------
    retrieval_mode: RetrievalMode = "hybrid"
    rrf_k: int = Field(60, ge=1, le=1000)
    diversity_max_per_section: int = Field(2, ge=0, le=10)

    # --- answering -----------------------------------------------------------------------------
    llm_provider: LLMProvider | None = None
    llm_model: str | None = None
    llm_timeout_s: float = Field(12.0, gt=0, le=25)
    llm_max_steps: int = Field(3, ge=1, le=6)
    gemini_api_key: SecretStr | None = None
    gemini_base_url: str | None = None
    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = None

    @field_validator("qdrant_url", "qdrant_host", "cohere_base_url", "gemini_base_url", "openai_base_url",
                     "cohere_rerank_model", "llm_model", mode="before")
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        # SAM passes unset parameters as empty strings; treat them as absent.
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("qdrant_api_key", "cohere_api_key", "gemini_api_key", "openai_api_key", mode="before")
    @classmethod
    def _blank_secret_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("qdrant_url", "cohere_base_url", "gemini_base_url", "openai_base_url", "book_base_url")
    @classmethod
    def _must_be_http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http(s) URL")
        return value.rstrip("/")

    @model_validator(mode="after")
    def _refuse_unsafe(self) -> Settings:
        if self.qdrant_url and self.qdrant_api_key is not None:
            parts = urlsplit(self.qdrant_url)
            if parts.scheme != "https" and not _is_loopback(parts.hostname):
                raise ValueError("QDRANT_URL must use https when QDRANT_API_KEY is set (the key would travel in clear)")
        if self.resolved_embedding_provider == "cohere" and self.cohere_api_key is None:
            raise ValueError("COHERE_API_KEY is required when EMBEDDING_PROVIDER=cohere")
        provider = self.resolved_llm_provider
        if provider == "gemini" and self.gemini_api_key is None:
            raise ValueError("GEMINI_API_KEY is required when LLM_PROVIDER=gemini")
        if provider == "openai" and self.openai_api_key is None:
            raise ValueError("OPENAI_API_KEY is required when LLM_PROVIDER=openai")
        if provider == "cohere" and self.cohere_api_key is None:
            raise ValueError("COHERE_API_KEY is required when LLM_PROVIDER=cohere")
        if self.chunk_overlap_tokens >= self.chunk_max_tokens:
            raise ValueError("CHUNK_OVERLAP_TOKENS must be smaller than CHUNK_MAX_TOKENS")
        return self

    # --- derived ---------------------------------------------------------------------------------

    @property
    def resolved_embedding_provider(self) -> EmbeddingProvider:
        if self.embedding_provider is not None:
            return self.embedding_provider
        return "cohere" if self.cohere_api_key is not None else "local"

    @property
    def resolved_llm_provider(self) -> LLMProvider:
        return self.llm_provider or "extractive"

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
            return f"http://{self.qdrant_host}:{self.qdrant_port}"
        return None


def _describe(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        name = ".".join(str(p) for p in item["loc"]).upper() or "settings"
        problems.append(f"{name}: {item['msg']}")
    return "Invalid configuration: " + "; ".join(problems)


def load_settings(**overrides: object) -> Settings:
    """Build settings from the environment (plus explicit overrides); raise `ConfigError` naming the variable."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as error:
        raise ConfigError(_describe(error)) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once per container."""
    return load_settings()
