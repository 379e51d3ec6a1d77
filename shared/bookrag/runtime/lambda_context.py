"""A Lambda context for invocations the Lambda runtime did not make: the warm-up, `bookrag invoke`, tests.

It carries the attributes our handlers' wrappers read: Powertools' `inject_lambda_context` (function
name, memory, ARN, request id) and `log_metrics` (function name), and Mangum, which only passes the
object on to the ASGI scope. It stays import-light: the warm-up builds one inside a cold start.
"""

from __future__ import annotations

from dataclasses import dataclass

_ACCOUNT = "123456789012"  # AWS's documentation account: an ARN that can never name a real function
_REGION = "us-east-1"


@dataclass
class SyntheticContext:
    function_name: str = "bookrag-local"
    function_version: str = "$LATEST"
    invoked_function_arn: str = ""  # empty: derived from function_name
    memory_limit_in_mb: int = 1024
    aws_request_id: str = "52fdfc07-2182-154f-163f-5f0f9a621d72"
    log_group_name: str = ""  # empty: derived from function_name, as Lambda names it
    log_stream_name: str = "synthetic"
    timeout_ms: int = 25_000

    def __post_init__(self) -> None:
        if not self.invoked_function_arn:
            self.invoked_function_arn = f"arn:aws:lambda:{_REGION}:{_ACCOUNT}:function:{self.function_name}"
        if not self.log_group_name:
            self.log_group_name = f"/aws/lambda/{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        # Constant: nothing here runs against a deadline, and a fixed value keeps runs repeatable.
        return self.timeout_ms
