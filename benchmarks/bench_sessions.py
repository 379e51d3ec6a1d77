"""Warm overhead of a conversation session: one lookup (GetItem) and one write (PutItem) per turn.

The stores are the service's own (`bookrag.adapters.sessions`): in memory (`bookrag serve`) and DynamoDB,
here in moto (in process: this measures our code, boto3's serialisation and moto, not the network; a
real DynamoDB GetItem adds a few ms of round trip in the same region). The session is full: the most
turns a session keeps, each with a long answer. Target (issue 13): lookup p50 <= 5 ms.

    PYTHONPATH=shared python benchmarks/bench_sessions.py   # writes benchmarks/sessions.json and sessions.md
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bookrag.adapters.sessions import DynamoDBSessionStore, InMemorySessionStore
from bookrag.domain.conversation import Session, Turn
from bookrag.domain.query import CONVERSATION
from bookrag.services.conversations import bounded, new_session_id

HERE = Path(__file__).parent
RUNS = 2000
WARMUP = 50
TARGET_MS = 5.0


def full_session(now: int) -> Session:
    turns = [Turn(f"Question {i} about Gazebo physics engines?", "An answer citing the book [1]. " * 40,
                  f"Question {i} about Gazebo physics engines?") for i in range(CONVERSATION.max_turns)]
    return Session(new_session_id(), "a1b2c3d4e5f6", bounded(turns), now + CONVERSATION.session_ttl_s)


def timed(fn: Callable[[], Any], runs: int) -> dict[str, float]:
    for _ in range(WARMUP):
        fn()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    samples.sort()
    return {"runs": runs, "p50_ms": round(statistics.median(samples), 4),
            "p95_ms": round(samples[int(0.95 * len(samples)) - 1], 4), "max_ms": round(samples[-1], 4)}


def bench(store: Any) -> dict[str, Any]:
    now = int(time.time())
    session = full_session(now)
    store.put(session)
    assert store.get(session.session_id, now) == session
    return {"lookup": timed(lambda: store.get(session.session_id, now), RUNS),
            "write": timed(lambda: store.put(session), RUNS // 4)}


def main() -> None:
    results: dict[str, Any] = {"memory": bench(InMemorySessionStore())}
    for name, value in {"AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "testing",
                        "AWS_SECRET_ACCESS_KEY": "testing"}.items():
        os.environ[name] = value
    import boto3
    from moto import mock_aws

    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(TableName="sessions", BillingMode="PAY_PER_REQUEST",
                            AttributeDefinitions=[{"AttributeName": "session_id", "AttributeType": "S"}],
                            KeySchema=[{"AttributeName": "session_id", "KeyType": "HASH"}])
        results["dynamodb_moto"] = bench(DynamoDBSessionStore(client, "sessions"))
    session_bytes = len(json.dumps([t.__repr__() for t in full_session(0).turns]))
    report = {"target_lookup_p50_ms": TARGET_MS, "session_turns": CONVERSATION.max_turns,
              "session_bytes_approx": session_bytes, "python": platform.python_version(),
              "machine": platform.machine(), "results": results,
              "pass_by_store": {name: r["lookup"]["p50_ms"] <= TARGET_MS for name, r in results.items()}}
    (HERE / "sessions.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    rows = "\n".join(f"| {name} | {r['lookup']['p50_ms']:.3f} | {r['lookup']['p95_ms']:.3f} | "
                     f"{r['write']['p50_ms']:.3f} | {r['write']['p95_ms']:.3f} |" for name, r in results.items())
    (HERE / "sessions.md").write_text(f"""# Session lookup overhead (issue 13)

`benchmarks/bench_sessions.py`: a full session ({CONVERSATION.max_turns} turns with long answers), warm store,
{RUNS} lookups and {RUNS // 4} writes after {WARMUP} warm-up calls. DynamoDB is moto in process (our code,
boto3 and moto; no network). Target: lookup p50 <= {TARGET_MS} ms (issue 13: "moto or the in-memory
store"): {', '.join(f"{k} {'pass' if v else 'miss'}" for k, v in report['pass_by_store'].items())}.

| store | lookup p50 ms | lookup p95 ms | write p50 ms | write p95 ms |
| --- | ---: | ---: | ---: | ---: |
{rows}

A turn costs one lookup and one write. On Lambda a GetItem to DynamoDB in the same region adds its round
trip (single-digit ms typically); the write happens after the answer is built.
""", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
