"""`make bench-mcp`: the MCP endpoint's targets, through the real Lambda handlers, offline, on this machine.

    python benchmarks/mcp_bench.py [--runs 5] [--n 500] [--out benchmarks/mcp-results.json]

  * warm: `tools/call retrieve_book_content` on POST /mcp (agent handler) vs the same request on
    POST /api/tools/retrieve_book_content (retrieval handler), interleaved in one process after a warm-up
    of each; varied queries (the embedding is computed) and one cached query (protocol overhead alone).
    Target: MCP p50 within 3 ms of REST p50.
  * cold: fresh process to first complete response, MCP tool call vs REST tool call (median of --runs
    interleaved rounds after a discarded priming round). Target: MCP <= 1.1 x REST.
  * imports: a health check and a scheduled warm-up of the agent function (which serves /mcp), in fresh
    processes, import no module of the MCP SDK. Target: none.
Writes --out (JSON) and the same path with .md (a table). Uses benchmarks/child.py and suite.py's helpers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from suite import ROOT, SAMPLE_DOCS, child_env, log, measure_ingest, run_child

COLD = {
    "rest_tool": ["--function", "retrieval", "--events", "tool-retrieve-book-content.json"],
    "mcp_tool": ["--function", "agent", "--events", "mcp-retrieve-book-content.json"],
}


def measure_cold(env: dict[str, str], runs: int, mode: str = "cold") -> dict[str, Any]:
    """First response of each COLD scenario in a fresh process, median of `runs`. `cold`: from the spawn.
    `restored`: the deployed configuration (both functions have SnapStart), from the moment the container
    is restored after init and the before-snapshot warm-up."""
    samples: dict[str, list[float]] = {name: [] for name in COLD}
    for round_no in range(runs + 1):  # round 0 primes the page and bytecode caches: discarded
        for name, argv in COLD.items():
            spawned, result, _ = run_child(mode, env, *argv, "--code-root", str(ROOT))
            first = result["responses"][0]
            if first["status"] != 200:
                raise SystemExit(f"{name} ({mode}): status {first['status']}")
            if round_no:
                samples[name].append(first["t"] - (result["restored"] if mode == "restored" else spawned))
        log(f"{mode} round {round_no}/{runs}: " + ", ".join(f"{n} {s[-1]:.3f}s" for n, s in samples.items() if s))
    out: dict[str, Any] = {name: {"median_s": round(statistics.median(s), 4), "min_s": round(min(s), 4),
                                  "max_s": round(max(s), 4), "runs_s": [round(x, 4) for x in s]}
                           for name, s in samples.items()}
    out["mcp_vs_rest"] = round(out["mcp_tool"]["median_s"] / out["rest_tool"]["median_s"], 3)
    return out


def sdk_imports(env: dict[str, str]) -> dict[str, list[str]]:
    _, result, _ = run_child("cold", env, "--function", "agent", "--track", "--code-root", str(ROOT),
                             "--events", "health.json", "scheduled-warmup.json")
    return {r["event"]: [m for m in r["new_modules"] if m.split(".")[0] in ("mcp", "mcp_types")]
            for r in result["responses"]}


def markdown(results: dict[str, Any]) -> str:
    warm, cold, imports = results["warm"], results["cold"], results["sdk_imports"]
    rows = [
        ("warm tools/call retrieve_book_content p50 - REST p50, varied queries",
         f"{results['warm_delta_p50_ms']:+.2f} ms",
         "<= 3 ms", results["warm_delta_p50_ms"] <= 3),
        ("same, one cached query (protocol overhead alone)", f"{results['warm_cached_delta_p50_ms']:+.2f} ms",
         "<= 3 ms", results["warm_cached_delta_p50_ms"] <= 3),
        ("MCP cold start / REST cold start (tool call, fresh process)", f"{cold['mcp_vs_rest']:.3f}", "<= 1.1",
         cold["mcp_vs_rest"] <= 1.1),
        ("MCP cold start / REST cold start, SnapStart as deployed (restore to first response)",
         f"{results['restored']['mcp_vs_rest']:.3f}", "<= 1.1", results["restored"]["mcp_vs_rest"] <= 1.1),
        ("MCP SDK modules imported by a health check and a warm-up", str(sum(len(v) for v in imports.values())),
         "0", not any(imports.values())),
    ]
    lines = [
        "# MCP endpoint benchmark", "",
        f"`make bench-mcp` on {results['meta']['date']} - {results['meta']['machine']}, load average "
        f"{results['meta'].get('load_start', '?')} at start and {results['meta'].get('load_end', '?')} at end; the "
        "sample book on the embedded store, local embedder, handlers run as in benchmarks/child.py. Targets "
        "are relative (MCP vs REST, interleaved), so they hold up under load better than absolute figures.", "",
        "| target | measured | limit | met |", "| --- | --- | --- | --- |",
        *[f"| {a} | {b} | {c} | {'yes' if d else 'NO'} |" for a, b, c, d in rows], "",
        f"## Warm, through the Lambda handlers ({warm['rest_varied_ms']['n']} varied + "
        f"{warm['rest_cached_ms']['n']} cached calls each, interleaved)", "",
        "| | p50 | p95 | p99 | mean |", "| --- | --- | --- | --- | --- |",
    ]
    for key, label in (("rest_varied_ms", "REST POST /api/tools/retrieve_book_content, varied"),
                       ("mcp_varied_ms", "MCP tools/call retrieve_book_content, varied"),
                       ("rest_cached_ms", "REST, cached query"), ("mcp_cached_ms", "MCP, cached query")):
        p = warm[key]
        lines.append(f"| {label} | {p['p50']:.2f} ms | {p['p95']:.2f} ms | {p['p99']:.2f} ms | {p['mean']:.2f} ms |")
    lines += ["", f"## Cold start, fresh process to first response (median of {len(cold['rest_tool']['runs_s'])})", "",
              "| scenario | median | min | max |", "| --- | --- | --- | --- |"]
    for key, label in (("rest_tool", "REST tool call (retrieval function)"),
                       ("mcp_tool", "MCP tools/call (agent function)")):
        c = cold[key]
        lines.append(f"| {label} | {c['median_s']:.3f} s | {c['min_s']:.3f} s | {c['max_s']:.3f} s |")
    restored = results["restored"]
    lines += ["", f"## Cold start with SnapStart, restore to first response (median of "
                  f"{len(restored['rest_tool']['runs_s'])})", "",
              "Both functions are deployed with SnapStart (template.yaml); the snapshot is taken after init and "
              "the before-snapshot warm-up, which loads the MCP SDK on the agent function only. Lambda's own "
              "restore time comes on top of these figures and is the same for both functions.", "",
              "| scenario | median | min | max |", "| --- | --- | --- | --- |"]
    for key, label in (("rest_tool", "REST tool call (retrieval function)"),
                       ("mcp_tool", "MCP tools/call (agent function)")):
        c = restored[key]
        lines.append(f"| {label} | {c['median_s'] * 1000:.1f} ms | {c['min_s'] * 1000:.1f} ms | "
                     f"{c['max_s'] * 1000:.1f} ms |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--cached", type=int, default=300)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "mcp-results.json")
    args = parser.parse_args()
    results: dict[str, Any] = {"meta": {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                        "machine": f"{platform.python_version()}, {platform.machine()}, "
                                                   f"{os.cpu_count()} CPUs",
                                        "load_start": round(os.getloadavg()[0], 2)}}
    with tempfile.TemporaryDirectory(prefix="bookrag-mcp-bench-") as tmp:
        store = Path(tmp) / "qdrant"
        log(f"ingesting the sample book into {store}")
        measure_ingest(child_env(store, ROOT, as_lambda=False), ROOT, SAMPLE_DOCS)
        env = child_env(store, ROOT)
        log(f"warm: {args.n} varied + {args.cached} cached calls each way")
        _, warm, _ = run_child("mcpwarm", env, "--n", str(args.n), "--cached", str(args.cached),
                               "--code-root", str(ROOT), timeout=1800)
        results["warm"] = {k: v for k, v in warm.items() if k not in ("responses", "started")}
        results["warm_delta_p50_ms"] = round(warm["mcp_varied_ms"]["p50"] - warm["rest_varied_ms"]["p50"], 3)
        results["warm_cached_delta_p50_ms"] = round(warm["mcp_cached_ms"]["p50"] - warm["rest_cached_ms"]["p50"], 3)
        log(f"warm p50 delta {results['warm_delta_p50_ms']} ms (cached {results['warm_cached_delta_p50_ms']} ms)")
        results["cold"] = measure_cold(env, args.runs)
        results["restored"] = measure_cold(env, args.runs, mode="restored")
        results["sdk_imports"] = sdk_imports(env)
    results["meta"]["load_end"] = round(os.getloadavg()[0], 2)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(markdown(results))
    log(f"wrote {args.out} and {args.out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
