"""Reading our Server-Sent Events (`POST /api/answer/stream`) in tests: whole bodies and live streams."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any


def parse(body: str) -> list[tuple[str, Any]]:
    """(event, data) pairs of an SSE body, strictly: every block is `event:` then one `data:` line."""
    events = []
    for block in body.split("\n\n"):
        if not block:
            continue
        kind, data = block.split("\n")
        assert kind.startswith("event: ") and data.startswith("data: "), block
        events.append((kind.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return events


def events_of(lines: Iterable[str]) -> Iterator[tuple[str, Any]]:
    """(event, data) pairs as the lines of a live stream arrive (`httpx.Response.iter_lines()`)."""
    kind = ""
    for line in lines:
        if line.startswith("event: "):
            kind = line.removeprefix("event: ")
        elif line.startswith("data: "):
            yield kind, json.loads(line.removeprefix("data: "))
