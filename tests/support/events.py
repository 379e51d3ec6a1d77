"""API Gateway and EventBridge events from events/ (as `sam local generate-event` wrote them), and replies."""

from __future__ import annotations

import base64
import json
from typing import Any

from tests.support.paths import EVENTS


def load_event(name: str) -> dict[str, Any]:
    """A fresh copy of events/<name> on every call: tests may edit what they get."""
    event: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return event


def body_of(response: dict[str, Any]) -> Any:
    """The JSON body of a Lambda proxy response, base64-encoded or not."""
    raw = response["body"]
    if response.get("isBase64Encoded"):
        raw = base64.b64decode(raw).decode()
    return json.loads(raw)
