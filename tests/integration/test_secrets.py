"""Keys by reference: Secrets Manager and SSM (moto's `mock_aws`), resolved by `get_settings()`."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from bookrag.config.settings import get_settings
from bookrag.errors import ConfigError

COHERE_SECRET = "co-canary-sm-0b5e"
QDRANT_SECRET = "qd-canary-sm-77aa"
LLM_SECRET = "llm-canary-sm-19f3"
QDRANT_URL = "https://qdrant.example.test"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A mocked AWS account in us-east-1, with fresh Powertools parameter providers and caches."""
    import boto3
    from aws_lambda_powertools.utilities.parameters import base
    from moto import mock_aws

    for name in ("AWS_PROFILE", "AWS_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SECRETS_MANAGER",
                 "AWS_ENDPOINT_URL_SSM", "POWERTOOLS_PARAMETERS_MAX_AGE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    base.DEFAULT_PROVIDERS.clear()
    with mock_aws():
        yield {"secretsmanager": boto3.client("secretsmanager"), "ssm": boto3.client("ssm")}
    base.DEFAULT_PROVIDERS.clear()


def _cohere_and_qdrant_by_name(use_env: Callable[..., None], **extra: str) -> None:
    use_env(EMBEDDING_PROVIDER="cohere", COHERE_API_KEY_SECRET_NAME="bookrag/cohere-api-key",
            QDRANT_URL=QDRANT_URL, QDRANT_API_KEY_SECRET_NAME="bookrag/qdrant-api-key", **extra)


def test_keys_come_from_secrets_manager_by_name(aws: dict[str, Any], use_env: Callable[..., None]) -> None:
    # GIVEN the template's configuration: names, not values
    sm = aws["secretsmanager"]
    sm.create_secret(Name="bookrag/cohere-api-key", SecretString=COHERE_SECRET)
    sm.create_secret(Name="bookrag/qdrant-api-key", SecretString=QDRANT_SECRET)
    sm.create_secret(Name="bookrag/llm-api-key", SecretString=f'{{"GEMINI_API_KEY": "{LLM_SECRET}"}}')
    _cohere_and_qdrant_by_name(use_env, LLM_PROVIDER="gemini", LLM_API_KEY_SECRET_NAME="bookrag/llm-api-key")

    # WHEN the settings are read
    settings = get_settings()

    # THEN each key is the secret's value (a one-entry JSON secret, the console's default, included)
    assert settings.cohere_api_key is not None and settings.cohere_api_key.get_secret_value() == COHERE_SECRET
    assert settings.qdrant_api_key is not None and settings.qdrant_api_key.get_secret_value() == QDRANT_SECRET
    assert settings.gemini_api_key is not None and settings.gemini_api_key.get_secret_value() == LLM_SECRET
    assert settings.resolved_embedding_provider == "cohere"
    assert COHERE_SECRET not in repr(settings) and QDRANT_SECRET not in str(settings)


def test_keys_come_from_ssm_secure_strings(aws: dict[str, Any], use_env: Callable[..., None]) -> None:
    ssm = aws["ssm"]
    ssm.put_parameter(Name="/bookrag/cohere", Value=COHERE_SECRET, Type="SecureString")
    ssm.put_parameter(Name="/bookrag/openai", Value=LLM_SECRET, Type="SecureString")
    use_env(SECRETS_SOURCE="ssm", EMBEDDING_PROVIDER="cohere", COHERE_API_KEY_SECRET_NAME="/bookrag/cohere",
            LLM_PROVIDER="openai", LLM_API_KEY_SECRET_NAME="/bookrag/openai")

    settings = get_settings()

    assert settings.cohere_api_key is not None and settings.cohere_api_key.get_secret_value() == COHERE_SECRET
    assert settings.openai_api_key is not None and settings.openai_api_key.get_secret_value() == LLM_SECRET


def test_a_key_by_value_wins_and_unused_names_are_not_fetched(aws: dict[str, Any],
                                                              use_env: Callable[..., None]) -> None:
    # GIVEN names of secrets that do not exist, a Cohere key by value, and the extractive answerer
    use_env(EMBEDDING_PROVIDER="cohere", COHERE_API_KEY="co-by-value", COHERE_API_KEY_SECRET_NAME="missing/one",
            LLM_API_KEY_SECRET_NAME="missing/two")

    # WHEN / THEN nothing is fetched, so nothing fails
    settings = get_settings()
    assert settings.cohere_api_key is not None and settings.cohere_api_key.get_secret_value() == "co-by-value"
    assert settings.gemini_api_key is None and settings.openai_api_key is None


def test_a_missing_secret_fails_the_cold_start_naming_the_variable(aws: dict[str, Any],
                                                                   use_env: Callable[..., None]) -> None:
    use_env(EMBEDDING_PROVIDER="cohere", COHERE_API_KEY_SECRET_NAME="bookrag/nope")

    with pytest.raises(ConfigError) as caught:
        get_settings()

    message = caught.value.message
    assert "COHERE_API_KEY_SECRET_NAME" in message and "ResourceNotFoundException" in message
    assert "arn:" not in message and "123456789012" not in message


@pytest.mark.parametrize("value", ["   ", '{"a": "1", "b": "2"}', '{"a": 1}', "{not json"])
def test_an_empty_or_ambiguous_secret_is_refused(aws: dict[str, Any], use_env: Callable[..., None],
                                                 value: str) -> None:
    aws["secretsmanager"].create_secret(Name="bookrag/cohere-api-key", SecretString=value)
    use_env(EMBEDDING_PROVIDER="cohere", COHERE_API_KEY_SECRET_NAME="bookrag/cohere-api-key")

    with pytest.raises(ConfigError) as caught:
        get_settings()

    assert "COHERE_API_KEY_SECRET_NAME" in caught.value.message
    assert not value.strip() or value.strip() not in caught.value.message


def test_a_named_qdrant_key_still_requires_https(use_env: Callable[..., None]) -> None:
    use_env(QDRANT_URL="http://qdrant.example.test", QDRANT_API_KEY_SECRET_NAME="bookrag/qdrant-api-key")

    with pytest.raises(ConfigError, match="https"):
        get_settings()


def test_a_rotated_key_reaches_a_warm_container_after_the_max_age(aws: dict[str, Any],
                                                                  use_env: Callable[..., None]) -> None:
    # GIVEN settings read with a max age of 0 (re-read on every call) and then a rotation
    sm = aws["secretsmanager"]
    sm.create_secret(Name="bookrag/cohere-api-key", SecretString="co-first")
    use_env(EMBEDDING_PROVIDER="cohere", COHERE_API_KEY_SECRET_NAME="bookrag/cohere-api-key", SECRETS_MAX_AGE_S="0")
    first = get_settings()
    sm.put_secret_value(SecretId="bookrag/cohere-api-key", SecretString="co-second")

    # WHEN they are asked for again
    second = get_settings()

    # THEN the new key is in use
    assert first.cohere_api_key is not None and first.cohere_api_key.get_secret_value() == "co-first"
    assert second.cohere_api_key is not None and second.cohere_api_key.get_secret_value() == "co-second"


def test_within_the_max_age_the_settings_are_not_read_again(aws: dict[str, Any],
                                                            use_env: Callable[..., None]) -> None:
    sm = aws["secretsmanager"]
    sm.create_secret(Name="bookrag/cohere-api-key", SecretString="co-first")
    use_env(EMBEDDING_PROVIDER="cohere", COHERE_API_KEY_SECRET_NAME="bookrag/cohere-api-key")
    first = get_settings()
    sm.put_secret_value(SecretId="bookrag/cohere-api-key", SecretString="co-second")

    assert get_settings() is first


def test_an_unchanged_re_read_keeps_the_cached_clients(aws: dict[str, Any], use_env: Callable[..., None]) -> None:
    from bookrag.services.container import container_for

    aws["secretsmanager"].create_secret(Name="bookrag/cohere-api-key", SecretString=COHERE_SECRET)
    use_env(EMBEDDING_PROVIDER="cohere", COHERE_API_KEY_SECRET_NAME="bookrag/cohere-api-key", SECRETS_MAX_AGE_S="0")

    first, second = get_settings(), get_settings()

    assert first is not second and first == second
    assert container_for(first).retriever is container_for(second).retriever


def test_a_failed_re_read_keeps_the_previous_settings(aws: dict[str, Any], use_env: Callable[..., None],
                                                      caplog: pytest.LogCaptureFixture) -> None:
    # GIVEN warm settings, and then Secrets Manager loses the secret
    sm = aws["secretsmanager"]
    sm.create_secret(Name="bookrag/cohere-api-key", SecretString=COHERE_SECRET)
    use_env(EMBEDDING_PROVIDER="cohere", COHERE_API_KEY_SECRET_NAME="bookrag/cohere-api-key", SECRETS_MAX_AGE_S="0")
    first = get_settings()
    sm.delete_secret(SecretId="bookrag/cohere-api-key", ForceDeleteWithoutRecovery=True)

    # WHEN the settings are due to be read again
    with caplog.at_level(logging.WARNING, logger="bookrag"):
        again = get_settings()

    # THEN requests keep being served with the key in hand, and the failure is logged without it
    assert again is first
    assert "re-read failed" in caplog.text and COHERE_SECRET not in caplog.text


def test_no_secret_fetch_logs_the_secret_even_at_debug(aws: dict[str, Any], use_env: Callable[..., None],
                                                       caplog: pytest.LogCaptureFixture) -> None:
    aws["secretsmanager"].create_secret(Name="bookrag/cohere-api-key", SecretString=COHERE_SECRET)
    aws["ssm"].put_parameter(Name="/bookrag/qdrant", Value=QDRANT_SECRET, Type="SecureString")
    caplog.set_level(logging.DEBUG)
    for name in ("botocore", "boto3", "urllib3", "aws_lambda_powertools", "bookrag"):
        caplog.set_level(logging.DEBUG, logger=name)
    caplog.clear()

    use_env(EMBEDDING_PROVIDER="cohere", COHERE_API_KEY_SECRET_NAME="bookrag/cohere-api-key")
    get_settings()
    use_env(SECRETS_SOURCE="ssm", QDRANT_URL=QDRANT_URL, QDRANT_API_KEY_SECRET_NAME="/bookrag/qdrant",
            COHERE_API_KEY_SECRET_NAME="", EMBEDDING_PROVIDER="local")
    get_settings()

    assert caplog.records  # botocore did log, at DEBUG
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert COHERE_SECRET not in logged and QDRANT_SECRET not in logged


def test_boto3_is_not_imported_without_a_secret_name(tmp_path: Any) -> None:
    # A cold start configured by value (or local) must not pay for boto3.
    code = ("import sys\n"
            "from bookrag.config.settings import get_settings\n"
            "from bookrag.web.app import create_app\n"
            "get_settings(); create_app('all')\n"
            "sys.exit(1 if 'boto3' in sys.modules else 0)\n")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_SECRET_NAME")}
    env["QDRANT_PATH"] = str(tmp_path / "qdrant")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
