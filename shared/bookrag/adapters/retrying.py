"""Bounded retry policies (tenacity) for calls to paid upstreams.

A request path gets at most one retry and never waits longer than `max_wait`: a 429 whose
Retry-After exceeds that is returned to the caller at once (recoverable, with the hint), because
sleeping past API Gateway's 30 s helps nobody. Timeouts are not retried on the request path: the
budget is already spent. Batch jobs (ingest) may wait out rate limits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from bookrag.errors import BookRAGError, TimedOut

T = TypeVar("T")


def _retry_after(exc: BaseException | None) -> float | None:
    return getattr(exc, "retry_after", None)


def call_with_retries(fn: Callable[[], T], *, attempts: int, max_wait: float, retry_timeouts: bool) -> T:
    """Call `fn`, retrying recoverable `BookRAGError`s up to `attempts` calls in total."""

    def should_retry(exc: BaseException) -> bool:
        if not isinstance(exc, BookRAGError) or not exc.recoverable:
            return False
        if not retry_timeouts and isinstance(exc, TimedOut):
            return False
        hint = _retry_after(exc)
        return hint is None or hint <= max_wait

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hint = _retry_after(exc)
        backoff = 0.25 * (2 ** (state.attempt_number - 1))
        return min(max_wait, hint if hint is not None else backoff)

    retrying = Retrying(
        stop=stop_after_attempt(max(1, attempts)),
        wait=wait,
        retry=retry_if_exception(should_retry),
        reraise=True,
    )
    return retrying(fn)
