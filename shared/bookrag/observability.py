"""Logger, metrics and tracer: one module that everyone imports.

The Tracer is built on first use, not at import: constructing it imports the X-Ray SDK and botocore
(~0.3 s here), which a health check or warm-up ping must not pay. Logs carry structured fields only,
never request bodies or secrets.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

SERVICE = "bookrag"
logger = Logger(service=SERVICE)
metrics = Metrics(namespace="BookRAG", service=SERVICE)

PROCESS_STARTED = time.time()
_state = {"invocations": 0}

F = TypeVar("F", bound=Callable[..., Any])


@lru_cache(maxsize=1)
def get_tracer() -> Any:
    from aws_lambda_powertools import Tracer

    return Tracer(service=SERVICE)


def traced(name: str, fn: Callable[[], Any]) -> Any:
    """Run `fn` in an X-Ray subsegment (a no-op outside Lambda or when tracing is disabled)."""
    with get_tracer().provider.in_subsegment(f"## {name}"):
        return fn()


def next_invocation() -> bool:
    """Count invocations of this container; True for its first (the cold start)."""
    _state["invocations"] += 1
    return _state["invocations"] == 1


def record_retrieval(latency_ms: float, results: int) -> None:
    metrics.add_metric(name="RetrievalLatency", unit=MetricUnit.Milliseconds, value=latency_ms)
    metrics.add_metric(name="ResultCount", unit=MetricUnit.Count, value=results)


def record_refusal(refused: bool) -> None:
    metrics.add_metric(name="Refusals" if refused else "Answers", unit=MetricUnit.Count, value=1)
