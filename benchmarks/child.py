"""One benchmark measurement in a fresh interpreter, as a Lambda container would run it.

    python benchmarks/child.py MODE --out result.json [options]

Modes:
  naive   the issue's baseline: import the SDKs a handler needs and build their clients, nothing else.
  cold    load a function's handler module the way the Lambda runtime does and invoke it with events/
          files; records the wall clock (time.time) at each response, so the parent, which noted the
          time just before it spawned this process, gets "fresh process to first complete response".
  restored  SnapStart as deployed: init, before-snapshot and after-restore hooks, then the events
  warm    cold, then N warm invocations of POST /api/retrieve through the real handler with varied
          queries (defeating the query-embedding LRU), then M with one cached query; per-invocation
          total, embedding and search times, and RSS along the way.
  ingest  first ingest of a docs tree into an empty store, then an unchanged re-ingest.
  mcpwarm the same tool call, interleaved, as POST /api/tools/retrieve_book_content through the retrieval
          handler and as MCP tools/call retrieve_book_content on POST /mcp through the agent handler:
          N varied queries each (defeating the embedding cache) and M with one cached query; per-call totals.

The result is written to --out as JSON (stdout belongs to the handler: Powertools' metrics go there).
This file is run by benchmarks/suite.py and by tests/handler/test_cold_start.py; it imports nothing
from bookrag before the measured work starts. The handler loader and the Lambda context are bookrag's
own (`bookrag invoke` and the tests use them too), so --code-root must hold them.
"""

from __future__ import annotations

import time

STARTED = time.time()  # before any other import: the child's own share of the cold start

