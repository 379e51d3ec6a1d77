"""The Cohere SDK: how its client is built (one per container: embed, rerank and chat share it), the
one wrapper every call goes through, and its errors translated into ours (`adapters.http_errors`).

The SDK's defaults (300 s timeout, 2 retries honouring Retry-After up to 60 s) would outlive API
Gateway's 30 s, so the client is built with an explicit timeout and no SDK retries; callers wrap
calls go through `call_cohere`, whose policy bounds both the attempts and the waits.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from bookrag import errors
from bookrag.adapters.http_errors import Family, translate_http_error, unavailable
from bookrag.adapters.retrying import call_with_retries

if TYPE_CHECKING:
    import cohere
    from cohere.core.request_options import RequestOptions

    from bookrag.config.settings import Settings

T = TypeVar("T")
CohereClient: TypeAlias = "cohere.ClientV2"  # for the container's annotations: only adapters import the SDK
ClientProvider = Callable[[], CohereClient]


def build_client(settings: Settings) -> CohereClient:
    """The Cohere client of a container: no SDK retries; its timeout is the request path's, and
    each call passes its own (`request_options`), so embed, rerank and chat share one pool."""
    import cohere  # imported here: a warm-up or local-embedder container never pays for it

    if settings.cohere_api_key is None:
        raise errors.ConfigError("COHERE_API_KEY is not set")
    for name in _SDK_LOGGERS:  # once each: the same filter object is not added twice
        logging.getLogger(None if name == "root" else name).addFilter(_UNREADABLE)
    return cohere.ClientV2(
        api_key=settings.cohere_api_key.get_secret_value(),
        base_url=settings.cohere_base_url,
        timeout=settings.cohere_timeout_s,
        max_retries=0,
        client_name="bookrag",
        log_warning_experimental_features=False,
    )


def warm_up_replies() -> None:
    """Build what a first call builds after the client: the SDK's own reply parser runs on canned embed,
    rerank and chat replies (no request is sent: a warm-up never pays). The client itself, the expensive
    part (SDK import, TLS trust store), is the container's to build."""
    from cohere import EmbedByTypeResponse, V2ChatResponse, V2RerankResponse
    from cohere.core.unchecked_base_model import construct_type

    construct_type(type_=EmbedByTypeResponse, object_={"id": "warm-up", "response_type": "embeddings_by_type",
                                                       "embeddings": {"float": [[0.0]]}, "texts": ["warm up"],
                                                       "meta": {}})
    construct_type(type_=V2RerankResponse, object_={"id": "warm-up", "results": [{"index": 0,
                                                                                  "relevance_score": 0.0}]})
    construct_type(type_=V2ChatResponse, object_={"id": "warm-up", "finish_reason": "COMPLETE",
                                                  "message": {"role": "assistant",
                                                              "content": [{"type": "text", "text": "warm up"}]}})


# Where the SDK logs a stream event it cannot read, with the raw event: the root logger when it skips
# the event, its own when it reads the unparsable data as an empty event instead.
_SDK_LOGGERS = ("root", "cohere.core.pydantic_utilities")
_SDK_UNREADABLE = ("Skipping SSE event", "Unexpected error processing SSE event", "Failed to parse SSE data")


class _UnreadableEvents(logging.Filter):
    """The SDK drops a stream event it cannot read and logs the raw event. That text is the upstream's,
    not ours to log, and the dropped event leaves a hole in the reply: the record is dropped, and
    counted for the stream this thread is reading (`next_event`). It sees only records the SDK makes:
    with the root logger (or the SDK's) set above WARNING there are none, and a dropped event goes
    unnoticed, as it would without this filter."""

    def __init__(self) -> None:
        super().__init__()
        self._thread = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        # Installed on the SDK's two loggers only, so it sees only their records.
        if not str(record.msg).startswith(_SDK_UNREADABLE):
            return True
        self._thread.skipped = self.skipped() + 1
        return False

    def skipped(self) -> int:
        return int(getattr(self._thread, "skipped", 0))

    def reset(self) -> None:
        self._thread.skipped = 0


_UNREADABLE = _UnreadableEvents()


def next_event(events: Iterator[Any], family: Family) -> Any:
    """The next event of an SDK stream, or None at its end. Its failures become our errors; an event
    the SDK could not read (and dropped) is the family's unavailable error (recoverable): what is left
    of the reply would read as whole, with a piece missing."""
    _UNREADABLE.reset()
    try:
        event = next(events, None)
    except Exception as exc:  # the SDK's iterator: its failures and the transport's, never ours
        raise translate_cohere_error(exc, family) from None
    if _UNREADABLE.skipped():
        raise unavailable(family)
    return event


def call_cohere(fn: Callable[[RequestOptions], T], family: Family, *, timeout_s: float | Callable[[], float],
                attempts: int = 2,
                max_wait: float = 1.0, retry_timeouts: bool = False) -> T:
    """The one way we call Cohere: `fn(request_options)` with our timeout and no SDK retries, its
    failures translated into our `family` of errors, retried by our bounded policy (one retry, at
    most `max_wait` seconds, no retry of a timeout on a request path). A callable `timeout_s` is asked
    before each attempt (what a request's deadline has left)."""

    def attempt() -> T:
        options: RequestOptions = {"timeout": timeout_s() if callable(timeout_s) else timeout_s, "max_retries": 0}
        try:
            return fn(options)
        except errors.BookRAGError:
            raise
        except Exception as exc:  # every SDK and transport failure becomes our typed error
            raise translate_cohere_error(exc, family) from None

    return call_with_retries(attempt, attempts=attempts, max_wait=max_wait, retry_timeouts=retry_timeouts)


def translate_cohere_error(exc: BaseException, family: Family) -> errors.BookRAGError:
    from cohere.core.api_error import ApiError

    if isinstance(exc, ApiError):
        return translate_http_error(exc, family, exc.status_code, exc.headers)
    return translate_http_error(exc, family)
