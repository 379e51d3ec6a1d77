"""API keys by reference: read from Secrets Manager or SSM Parameter Store by name, when deployed.

`bookrag.config.settings` passes the names it read (COHERE_API_KEY_SECRET_NAME, ...) and receives the values;
this module never reads the environment itself. Powertools parameters caches each value for
`max_age` seconds, so a warm container re-reading its settings costs no call until then.

boto3 is imported only here, and only when a name is set: a local run, or a container configured
with keys by value, never pays for it on a cold start.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Literal

from bookrag.errors import ConfigError

SecretsSource = Literal["secretsmanager", "ssm"]


def resolve(names: Mapping[str, str], *, source: SecretsSource, max_age_s: int) -> dict[str, str]:
    """Fetch each named secret; keys of `names` are the variables that named them (for messages).

    Raises `ConfigError` naming the variable (never the value, nor the upstream's message) when a
    secret cannot be read or is empty.
    """
    from aws_lambda_powertools.utilities import parameters  # imports boto3: only when a name is set

    _silence_response_bodies()
    values: dict[str, str] = {}
    for variable, name in names.items():
        try:
            if source == "ssm":
                raw = parameters.get_parameter(name, decrypt=True, max_age=max_age_s)
            else:
                raw = parameters.get_secret(name, max_age=max_age_s)
        except parameters.exceptions.GetParameterError as exc:
            raise ConfigError(f"{variable}: the {_LABEL[source]} could not be read ({_aws_code(exc)})") from None
        value = _plain(raw)
        if not value:
            raise ConfigError(f"{variable}: the {_LABEL[source]} is empty or not a single text value")
        values[variable] = value
    return values


_LABEL = {"secretsmanager": "Secrets Manager secret", "ssm": "SSM parameter"}


class _NoResponseBodies(logging.Filter):
    """botocore logs every response body at DEBUG, GetSecretValue's SecretString included."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Response body")


_BODY_FILTER = _NoResponseBodies()


def _silence_response_bodies() -> None:
    """Drop those records (only those) whatever the log level: a key must not reach a log line."""
    botocore_parsers = logging.getLogger("botocore.parsers")
    if _BODY_FILTER not in botocore_parsers.filters:
        botocore_parsers.addFilter(_BODY_FILTER)


def _plain(raw: object) -> str | None:
    """The key itself, from a plain-text secret or a JSON object with exactly one text value.

    The console's default "key/value" secret is a one-entry JSON object: accept it, whatever the key.
    """
    if isinstance(raw, bytes):
        try:
            raw = raw.decode()
        except UnicodeDecodeError:
            return None
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except ValueError:
            return None
        strings = [v for v in parsed.values() if isinstance(v, str)] if isinstance(parsed, dict) else []
        return strings[0].strip() or None if len(parsed) == 1 and len(strings) == 1 else None
    return text or None


def _aws_code(exc: BaseException) -> str:
    """The AWS error code behind a Powertools error (e.g. ResourceNotFoundException), never its message."""
    cause = exc.__cause__ or exc.__context__
    response = getattr(cause, "response", None)
    if isinstance(response, dict):
        code = (response.get("Error") or {}).get("Code")
        if isinstance(code, str) and code.isidentifier():
            return code
    return type(cause).__name__ if cause is not None else "unknown error"
