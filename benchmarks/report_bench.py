"""`make bench`: how long `bookrag report` takes on a question log of 1k, 3k and 10k records (target: 10k in
<= 10 s), from the owner's shell: a fresh process, the JSON report, the sample book's index for the gaps'
nearest sections.

    python benchmarks/report_bench.py [--sizes 1000,3000,10000] [--out benchmarks/report-results]

The logs are synthetic (`question_log_synth.py`) from the sample book's eval questions and off-book ones,
each asked once through the real extractive agent (answers kept in benchmarks/report-asked-sample-book.json,
so the bench does not re-ask them). Two wordings: "typical" (30% of records reworded: the distinct gap
questions a real log holds) and "varied" (every record reworded: far more distinct questions to embed,
the worst case for the embedder). Each log is reported twice: cold (no kept question vectors: every
distinct gap question embedded) and warm (the vectors the first report kept). Writes OUT.json, OUT.md and
OUT.png (seconds against log size).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "shared"))

import question_log_synth as synth  # noqa: E402

ASKED = HERE / "report-asked-sample-book.json"
STORE = ROOT / ".bookrag" / "report-bench" / "qdrant"
WORDINGS = {"typical": 0.3, "varied": 1.0}
TARGET_S = 10.0


def ensure_store(env: dict[str, str]) -> None:
    if STORE.exists():
        return
    subprocess.run([str(Path(sys.executable).parent / "bookrag"), "ingest", str(ROOT / "book" / "docs")],
                   env=env, check=True, stdout=subprocess.DEVNULL)


def timed_report(env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    t0 = time.perf_counter()
    done = subprocess.run([str(Path(sys.executable).parent / "bookrag"), "report", "--since", "all", "--json"],
                          env=env, check=True, capture_output=True, text=True)
    return time.perf_counter() - t0, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,3000,10000")
    parser.add_argument("--out", type=Path, default=HERE / "report-results")
    args = parser.parse_args()
    env = {**os.environ, "QDRANT_PATH": str(STORE), "EMBEDDING_PROVIDER": "local", "LLM_PROVIDER": "extractive"}
    ensure_store(env)
    asked = json.loads(ASKED.read_text(encoding="utf-8"))
    rows = []
    for wording, variety in WORDINGS.items():
        for size in [int(s) for s in args.sizes.split(",")]:
            folder = Path(tempfile.mkdtemp(prefix="report-bench-"))
            try:
                records, votes = synth.synthesise(asked, size, 30, variety, seed=7, now=time.time())
                synth.write_log(folder, records, votes)
                run_env = {**env, "QUESTION_LOG_PATH": str(folder)}
                cold, data = timed_report(run_env)
                warm, _ = timed_report(run_env)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            gaps = data["gaps"]
            row = {"wording": wording, "records": size, "gap_questions": gaps["questions"],
                   "distinct_gap_questions": gaps["distinct"], "clusters": gaps["clusters_total"],
                   "cold_s": round(cold, 2), "warm_s": round(warm, 2)}
            print(row, flush=True)
            rows.append(row)
    result = {"target_s": TARGET_S, "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                                "load_average_1m": round(os.getloadavg()[0], 2)},
              "rows": rows}
    args.out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    write_markdown(result, args.out.with_suffix(".md"))
    write_png(rows, args.out.with_suffix(".png"))


def write_markdown(result: dict[str, Any], path: Path) -> None:
    lines = ["# `bookrag report`: seconds against log size", "",
             f"Target: a log of 10,000 records in <= {result['target_s']:.0f} s. A fresh `bookrag report --json` "
             "process on the sample book's index (local embedder), end to end. Cold: no kept question vectors; "
             f"warm: the second report. {result['machine']['cpus']} CPUs, 1-minute load average "
             f"{result['machine']['load_average_1m']} at the end (the machine is shared).", "",
             "| wording | records | gap questions | distinct | clusters | cold (s) | warm (s) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    lines += [f"| {r['wording']} | {r['records']} | {r['gap_questions']} | {r['distinct_gap_questions']} | "
              f"{r['clusters']} | {r['cold_s']} | {r['warm_s']} |" for r in result["rows"]]
    lines += ["", "A cold report's cost is its distinct gap questions divided by the local model's rate: "
              "~200 questions/s on a quiet 2-core machine, several times less when other jobs hold the cores "
              "(the load average above says how quiet this run was). "
              "Records, votes, counting and clustering add little: the warm column. The kept vectors make "
              "every report after the first pay only for the questions new since."]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_png(rows: list[dict[str, Any]], path: Path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    for wording in WORDINGS:
        mine = [r for r in rows if r["wording"] == wording]
        sizes = [r["records"] for r in mine]
        ax.plot(sizes, [r["cold_s"] for r in mine], marker="o", label=f"{wording}, cold")
        ax.plot(sizes, [r["warm_s"] for r in mine], marker="o", linestyle="--", label=f"{wording}, warm")
    ax.axhline(TARGET_S, color="#c8553d", linewidth=1, label="target")
    ax.set_xlabel("records in the log")
    ax.set_ylabel("seconds (bookrag report --json)")
    ax.legend(frameon=False)
    fig.savefig(path, metadata={"Software": None})


if __name__ == "__main__":
    if sys.argv[1:2] == ["--markdown"]:  # rewrite OUT.md from OUT.json
        out = Path(sys.argv[2]) if len(sys.argv) > 2 else HERE / "report-results"
        write_markdown(json.loads(out.with_suffix(".json").read_text(encoding="utf-8")), out.with_suffix(".md"))
    else:
        main()
