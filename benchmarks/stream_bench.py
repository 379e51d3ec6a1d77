"""Time to first answer text on POST /api/answer/stream vs a complete POST /api/answer (issue 15's target).

The sample book is ingested into a temporary store (local embedder, extractive answerer) and served by
two fresh `bookrag serve` processes on 127.0.0.1, one per route, so neither route profits from the
other's caches. Each question of eval/agent-sample-book.jsonl is asked once on each, alternately.
"First answer text" is the first `delta` event (the first sentence), or the `final` event when nothing
is streamed before it (a refusal). Also checked: each stream's `final` equals the complete answer.
-> benchmarks/stream-results.json, stream-results.md.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "eval" / "agent-sample-book.jsonl"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(store: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "bookrag.devtools.cli", "serve", "--port", str(port)],
                               env={**env, "QDRANT_PATH": str(store)}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/api/health", timeout=1).status_code == 200:
                return process, base
        except httpx.TransportError:
            time.sleep(0.2)
    process.terminate()
    raise SystemExit("bookrag serve did not come up")


def streamed(client: httpx.Client, base: str, question: str) -> tuple[float, float, dict[str, object]]:
    """(seconds to first answer text, seconds to the final event, the final response)."""
    start = time.perf_counter()
    first = None
    with client.stream("POST", f"{base}/api/answer/stream", json={"query": question}) as response:
        kind = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: ") and kind in ("delta", "final"):
                first = first if first is not None else time.perf_counter() - start
                if kind == "final":
                    return first, time.perf_counter() - start, json.loads(line.removeprefix("data: "))
    raise SystemExit(f"no final event for {question!r}")


def main() -> None:
    questions = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines() if line.strip()]
    env = {k: v for k, v in os.environ.items() if k.upper() not in {"AUTH_ENABLED", "API_KEY_HASHES", "LLM_PROVIDER"}}
    env.update(EMBEDDING_PROVIDER="local", LLM_PROVIDER="extractive", POWERTOOLS_METRICS_DISABLED="true",
               PYTHONPATH=str(ROOT / "shared"))
    workdir = Path(tempfile.mkdtemp(prefix="bookrag-stream-bench-"))
    try:
        store = workdir / "a"
        subprocess.run([sys.executable, "-m", "bookrag.devtools.cli", "ingest", str(ROOT / "book" / "docs")],
                       env={**env, "QDRANT_PATH": str(store)}, check=True, capture_output=True)
        shutil.copytree(store, workdir / "b", ignore=shutil.ignore_patterns(".lock"))
        (stream_server, stream_base), (answer_server, answer_base) = serve(store, env), serve(workdir / "b", env)
        rows = []
        try:
            with httpx.Client(timeout=60) as client:
                for server_base in (stream_base, answer_base):  # load the model in each before timing
                    client.post(f"{server_base}/api/answer", json={"query": "warm-up: what is a robot?"})
                for i, question in enumerate(questions):
                    def whole(q: str = question) -> tuple[float, dict[str, object]]:
                        start = time.perf_counter()
                        body = client.post(f"{answer_base}/api/answer", json={"query": q}).json()
                        return time.perf_counter() - start, body
                    if i % 2:  # alternate which route goes first, so load on the machine hits both alike
                        complete, body = whole()
                        first, final_s, final = streamed(client, stream_base, question)
                    else:
                        first, final_s, final = streamed(client, stream_base, question)
                        complete, body = whole()
                    rows.append({"question": question, "first_text_s": round(first, 4),
                                 "stream_final_s": round(final_s, 4), "answer_s": round(complete, 4),
                                 "refused": bool(body["is_refusal"]),
                                 "same_response": final == body})
        finally:
            for process in (stream_server, answer_server):
                process.terminate()
                process.wait(timeout=30)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    p50 = {k: round(statistics.median(r[k] for r in rows), 4) for k in ("first_text_s", "stream_final_s", "answer_s")}
    answered = [r for r in rows if not r["refused"]]
    p50_answered = {k: round(statistics.median(r[k] for r in answered), 4) for k in ("first_text_s", "answer_s")}
    ratio = round(p50["first_text_s"] / p50["answer_s"], 3)
    result = {"questions": len(rows), "answered": len(answered), "p50": p50, "p50_answered": p50_answered,
              "first_text_over_complete_p50": ratio, "target": "<= 0.5", "met": ratio <= 0.5,
              "all_final_events_equal_the_complete_answer": all(r["same_response"] for r in rows), "rows": rows}
    out = ROOT / "benchmarks"
    (out / "stream-results.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = ["# Streaming: time to first answer text (`make bench`, benchmarks/stream_bench.py)", "",
             f"{len(rows)} questions (eval/agent-sample-book.jsonl, {len(answered)} answered), extractive answerer,",
             "local embedder, `bookrag serve` on 127.0.0.1 (one fresh server per route).", "",
             "| p50 | first answer text (stream) | stream complete | POST /api/answer |", "| --- | --- | --- | --- |",
             f"| all questions | {p50['first_text_s']} s | {p50['stream_final_s']} s | {p50['answer_s']} s |",
             f"| answered only | {p50_answered['first_text_s']} s | | {p50_answered['answer_s']} s |", "",
             f"First text / complete answer, p50: **{ratio}** (target <= 0.5: {'met' if ratio <= 0.5 else 'NOT met'}).",
             "Every stream's final event equals the complete answer: "
             f"{result['all_final_events_equal_the_complete_answer']}."]
    (out / "stream-results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
