"""The one way a middleware adds headers to a response: on its `http.response.start` message, as the
app sends it (a streamed response's status line included)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Send = Callable[[dict[str, Any]], Awaitable[None]]


def stamping(send: Send, headers: Callable[[], list[tuple[bytes, bytes]]]) -> Send:
    """`send`, with `headers()` (read when the response starts, so they may depend on what the request
    did) appended to the response's headers."""

    async def stamped(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            extra = headers()
            if extra:
                message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return stamped
