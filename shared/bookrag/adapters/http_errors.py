"""The one translation of an HTTP upstream's failure into our typed errors (`bookrag.errors`).

Every HTTP-backed adapter (Cohere's SDK, the OpenAI-compatible chat models, the embedders) maps a
transport failure or a status through `translate_http_error`, so that a 429 means the same thing
everywhere. Each upstream call belongs to a `Family`: its errors are the embedding or the answer ones.
"""

from __future__ import annotations

import email.utils
import time
from typing import Any, Literal

from bookrag import errors

Family = Literal["embedding", "answer"]

_FAMILIES: dict[Family, dict[str, type[errors.BookRAGError]]] = {
    "embedding": {
        "auth": errors.EmbeddingAuthError,
        "rate": errors.EmbeddingRateLimitError,
        "timeout": errors.EmbeddingTimeoutError,
        "unavailable": errors.EmbeddingUnavailableError,
        "other": errors.EmbeddingError,
    },
    "answer": {
        "auth": errors.AnswerAuthError,
        "rate": errors.AnswerRateLimitError,
        "timeout": errors.AnswerTimeoutError,
        "unavailable": errors.AnswerUnavailableError,
        "other": errors.AnswerError,
    },
}


def unavailable(family: Family) -> errors.BookRAGError:
    """The family's recoverable "upstream unavailable" error: a broken or unreadable reply."""
    return _FAMILIES[family]["unavailable"]()


def retry_after_seconds(headers: dict[str, str] | None) -> float | None:
    """Parse Retry-After (seconds or HTTP date); None when absent or unreadable."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    value = lowered.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    parsed = email.utils.parsedate_to_datetime(value) if value else None
    if parsed is None:
        return None
    return max(0.0, parsed.timestamp() - time.time())


def translate_http_error(exc: BaseException, family: Family, status: int | None = None,
                         headers: dict[str, str] | None = None) -> errors.BookRAGError:
    """Map a transport failure or an HTTP status to our error of `family` ("embedding" or "answer").

    The returned error's message is generic: SDK texts carry URLs and bodies.
    """
    import httpx

    kinds = _FAMILIES[family]
    if isinstance(exc, httpx.TimeoutException):
        return kinds["timeout"]()
    if isinstance(exc, httpx.TransportError):
        return kinds["unavailable"]()
    if status in (401, 403, 498):
        return kinds["auth"]()
    if status == 429:
        rate_cls: Any = kinds["rate"]
        error: errors.BookRAGError = rate_cls()
        error.retry_after = retry_after_seconds(headers)  # type: ignore[attr-defined]
        return error
    if status is not None and (status >= 500 or 200 <= status < 300):
        # 2xx here means the body could not be read: a broken upstream, worth a retry.
        return kinds["unavailable"]()
    return kinds["other"]()