import base64  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EVENTS = ROOT / "events"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def current_rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def load_event(name: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return event


def with_body(event: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    out = dict(event)
    out["body"] = base64.b64encode(json.dumps(body).encode()).decode()
    out["isBase64Encoded"] = True
    return out


def lambda_tools() -> tuple[Any, Any]:
    """bookrag's handler loader and a Lambda context, imported once the measured work has started."""
    from bookrag.devtools.local_invoke import load_handler
    from bookrag.runtime.lambda_context import SyntheticContext

    return load_handler, SyntheticContext(function_name="bookrag-bench")


def status_of(response: Any) -> int | str:
    if isinstance(response, dict):
        return response.get("statusCode", "event")
    return type(response).__name__


def factory_misses() -> dict[str, int]:
    """What has been built so far: each container component (1 once built) and the Mangum handler's
    cache misses. Only modules already imported are looked at (importing one would skew the count)."""
    out: dict[str, int] = {}
    container_module = sys.modules.get("bookrag.services.container")
    if container_module is not None:
        for container in container_module.existing():
            for name in container.built_names():
                out[f"container.{name}"] = 1
    entry = sys.modules.get("bookrag.runtime.http")
    if entry is not None:
        out["bookrag.runtime.http.get_handler"] = entry.get_handler.cache_info().misses
    return out


# --- modes ------------------------------------------------------------------------------------------


def run_naive(_: Args) -> dict[str, Any]:
    import cohere
    import fastapi  # noqa: F401
    import mangum  # noqa: F401
    import qdrant_client  # noqa: F401

    cohere.ClientV2(api_key="x")
    import aws_lambda_powertools  # noqa: F401
    from aws_lambda_powertools import Logger, Metrics, Tracer  # noqa: F401

    Tracer()
    import boto3  # noqa: F401

    return {"responses": [{"event": "naive", "t": time.time(), "status": "ok"}]}


def run_cold(args: Args) -> dict[str, Any]:
    """Invoke `args.events` in order; after each, note the time and (--track) the modules and factories."""
    load_handler, context = lambda_tools()  # before the snapshot below: the loader's imports are not the handler's
    events = [load_event(name) for name in args.events]
    # The first event's figures include importing the handler module, as Lambda's first invocation does.
    before_modules = set(sys.modules)
    before_misses: dict[str, int] = {}
    handler = load_handler(args.function, root=Path(args.code_root))
    responses = []
    for name, event in zip(args.events, events, strict=True):
        response = handler.lambda_handler(event, context)
        entry: dict[str, Any] = {"event": name, "t": time.time(), "status": status_of(response)}
        if args.track:
            entry["new_modules"] = sorted(set(sys.modules) - before_modules)
            after = factory_misses()
            entry["new_misses"] = {k: v - before_misses.get(k, 0) for k, v in after.items()
                                   if v - before_misses.get(k, 0)}
            before_modules, before_misses = set(sys.modules), after
        responses.append(entry)
    return {"responses": responses}


def run_restored(args: Args) -> dict[str, Any]:
    """SnapStart as deployed: init (handler import), the before-snapshot hooks, the after-restore hooks,
    then `args.events`; `restored` is when the restored container's first request could arrive."""
    load_handler, context = lambda_tools()
    events = [load_event(name) for name in args.events]
    handler = load_handler(args.function, root=Path(args.code_root))
    from bookrag.runtime.snapstart import registered_hooks

    for hook in registered_hooks("before_snapshot"):
        hook()
    for hook in registered_hooks("after_restore"):
        hook()
    restored = time.time()
    responses = []
    for name, event in zip(args.events, events, strict=True):
        response = handler.lambda_handler(event, context)
        responses.append({"event": name, "t": time.time(), "status": status_of(response)})
    return {"responses": responses, "restored": restored}


def _queries(n: int) -> list[str]:
    topics = ["ROS 2 nodes", "topics and services", "URDF joints", "Gazebo sensors", "Isaac Sim scenes",
              "visual SLAM", "Nav2 path planning", "humanoid balance", "inverse kinematics", "digital twins",
              "domain randomization", "sim-to-real transfer", "lidar point clouds", "depth cameras",
              "launch files", "quality of service", "reinforcement learning", "bipedal walking",
              "vision-language-action models", "speech commands", "tf2 frames", "lifecycle nodes",
              "executors and callbacks", "grasp planning", "motor control"]
    templates = ["How do I use {}?", "What is {}?", "Explain {} in simple terms.", "Why does {} matter?",
                 "Give an example of {}.", "What are common mistakes with {}?", "How is {} tested?",
                 "Compare {} with the alternatives.", "Which chapter covers {}?", "What tools support {}?",
                 "How does {} work on a real robot?", "Summarise {}.", "What are the limits of {}?",
                 "How do I debug {}?", "What hardware does {} need?", "When should I avoid {}?",
                 "How fast is {}?", "What does the book say about {}?", "Show the steps for {}.",
                 "What are the prerequisites for {}?"]
    out = [t.format(topic) for t in templates for topic in topics]
    i = 0
    while len(out) < n:  # beyond 500: number them, still distinct
        out.append(f"{templates[i % len(templates)].format(topics[i % len(topics)])} (variant {i})")
        i += 1
    return out[:n]


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]

    return {"p50": round(pick(0.50), 3), "p95": round(pick(0.95), 3), "p99": round(pick(0.99), 3),
            "mean": round(sum(ordered) / len(ordered), 3), "n": len(ordered)}


def run_warm(args: Args) -> dict[str, Any]:
    import gc

    load_handler, context = lambda_tools()
    base = load_event("retrieve-valid.json")
    varied = [with_body(base, {"query": q, "top_k": 3}) for q in _queries(args.n)]
    cached = with_body(base, {"query": "How do I install ROS 2 Humble?", "top_k": 3})
    health = load_event("health.json")
    handler = load_handler(args.function, root=Path(args.code_root))
    warmup = handler.lambda_handler(load_event("scheduled-warmup.json"), context)

    # Timing hook: Retriever.search already measures its embedding and search phases (SearchResult
    # .embed_ms/.search_ms); record them per call without changing any contract.
    from bookrag.retrieval.retriever import Retriever

    phases: list[tuple[float, float]] = []
    original = Retriever.search

    def timed_search(self: Any, *a: Any, **k: Any) -> Any:
        result = original(self, *a, **k)
        phases.append((result.embed_ms, result.search_ms))
        return result

    Retriever.search = timed_search  # type: ignore[method-assign]

    def invoke(event: dict[str, Any]) -> tuple[float, float, float]:
        phases.clear()
        t0 = time.perf_counter()
        response = handler.lambda_handler(event, context)
        total = (time.perf_counter() - t0) * 1000
        if response.get("statusCode") != 200 or len(phases) != 1:
            raise SystemExit(f"warm invocation failed: {response.get('statusCode')} {response.get('body')!r:.300}")
        embed_ms, search_ms = phases[0]
        return total, embed_ms, search_ms

    for event in varied[:20]:  # first-call paths (pydantic validators, numpy dispatch) out of the figures
        invoke(event)
    gc.collect()
    rss_start = current_rss_mb()
    samples = []
    rss_trace = []
    for i, event in enumerate(varied):
        samples.append(invoke(event))
        if i % 100 == 0:
            rss_trace.append(round(current_rss_mb(), 2))
    gc.collect()
    rss_after_varied = current_rss_mb()
    cached_samples = [invoke(cached) for _ in range(args.cached)]
    health_ms = []
    for _ in range(200):
        t0 = time.perf_counter()
        handler.lambda_handler(health, context)
        health_ms.append((time.perf_counter() - t0) * 1000)
    gc.collect()
    rss_end = current_rss_mb()

    def summary(rows: list[tuple[float, float, float]]) -> dict[str, Any]:
        return {"total_ms": _percentiles([r[0] for r in rows]),
                "embed_ms": _percentiles([r[1] for r in rows]),
                "search_ms": _percentiles([r[2] for r in rows]),
                "overhead_ms": _percentiles([r[0] - r[1] - r[2] for r in rows])}

    return {
        "warmup_status": status_of(warmup) if not isinstance(warmup, dict) or "statusCode" in warmup else "event",
        "varied": summary(samples),
        "cached": summary(cached_samples),
        "health_warm_ms": _percentiles(health_ms),
        "rss_mb": {"start": round(rss_start, 2), "after_varied": round(rss_after_varied, 2),
                   "end": round(rss_end, 2), "drift": round(rss_after_varied - rss_start, 2),
                   "invocations": len(samples), "trace_every_100": rss_trace},
        "responses": [],
    }


def run_ingest(args: Args) -> dict[str, Any]:
    from bookrag.config.settings import get_settings
    from bookrag.ingestion.ingestor import Ingestor
    from bookrag.services.container import container_for

    settings = get_settings()
    embedder = container_for(settings).embedder
    store = container_for(settings).store
    root = Path(args.docs)
    first = Ingestor(settings, embedder, store).run(root)
    second = Ingestor(settings, embedder, store).run(root)
    return {"first": first.as_dict(), "second": second.as_dict(), "responses": []}


def _mcp_body(arguments: dict[str, Any]) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "retrieve_book_content", "arguments": arguments, "_meta": meta}}


