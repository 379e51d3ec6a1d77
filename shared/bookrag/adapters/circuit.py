"""A circuit breaker for a paid upstream on the request path (Cohere's embed and rerank).

When an upstream is down, every request would otherwise spend its attempts and their timeouts on it
before falling back (`retrieval.retriever`: BM25 alone; `retrieval.rerank`: the fused order). The
breaker wraps a whole call (its bounded retries included): after `failures` such calls failed in a
row, recoverably, the circuit opens: calls fail at once with the family's
unavailable error, without a request, for `open_s` seconds. Then one call is let through (half-open):
its success closes the circuit, its failure opens it again. Only recoverable failures count (429,
timeouts, 5xx, transport): a bad key or a bad request is not an outage and is raised as it is.

One breaker per upstream operation per process; the state is a few numbers under a lock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

from bookrag import errors

T = TypeVar("T")

# Two requests pay for an outage (each its call and one retry); the third no longer waits for it.
DEFAULT_FAILURES = 2
# Short: an outage of Cohere's is usually minutes; a reader's request is re-tried upstream every 20 s.
DEFAULT_OPEN_S = 20.0


class CircuitOpenError(errors.EmbeddingUnavailableError):
    """The upstream failed repeatedly just now: not called (recoverable, like the outage itself)."""


class CircuitBreaker:
    def __init__(self, name: str, *, failures: int = DEFAULT_FAILURES, open_s: float = DEFAULT_OPEN_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.failures = failures
        self.open_s = open_s
        self._clock = clock
        self._lock = threading.Lock()
        self._failed = 0
        self._opened_at: float | None = None
        self._trial = False  # a half-open trial call is in flight

    @property
    def state(self) -> str:
        with self._lock:
            return self._state()

    def _state(self) -> str:
        if self._opened_at is None:
            return "closed"
        return "open" if self._clock() - self._opened_at < self.open_s else "half-open"

    def call(self, fn: Callable[[], T]) -> T:
        """`fn()`, unless the circuit is open (then `CircuitOpenError` at once)."""
        with self._lock:
            state = self._state()
            if state == "open" or (state == "half-open" and self._trial):
                raise CircuitOpenError()
            self._trial = state == "half-open"
        try:
            result = fn()
        except errors.BookRAGError as exc:
            with self._lock:
                self._trial = False
                if exc.recoverable:
                    self._failed += 1
                    if self._opened_at is not None or self._failed >= self.failures:
                        self._opened_at = self._clock()
            raise
        except BaseException:
            with self._lock:
                self._trial = False
            raise
        with self._lock:
            self._failed, self._opened_at, self._trial = 0, None, False
        return result
