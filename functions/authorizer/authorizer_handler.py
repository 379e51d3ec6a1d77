"""API Gateway HTTP API Lambda authorizer (payload 2.0, simple responses): verifies the X-API-Key header.

Requests it denies never reach the retrieval or agent functions, so they cost no embedding or LLM call.
It imports no FastAPI, Qdrant or Cohere: all logic is in `bookrag.auth.guard`, state in DynamoDB.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from bookrag.auth.guard import authorize_http_api
from bookrag.observability import logger
from bookrag.services.container import auth_container


# log_event stays False: the event carries the key.
@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, log_event=False)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    guard = auth_container().guard
    if guard is None:  # AUTH_ENABLED=false with the authorizer still attached: refuse, never open up
        return {"isAuthorized": False}
    return authorize_http_api(event, guard)
