"""`make loadtest`: concurrent clients against `bookrag serve` on 127.0.0.1, bounded, stopping by itself.

    python benchmarks/loadtest.py [--requests 3000] [--concurrency 40] [--max-seconds 900]
                                  [--docs DIR --questions eval/X.jsonl] [--store DIR] [--out benchmarks/loadtest.json]

A book (the sample book, book/docs, unless --docs names another with its --questions set) is ingested
into a store with the local embedder (a temporary one, or --store, kept for the next run: an unchanged
re-ingest takes a second), and `bookrag serve` is started on a free loopback port. After a sequential
calibration (each question's top result, per route; on the sample book it must be the question's own
file), the clients send `--requests` requests over the four retrieval routes and MCP's
`tools/call retrieve_book_content` on /mcp, each with a query of its own (a question and a unique
reference). Each response must be a 200 that echoes its own query (where the contract echoes it) and
whose top result is the calibrated one for its question. A response whose top result differs is asked
again, alone, after the run: if the lone answer differs from the concurrent one, that is cross-talk (an
error); if it is the same, the unique reference merely moved the ranking (counted, not an error).
Latency percentiles and the server's resident memory (after warm-up, at the end, and its peak) are
written to `--out`.

Exit status: 0 when there was no error, 1 otherwise. Traffic goes to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DOCS = ROOT / "book" / "docs"
BOOKRAG = Path(sys.executable).with_name("bookrag")

# One question per file of the sample book, with the file that must come first.
QUESTIONS: list[tuple[str, str]] = [
    ("What hardware do I need for the simulation workstation and the Jetson Orin?", "appendix-hardware.md"),
    ("What makes an AI physical, and why build humanoids?", "intro.md"),
    ("Why use ROS 2 instead of ROS 1?", "module-1-ros2/index.md"),
    ("How do I install ROS 2 Humble on Ubuntu 22.04?", "module-1-ros2/installation.md"),
    ("What quality of service settings can a topic use?", "module-1-ros2/nodes-topics.md"),
    ("When should I use an action instead of a service?", "module-1-ros2/services-actions.md"),
    ("What is the sim-to-real gap in a digital twin?", "module-2-simulation/digital-twin.mdx"),
    ("Which physics engines does Gazebo support and what is the real-time factor?", "module-2-simulation/gazebo.md"),
    ("How do I describe links and joints with URDF and Xacro?", "module-2-simulation/urdf.md"),
    ("How does domain randomization work in Isaac Sim?", "module-3-perception/isaac.md"),
    ("How does Nav2 localize a robot with AMCL and costmaps?", "module-3-perception/navigation.md"),
    ("What is the difference between proprioception and exteroception in robot sensors?",
     "module-3-perception/sensors.md"),
    ("What are Denavit-Hartenberg parameters in forward kinematics?", "module-4-humanoids/kinematics.md"),
    ("What is the zero moment point in bipedal walking?", "module-4-humanoids/locomotion.md"),
    ("What is the difference between form closure and force closure in a grasp?",
     "module-4-humanoids/manipulation.md"),
    ("How do vision-language-action models turn actions into tokens?", "module-4-humanoids/vla.md"),
]


@dataclass(frozen=True)
class Route:
    path: str
    echo: str | None  # the response field that echoes the query, if the contract has one

    @property
    def kind(self) -> str:
        """Which contract's body the response carries."""
        return self.path

    def body(self, query: str) -> dict[str, Any]:
        return {"query": query}

    def headers(self) -> dict[str, str]:
        return {}

    def unwrap(self, body: dict[str, Any]) -> dict[str, Any]:
        return body

    def results(self, body: dict[str, Any]) -> list[str]:
        """What the response ranked, in order: enough to tell two answers apart."""
        body = self.unwrap(body)
        if self.kind == "/api/retrieve":
            return [c["chunk_id"] for c in body["retrieved_chunks"]]
        if self.kind == "/api/tools/retrieve_book_content":
            return [r["id"] for r in body["results"]]
        if self.kind == "/api/tools/perform_retrieval":
            return [f"{r['source_url']}@{r['position']}" for r in body["results"]]
        return [s["chunk_id"] for s in body["sources"]]

    def top_file(self, body: dict[str, Any]) -> str | None:
        body = self.unwrap(body)
        if self.kind == "/api/retrieve":
            items, key = body["retrieved_chunks"], ("source_file",)
        elif self.kind == "/api/tools/retrieve_book_content":
            items, key = body["results"], ("metadata", "source_file")
        elif self.kind == "/api/tools/perform_retrieval":
            items, key = body["results"], ("source_url",)
        else:
            items, key = body["sources"], ("source_file",)
        if not items:
            return None
        value: Any = items[0]
        for part in key:
            value = value[part]
        return str(value)


