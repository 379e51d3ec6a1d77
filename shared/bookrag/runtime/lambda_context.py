"""The one synthetic Lambda context: for the warm-up's in-process request, local invokes, tests and
benchmarks. It has the fields Powertools' `inject_lambda_context` and Mangum read."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SyntheticContext:
    function_name: str = "bookrag-local"
    function_version: str = "$LATEST"
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:bookrag-local"
    memory_limit_in_mb: int = 1024
    aws_request_id: str = "00000000-0000-4000-8000-000000000000"
    log_group_name: str = "/aws/lambda/bookrag-local"
    log_stream_name: str = "local"
    remaining_ms: int = 25_000

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms
