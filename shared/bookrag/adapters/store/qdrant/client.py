"""qdrant-client for the remote store: the one client factory, and the one translation of its errors.

qdrant-client is imported lazily, inside these functions: it costs ~0.7 s, which a health check must not
pay. `str()` of qdrant-client's errors carries URLs and bodies, so it is never passed on: every failure
becomes one of our `StoreError`s with a generic message.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from bookrag import errors

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

    from bookrag.config.settings import Settings


def build_client(settings: Settings) -> QdrantClient:
    """A remote client (its own connection pool; the container keeps one)."""
    from bookrag.adapters.store.qdrant.lazy_imports import import_qdrant_client

    import_qdrant_client()  # without its eager pydantic model rebuild: ~0.25 s off a cold start
    from qdrant_client import QdrantClient

    url = settings.qdrant_remote_url
    if not url:
        raise errors.ConfigError("The remote store needs QDRANT_URL or QDRANT_HOST; the embedded one is EdgeStore")
    return QdrantClient(
        url=url,
        api_key=settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None,
        timeout=max(1, math.ceil(settings.qdrant_timeout_s)),
        # The version check is an extra network round trip (and a thread) on every cold start.
        check_compatibility=False,
        prefer_grpc=False,
    )


def translate_qdrant_error(exc: BaseException) -> errors.BookRAGError:
    """Map qdrant-client and transport failures to our errors, with generic messages only."""
    import json

    import httpx
    from pydantic import ValidationError
    from qdrant_client.common.client_exceptions import QdrantException, ResourceExhaustedResponse
    from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

    if isinstance(exc, errors.BookRAGError):
        return exc
    if isinstance(exc, ResponseHandlingException):
        exc = exc.source
    if isinstance(exc, ResourceExhaustedResponse):  # a 429 with a Retry-After
        limited = errors.StoreRateLimitError()
        limited.retry_after = float(exc.retry_after_s)
        return limited
    if isinstance(exc, QdrantException):  # the client raises it bare for a 429 with an unreadable Retry-After
        return errors.StoreRateLimitError()
    if isinstance(exc, ValidationError | json.JSONDecodeError):  # a 2xx body that is not Qdrant's: a broken upstream
        return errors.StoreUnavailableError()
    if isinstance(exc, httpx.TimeoutException | TimeoutError):
        return errors.StoreTimeoutError()
    if isinstance(exc, httpx.TransportError | ConnectionError | OSError):
        return errors.StoreConnectionError()
    if isinstance(exc, UnexpectedResponse):
        if exc.status_code in (401, 403):
            return errors.StoreAuthError()
        if exc.status_code == 404:
            return errors.CollectionMissingError()
        if exc.status_code == 429:
            return errors.StoreRateLimitError()
        if exc.status_code is not None and exc.status_code >= 500:
            return errors.StoreUnavailableError()
        return errors.StoreError()
    if isinstance(exc, ValueError) and "not found" in str(exc).lower():
        # The embedded mode signals a missing collection with a ValueError.
        return errors.CollectionMissingError()
    return errors.StoreError()
