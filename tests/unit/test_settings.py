from __future__ import annotations

from typing import Any

import pytest

from bookrag.config.settings import get_settings, load_settings
from bookrag.errors import ConfigError


def test_defaults_are_offline() -> None:
    s = load_settings()
    assert s.resolved_embedding_provider == "local"
    assert s.qdrant_remote_url is None and s.qdrant_location == "embedded"
    assert s.resolved_llm_provider == "extractive"


def test_cohere_is_default_when_its_key_is_set(use_env: Any) -> None:
    use_env(COHERE_API_KEY="k")
    assert get_settings().resolved_embedding_provider == "cohere"


def test_host_and_port_build_the_url(use_env: Any) -> None:
    use_env(QDRANT_HOST="qdrant.internal", QDRANT_PORT="6334")
    assert get_settings().qdrant_remote_url == "https://qdrant.internal:6334"  # https unless loopback


@pytest.mark.parametrize(("env", "variable"), [
    ({"QDRANT_PORT": "0"}, "QDRANT_PORT"),
    ({"QDRANT_PORT": "not-a-port"}, "QDRANT_PORT"),
    ({"EMBEDDING_PROVIDER": "openai"}, "EMBEDDING_PROVIDER"),
    ({"QDRANT_URL": "ftp://x"}, "QDRANT_URL"),
    ({"EMBEDDING_PROVIDER": "cohere"}, "COHERE_API_KEY"),
    ({"LLM_PROVIDER": "gemini"}, "GEMINI_API_KEY"),
    ({"QDRANT_URL": "http://qdrant.example.com", "QDRANT_API_KEY": "secret-key"}, "QDRANT_URL"),
])
def test_invalid_settings_name_the_variable(use_env: Any, env: dict[str, str], variable: str) -> None:
    use_env(**env)
    with pytest.raises(ConfigError) as caught:
        get_settings()
    assert variable in str(caught.value)
    assert "secret-key" not in str(caught.value)


def test_api_key_over_http_is_allowed_on_loopback(use_env: Any) -> None:
    use_env(QDRANT_URL="http://127.0.0.1:6333", QDRANT_API_KEY="k")
    assert get_settings().qdrant_remote_url == "http://127.0.0.1:6333"


def test_secret_values_do_not_show_in_repr(use_env: Any) -> None:
    use_env(COHERE_API_KEY="co-canary-123")
    assert "co-canary-123" not in repr(get_settings())


def test_blank_values_count_as_unset(use_env: Any) -> None:
    use_env(QDRANT_URL="", COHERE_API_KEY=" ")
    s = get_settings()
    assert s.qdrant_remote_url is None and s.resolved_embedding_provider == "local"
