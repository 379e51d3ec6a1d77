"""The request's overall time budget: every upstream call of one answer is capped by what it has left.

A leaf of the domain (no SDK), so the answerers and the model adapters under them share one clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from bookrag.errors import AnswerTimeoutError

_TOO_LONG = "The answer took too long; please try again"


class Deadline:
    """The request's overall time budget, shared by every upstream call of one answer."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._ends = clock() + seconds

    def remaining(self) -> float:
        return max(0.0, self._ends - self._clock())

    def timeout(self, cap: float, minimum: float = 0.5) -> float:
        """A per-call timeout: at most `cap`, at most what is left; raises when less than `minimum` is left."""
        left = self.remaining()
        if left < minimum:
            raise AnswerTimeoutError(_TOO_LONG)
        return min(cap, left)

    def check(self) -> None:
        """Raises `AnswerTimeoutError` once the budget is spent (between the pieces of a streamed reply)."""
        if self.remaining() <= 0:
            raise AnswerTimeoutError(_TOO_LONG)