@dataclass(frozen=True)
class McpRoute(Route):
    """An MCP client's `tools/call retrieve_book_content` on POST /mcp (2026-07-28, stateless, JSON)."""

    @property
    def kind(self) -> str:
        return "/api/tools/retrieve_book_content"

    def body(self, query: str) -> dict[str, Any]:
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}
        return {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "retrieve_book_content", "arguments": {"query": query}, "_meta": meta}}

    def headers(self) -> dict[str, str]:
        return {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28",
                "mcp-method": "tools/call", "mcp-name": "retrieve_book_content"}

    def unwrap(self, body: dict[str, Any]) -> dict[str, Any]:
        result = body["result"]
        if result.get("isError"):
            raise ValueError(f"tool error: {result['structuredContent']}")
        structured: dict[str, Any] = result["structuredContent"]
        return structured


# 7 of 11 REST, 1 each tool, 1 the same tool over MCP: the mix a chat front end and agents would send together.
ROUTE_MIX = [Route("/api/retrieve", "original_query")] * 7 + [
    Route("/api/tools/retrieve_book_content", None),
    Route("/api/tools/perform_retrieval", "query"),
    Route("/api/tools/retrieve_book_context", None),
    McpRoute("/mcp", None),
]


@dataclass
class Outcome:
    latencies_ms: list[float] = field(default_factory=list)
    per_route_ms: dict[str, list[float]] = field(default_factory=dict)
    errors: Counter[str] = field(default_factory=Counter)
    error_examples: list[str] = field(default_factory=list)
    suspects: list[tuple[int, Route, str, list[str]]] = field(default_factory=list)
    rss_progress: list[tuple[int, float]] = field(default_factory=list)  # (requests done, server RSS MB)

    def error(self, kind: str, example: str) -> None:
        self.errors[kind] += 1
        if len(self.error_examples) < 10:
            self.error_examples.append(f"{kind}: {example[:300]}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def query_for(index: int) -> tuple[str, int]:
    question = index % len(QUESTIONS)
    return f"{QUESTIONS[question][0]} (ref {index:05d})", question


def server_env(store: Path, blas_threads: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QDRANT_", "COHERE_", "EMBEDDING_", "LLM_",
                                                                   "AUTH_", "API_KEY", "GEMINI_", "OPENAI_"))}
    env.update(QDRANT_PATH=str(store), EMBEDDING_PROVIDER="local", POWERTOOLS_METRICS_DISABLED="true")
    if blas_threads:
        # uvicorn runs each request on its own thread; with OpenBLAS's own thread pool behind every one
        # of them, concurrent queries contend for the cores and throughput collapses (about 10x here).
        env["OPENBLAS_NUM_THREADS"] = str(blas_threads)
    return env


def count_chunks(env: dict[str, str], docs: Path) -> int:
    """The book's chunk count, read by the CLI's own report (an unchanged re-ingest: no embedding)."""
    out = subprocess.run([str(BOOKRAG), "ingest", "--json", str(docs)], env=env, check=True,
                         capture_output=True, text=True, timeout=600).stdout
    return int(json.loads(out)["chunks_total"])


def wait_ready(client: httpx.Client, server: subprocess.Popen[bytes], deadline_s: float) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"bookrag serve exited with {server.returncode}")
        try:
            if client.get("/api/health").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)  # polling a starting process: there is nothing to wait on but the port
    raise SystemExit("bookrag serve did not answer /api/health in time")


