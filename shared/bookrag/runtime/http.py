"""The function's HTTP path: its FastAPI app behind Mangum, built once per process."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

FunctionKind = Literal["retrieval", "agent"]


@lru_cache(maxsize=2)
def get_handler(kind: FunctionKind) -> Any:
    """The function's Mangum handler, built once per process (it holds the app, not clients)."""
    from mangum import Mangum

    from bookrag.web.app import create_app

    # lifespan="off": Mangum would otherwise run the ASGI lifespan on every invocation.
    return Mangum(create_app(kind), lifespan="off")
