"""Logger, metrics and tracer: one module that everyone imports.

The Tracer is built on first use, not at import: constructing it imports the X-Ray SDK and botocore
(~0.3 s in Lambda, ~0.6 s here), which a health check must not pay; a scheduled warm-up builds it.
Where Powertools would disable tracing anyway (outside Lambda, under `sam local`, or with
POWERTOOLS_TRACE_DISABLED) no Tracer is built at all: a disabled Tracer still imports the SDK.
Logs carry structured fields only, never request bodies or secrets.
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
# `started` is reset when a SnapStart snapshot is restored: uptime counts from the restore.
_state: dict[str, float] = {"invocations": 0, "started": PROCESS_STARTED}

F = TypeVar("F", bound=Callable[..., Any])


def _tracing_disabled() -> bool:
    """Powertools' own rule (env-based), without building a Tracer; if that private helper moves, trace."""
    from aws_lambda_powertools.tracing.tracer import Tracer  # cheap: the X-Ray SDK is imported lazily

    check = getattr(Tracer, "_is_tracer_disabled", None)
    return bool(check()) if callable(check) else False


@lru_cache(maxsize=1)
def get_tracer() -> Any:
    """The Powertools Tracer, or None where tracing is disabled.

    Only the SDKs we call out through are patched: httpx (Qdrant, Cohere, LLMs) and botocore (Secrets
    Manager, DynamoDB); `patch_all` would also import and patch sqlite3, requests and more.
    """
    if _tracing_disabled():
        return None
    from aws_lambda_powertools import Tracer

    return Tracer(service=SERVICE, patch_modules=["httpx", "botocore"])


def traced(name: str, fn: Callable[[], Any]) -> Any:
    """Run `fn` in an X-Ray subsegment (just `fn()` where tracing is disabled)."""
    tracer = get_tracer()
    if tracer is None:
        return fn()
    with tracer.provider.in_subsegment(f"## {name}"):
        return fn()


def process_state() -> dict[str, float]:
    """Invocations so far and when this process (or its SnapStart restore) started."""
    return dict(_state)


def restart_uptime() -> None:
    """A SnapStart restore is a new start: uptime counts from it."""
    _state["started"] = time.time()


def next_invocation() -> bool:
    """Count invocations of this container; True for its first (the cold start)."""
    _state["invocations"] += 1
    return _state["invocations"] == 1


def record_retrieval(latency_ms: float, results: int) -> None:
    metrics.add_metric(name="RetrievalLatency", unit=MetricUnit.Milliseconds, value=latency_ms)
    metrics.add_metric(name="ResultCount", unit=MetricUnit.Count, value=results)


def record_fallback(reason: str) -> None:
    """One retrieval served by BM25 alone because the query could not be embedded (`reason`: the error code)."""
    metrics.add_metric(name="RetrievalFallbacks", unit=MetricUnit.Count, value=1)
    logger.warning("query embedding failed; retrieving with BM25 alone", extra={"error_code": reason})


def record_refusal(refused: bool) -> None:
    metrics.add_metric(name="Refusals" if refused else "Answers", unit=MetricUnit.Count, value=1)


# Why grounding dropped a model's sentence (`answerers.grounding.Verdict.reason`): one metric each.
GROUNDING_REASONS = {"unsupported": "DroppedUnsupported", "number": "DroppedNumber", "reversal": "DroppedReversal"}


def record_quoted(refused: bool) -> None:
    """A model's answer lost its core to the grounding check: the reader got the book's sentences
    (`QuotedFallback`), or a refusal where the extractive answerer refused too (`QuotedRefused`)."""
    metrics.add_metric(name="QuotedRefused" if refused else "QuotedFallback", unit=MetricUnit.Count, value=1)
    logger.info("answer quoted from the book", extra={"refused": refused})


def record_grounding(reasons: list[str]) -> None:
    """One answer's grounded sentences: `reasons` holds '' for each kept one, else why it was dropped."""
    metrics.add_metric(name="GroundedSentences", unit=MetricUnit.Count, value=len(reasons))
    for reason, name in GROUNDING_REASONS.items():
        if reason in reasons:
            metrics.add_metric(name=name, unit=MetricUnit.Count, value=reasons.count(reason))
    if any(reasons):
        logger.info("sentences dropped", extra={"dropped": [r for r in reasons if r]})


# `query_type` (REST contract: "category of query for analytics") is free text from the caller; as a
# metric dimension every distinct value would be a new CloudWatch metric, so values outside this set
# are recorded as "other" and a request without one as "unspecified".
QUERY_TYPES = frozenset({"factual", "conceptual", "definition", "how_to", "code", "troubleshooting",
                         "comparison", "navigation", "summary", "other"})


def query_type_bucket(query_type: str | None) -> str:
    """The bounded value recorded for a request's `query_type` ("How-To " counts as "how_to")."""
    if query_type is None or not query_type.strip():
        return "unspecified"
    key = "_".join(query_type.strip().lower().replace("-", " ").split())
    return key if key in QUERY_TYPES else "other"


def record_query_type(query_type: str | None) -> None:
    """One `Queries` count with a `query_type` dimension (an EMF record of its own: the shared
    `metrics` carries process-wide dimensions only), and the same value as a structured log field."""
    from aws_lambda_powertools.metrics import single_metric

    bucket = query_type_bucket(query_type)
    with single_metric(name="Queries", unit=MetricUnit.Count, value=1, namespace=metrics.namespace,
                       default_dimensions={"service": SERVICE}) as metric:
        metric.add_dimension(name="query_type", value=bucket)
    logger.info("retrieval served", extra={"query_type": bucket})