def calibrate(client: httpx.Client, strict: bool) -> dict[tuple[str, int], str | None]:
    """Each question's top result per route, asked alone; with `strict`, the book must put the expected
    file first (the sample book's questions name theirs)."""
    expected: dict[tuple[str, int], str | None] = {}
    for route in dict.fromkeys(ROUTE_MIX):
        for index, (question, file) in enumerate(QUESTIONS):
            response = client.post(route.path, json=route.body(question), headers=route.headers())
            response.raise_for_status()
            top = route.top_file(response.json())
            # perform_retrieval names a URL, not a file: its calibrated URL is simply recorded.
            if strict and (top is None or (route.kind != "/api/tools/perform_retrieval" and top != file)):
                raise SystemExit(f"calibration: {route.path} ranks {top!r} first for {question!r}, not {file}")
            expected[(route.path, index)] = top
    return expected


async def run_load(base_url: str, total: int, concurrency: int, max_seconds: float,
                   expected: dict[tuple[str, int], str | None], server_pid: int) -> tuple[Outcome, float, float]:
    outcome = Outcome()
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(total):
        queue.put_nowait(i)
    peak = [rss_mb(server_pid)]
    # Idle connections are dropped after 2 s, before uvicorn's 5 s keep-alive timeout: with httpx's default
    # (also 5 s) a request can go out on a connection the server is closing at that moment and be reset
    # (seen: 3 ReadErrors in 5,000). That race is the client's to avoid, whatever the server does.
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency, keepalive_expiry=2.0)
    progress: list[tuple[int, float]] = []
    step = max(1, total // 10)

    async def sample_rss(stop: asyncio.Event) -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], rss_mb(server_pid))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=0.5)

    async def worker(client: httpx.AsyncClient) -> None:
        while True:
            try:
                index = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            query, question = query_for(index)
            route = ROUTE_MIX[index % len(ROUTE_MIX)]
            started = time.perf_counter()
            try:
                response = await client.post(route.path, json=route.body(query), headers=route.headers())
            except httpx.HTTPError as exc:
                outcome.error("transport", f"{route.path} #{index}: {type(exc).__name__}")
                continue
            elapsed = (time.perf_counter() - started) * 1000
            outcome.latencies_ms.append(elapsed)
            if len(outcome.latencies_ms) % step == 0:
                progress.append((len(outcome.latencies_ms), round(rss_mb(server_pid), 1)))
            outcome.per_route_ms.setdefault(route.path, []).append(elapsed)
            if response.status_code != 200:
                outcome.error(f"status {response.status_code}", f"{route.path} #{index}: {response.text}")
                continue
            body = response.json()
            if route.echo and body.get(route.echo) != query:
                outcome.error("echo mismatch", f"#{index} sent {query!r}, got {body.get(route.echo)!r}")
                continue
            if route.top_file(body) != expected[(route.path, question)]:
                outcome.suspects.append((index, route, query, route.results(body)))

    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_rss(stop))
    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=30.0) as client:
        workers = [asyncio.create_task(worker(client)) for _ in range(concurrency)]
        _, pending = await asyncio.wait(workers, timeout=max_seconds)
        for task in pending:
            task.cancel()
        if pending:
            outcome.error("deadline", f"{queue.qsize()} requests not sent within {max_seconds} s")
    duration = time.perf_counter() - started
    stop.set()
    await sampler
    outcome.rss_progress = progress
    return outcome, duration, peak[0]


