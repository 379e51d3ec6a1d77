"""Agent Lambda: POST /api/answer, GET /api/health, scheduled warm-ups.

All logic lives in the `bookrag` layer; this file wires observability and delegates.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from bookrag.observability import logger, metrics
from bookrag.runtime.entry import handle
from bookrag.runtime.snapstart import install_snapstart_hooks

install_snapstart_hooks("agent")  # SnapStart: warm before the snapshot, fresh clients after a restore


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, log_event=False)
@metrics.log_metrics(capture_cold_start_metric=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return handle(event, context, "agent")