def run_mcpwarm(args: Args) -> dict[str, Any]:
    load_handler, context = lambda_tools()
    rest_base = load_event("tool-retrieve-book-content.json")
    mcp_base = load_event("mcp-retrieve-book-content.json")
    retrieval = load_handler("retrieval", root=Path(args.code_root))
    agent = load_handler("agent", root=Path(args.code_root))
    for handler in (retrieval, agent):
        handler.lambda_handler(load_event("scheduled-warmup.json"), context)

    def timed(handler: Any, event: dict[str, Any]) -> float:
        t0 = time.perf_counter()
        response = handler.lambda_handler(event, context)
        ms = (time.perf_counter() - t0) * 1000
        raw = response["body"]
        body = base64.b64decode(raw) if response.get("isBase64Encoded") else raw.encode()
        if response.get("statusCode") != 200 or b'"isError":true' in body:
            raise SystemExit(f"invocation failed: {response.get('statusCode')} {body!r:.300}")
        return ms

    queries = _queries(2 * args.n + 40)
    for q in queries[:20]:  # first-call paths out of the figures, both ways
        timed(retrieval, with_body(rest_base, {"query": q, "top_k": 3}))
        timed(agent, with_body(mcp_base, _mcp_body({"query": q, "top_k": 3})))
    rest_varied, mcp_varied, rest_cached, mcp_cached = [], [], [], []
    for i in range(args.n):  # interleaved, so background load hits both alike; alternate who goes first
        a, b = queries[40 + 2 * i], queries[41 + 2 * i]
        rest_event = with_body(rest_base, {"query": a if i % 2 else b, "top_k": 3})
        mcp_event = with_body(mcp_base, _mcp_body({"query": b if i % 2 else a, "top_k": 3}))
        rest_varied.append(timed(retrieval, rest_event))
        mcp_varied.append(timed(agent, mcp_event))
    cached = "What sensors does a humanoid robot use?"
    for _ in range(args.cached):
        rest_cached.append(timed(retrieval, with_body(rest_base, {"query": cached, "top_k": 3})))
        mcp_cached.append(timed(agent, with_body(mcp_base, _mcp_body({"query": cached, "top_k": 3}))))
    return {"rest_varied_ms": _percentiles(rest_varied), "mcp_varied_ms": _percentiles(mcp_varied),
            "rest_cached_ms": _percentiles(rest_cached), "mcp_cached_ms": _percentiles(mcp_cached),
            "sdk_loaded": "mcp" in sys.modules, "responses": []}


class Args:
    """Command-line options, parsed by hand: argparse alone would add ~20 ms to every cold start measured."""

    def __init__(self, argv: list[str]) -> None:
        self.mode = argv[0]
        self.out = ""
        self.function = "retrieval"
        self.events: list[str] = []
        self.track = False
        self.n = 1000
        self.cached = 500
        self.docs = ""
        self.code_root = str(ROOT)
        i = 1
        while i < len(argv):
            flag = argv[i]
            if flag == "--track":
                self.track = True
            elif flag == "--events":
                while i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                    i += 1
                    self.events.append(argv[i])
            elif flag in ("--out", "--function", "--docs", "--code-root", "--n", "--cached"):
                i += 1
                name = flag[2:].replace("-", "_")
                setattr(self, name, int(argv[i]) if name in ("n", "cached") else argv[i])
            else:
                raise SystemExit(f"unknown option {flag}")
            i += 1
        if self.mode not in MODES or not self.out:
            raise SystemExit(f"usage: child.py {{{','.join(MODES)}}} --out FILE [options]")


def main() -> None:
    args = Args(sys.argv[1:])
    result = MODES[args.mode](args)
    result["started"] = STARTED
    result["peak_rss_mb"] = round(peak_rss_mb(), 2)
    Path(args.out).write_text(json.dumps(result))


MODES = {"naive": run_naive, "cold": run_cold, "restored": run_restored, "warm": run_warm, "ingest": run_ingest,
         "mcpwarm": run_mcpwarm}


if __name__ == "__main__":
    main()