def recheck(client: httpx.Client, outcome: Outcome) -> int:
    """Ask each suspect again, alone: a different answer means the concurrent one was someone else's."""
    moved = 0
    for index, route, query, concurrent in outcome.suspects:
        alone = route.results(client.post(route.path, json=route.body(query), headers=route.headers()).json())
        if alone != concurrent:
            outcome.error("cross-talk", f"{route.path} #{index}: concurrent {concurrent[:3]} != alone {alone[:3]}")
        else:
            moved += 1
    return moved


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=40)
    parser.add_argument("--docs", type=Path, default=DOCS, help="the book to serve (default: the sample book)")
    parser.add_argument("--questions", type=Path, help="a question set (eval/*.jsonl) for a book other than "
                                                         "the sample book")
    parser.add_argument("--store", type=Path, help="QDRANT_PATH to ingest into and keep (default: temporary)")
    parser.add_argument("--max-seconds", type=float, default=900.0, help="stop sending after this long")
    parser.add_argument("--out", type=Path, default=HERE / "loadtest.json")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="OPENBLAS_NUM_THREADS for the server (0: leave OpenBLAS's default, one per core)")
    args = parser.parse_args()

    strict = args.docs.resolve() == DOCS.resolve()
    if not strict:
        if args.questions is None:
            parser.error("--docs other than the sample book needs --questions")
        QUESTIONS[:] = [(json.loads(line)["question"], "") for line in args.questions.read_text().splitlines()
                        if line.strip()]
    with tempfile.TemporaryDirectory(prefix="bookrag-load-") as tmp:
        env = server_env(args.store or Path(tmp) / "qdrant", args.blas_threads)
        print(f"ingesting {args.docs} ...", flush=True)
        subprocess.run([str(BOOKRAG), "ingest", str(args.docs)], env=env, check=True, timeout=3600,
                       stdout=subprocess.DEVNULL)
        chunks = count_chunks(env, args.docs)
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        log = (Path(tmp) / "serve.log").open("wb")
        server = subprocess.Popen([str(BOOKRAG), "serve", "--host", "127.0.0.1", "--port", str(port)], env=env,
                                  stdout=log, stderr=subprocess.STDOUT)
        try:
            with httpx.Client(base_url=base_url, timeout=30.0) as client:
                wait_ready(client, server, deadline_s=120)
                rss_ready = rss_mb(server.pid)
                expected = calibrate(client, strict)
                print(f"calibrated {len(expected)} (route, question) pairs; warming up ...", flush=True)
                warm, _, _ = asyncio.run(run_load(base_url, 2 * args.concurrency, args.concurrency, 120, expected,
                                                  server.pid))
                rss_warm = rss_mb(server.pid)
                print(f"sending {args.requests} requests from {args.concurrency} clients ...", flush=True)
                outcome, duration, rss_peak = asyncio.run(
                    run_load(base_url, args.requests, args.concurrency, args.max_seconds, expected, server.pid))
                rss_end = rss_mb(server.pid)
                rss_peak = max(rss_peak, rss_end)
                moved = recheck(client, outcome)
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
            log.close()
            server_log = (Path(tmp) / "serve.log").read_text(errors="replace").splitlines()[-20:]

    lat = outcome.latencies_ms
    results = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "server": "bookrag serve (uvicorn, 1 process), local embedder, embedded Qdrant",
        "book": {"docs": str(args.docs), "chunks": chunks, "questions": len(QUESTIONS)},
        "server_blas_threads": args.blas_threads or "OpenBLAS default",
        "requests": args.requests,
        "completed": len(lat),
        "concurrency": args.concurrency,
        "route_mix": dict(Counter(r.path for r in ROUTE_MIX)),
        "duration_s": round(duration, 2),
        "throughput_rps": round(len(lat) / duration, 1) if duration else 0.0,
        "errors": sum(outcome.errors.values()),
        "errors_by_kind": dict(outcome.errors),
        "error_examples": outcome.error_examples,
        "warm_up_errors": sum(warm.errors.values()),
        "server_log_tail": server_log if outcome.errors else [],
        "top_result_moved_by_the_reference": moved,
        "latency_ms": {
            "p50": round(statistics.median(lat), 1) if lat else None,
            "p95": round(percentile(lat, 95), 1) if lat else None,
            "p99": round(percentile(lat, 99), 1) if lat else None,
            "max": round(max(lat), 1) if lat else None,
            "mean": round(statistics.fmean(lat), 1) if lat else None,
        },
        "latency_ms_by_route": {path: {"count": len(v), "p50": round(statistics.median(v), 1),
                                       "p95": round(percentile(v, 95), 1)}
                                for path, v in sorted(outcome.per_route_ms.items())},
        "server_rss_mb": {"ready": round(rss_ready, 1), "after_warm_up": round(rss_warm, 1),
                          "end": round(rss_end, 1), "peak": round(rss_peak, 1),
                          "drift_after_warm_up": round(rss_end - rss_warm, 1),
                          "by_requests_done": dict(outcome.rss_progress)},
    }
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps({k: results[k] for k in ("requests", "concurrency", "errors", "latency_ms", "server_rss_mb",
                                              "throughput_rps")}, indent=2))
    return 0 if results["errors"] == 0 and len(lat) == args.requests else 1


if __name__ == "__main__":
    sys.exit(main())
