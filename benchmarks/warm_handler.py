"""Warm POST /api/retrieve through the Lambda handler on a real book's store, in two CPU configurations.

    python benchmarks/warm_handler.py --store DIR [--n 500] [--rounds 3] [--out benchmarks/warm-handler.json]

`--store` is a QDRANT_PATH holding the book (for textbook-2: `bookrag ingest .../physical-ai-textbook-2/docs`
with QDRANT_PATH=DIR and EMBEDDING_PROVIDER=local; one minute on two idle cores). Each round runs
benchmarks/child.py's `warm` mode once per configuration, interleaved, so both see the same machine:

- `template`: the functions' environment from template.yaml, one BLAS thread: a function of 1,024 MB
  has less than one vCPU, where BLAS threads only contend for it;
- `two-vcpu`: two BLAS threads that stop spinning soon after each product (`OPENBLAS_THREAD_TIMEOUT=4`;
  by default OpenBLAS's idle threads spin and take the core from the store's search): a laptop, or a
  function of 3,538 MB or more (two vCPUs).

The figures are the median over rounds of each round's p50 and p95 (a round: `--n` varied questions).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from scaling import handler_warm  # noqa: E402

CONFIGS: dict[str, dict[str, str]] = {
    "template": {},
    "two-vcpu": {"OPENBLAS_NUM_THREADS": "2", "OPENBLAS_THREAD_TIMEOUT": "4"},
}


def one_round(store: Path, n: int, extra: dict[str, str]) -> dict[str, Any]:
    warm = handler_warm(store, n, extra)
    return {part: {q: warm[f"{part}_ms"][q] for q in ("p50", "p95")} for part in ("total", "embed", "search")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE / "warm-handler.json")
    args = parser.parse_args()

    rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in CONFIGS}
    for _ in range(args.rounds):
        for name, extra in CONFIGS.items():
            rounds[name].append(one_round(args.store, args.n, extra))
    summary = {name: {part: {q: round(statistics.median(r[part][q] for r in rows), 2) for q in ("p50", "p95")}
                      for part in ("total", "embed", "search")} for name, rows in rounds.items()}
    report = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "store": str(args.store),
              "n": args.n, "rounds": args.rounds, "configs": {k: v or "template.yaml" for k, v in CONFIGS.items()},
              "median_of_rounds_ms": summary, "per_round": rounds}
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
