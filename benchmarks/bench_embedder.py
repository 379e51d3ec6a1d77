"""Throughput of the numpy all-MiniLM-L6-v2 embedder on chunk-sized texts.

    python benchmarks/bench_embedder.py [--n-texts 256] [--batch-size 32] [--repeat 3]

Texts are synthetic but deterministic (fixed seed, fixed vocabulary), each built to 150-230 wordpiece
tokens like the chunker's output, so figures are comparable between runs and machines. The budget is
>= 3,000 tokens/s on an otherwise idle 2-core machine; `run()` reports whether it was met, and with
`--check` the CLI exits 1 below it. The 1-minute load average is reported too: on cores shared with
other processes the figure drops roughly in proportion, which is not a regression.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bookrag.adapters.embedders.local import LocalEmbedder

# Allow running from a checkout where bookrag is not pip-installed.
_SHARED = Path(__file__).resolve().parent.parent / "shared"
if _SHARED.is_dir() and str(_SHARED) not in sys.path:
    sys.path.insert(0, str(_SHARED))

BUDGET_TOKENS_PER_S = 3000.0
SEED = 20240611

_SENTENCES = [
    "ROS 2 nodes communicate over topics using a publish-subscribe pattern built on DDS.",
    "Quality-of-service profiles decide whether a message must arrive or may be dropped.",
    "The tf2 library keeps a time-stamped tree of coordinate frames for every sensor.",
    "Gazebo simulates rigid-body dynamics, contacts and sensors such as lidar and depth cameras.",
    "NVIDIA Isaac Sim renders photorealistic scenes and generates synthetic training data.",
    "Visual SLAM estimates the robot's pose while building a map of an unknown environment.",
    "Nav2 plans a collision-free path and a controller follows it at a fixed rate.",
    "A humanoid's balance controller tracks the zero-moment point inside the support polygon.",
    "Inverse kinematics computes joint angles that place the end effector at a desired pose.",
    "Vision-language-action models map a camera image and an instruction to motor commands.",
    "Domain randomization varies textures, lighting, masses and friction during training.",
    "Whisper transcribes the spoken command before a language model plans the task steps.",
    "Launch files compose nodes, remap topics and load parameters from YAML files.",
    "`ros2 topic echo /joint_states --qos-reliability best_effort` prints incoming messages.",
    "The URDF describes links, joints, inertias and collision meshes of the robot model.",
    "Reinforcement learning policies are trained for millions of simulated episodes.",
    "Lifecycle nodes move through unconfigured, inactive, active and finalized states.",
    "Executors decide which callbacks run on which threads, and callback groups constrain them.",
    "def on_scan(self, msg: LaserScan) -> None: self.ranges = np.asarray(msg.ranges)",
    "Sim-to-real transfer fails when the simulated sensor noise is far from the real one.",
]


def make_texts(embedder: LocalEmbedder, n_texts: int, *, seed: int = SEED) -> list[str]:
    """`n_texts` deterministic texts of 150-230 wordpiece tokens each."""
    rng = random.Random(seed)
    texts: list[str] = []
    for _ in range(n_texts):
        target = rng.randint(150, 230)
        parts: list[str] = []
        tokens = 0
        while True:
            sentence = rng.choice(_SENTENCES)
            n = embedder.count_tokens(sentence)
            if tokens + n > target:
                break
            parts.append(sentence)
            tokens += n
        texts.append(" ".join(parts))
    return texts


def run(n_texts: int = 256, *, batch_size: int | None = None, repeat: int = 3) -> dict[str, Any]:
    """Embed `n_texts` chunk-sized texts `repeat` times; report the best run.

    Returns a dict with tokens_per_s, chunks_per_s, seconds, n_texts, n_tokens (incl. [CLS]/[SEP],
    i.e. what the encoder processes), batch_size, load_seconds, meets_budget, cpus and load_avg_1m
    (sampled before the run).
    """
    from bookrag.adapters.embedders.local import LocalEmbedder

    load_avg = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    t0 = time.perf_counter()
    embedder = LocalEmbedder() if batch_size is None else LocalEmbedder(batch_size=batch_size)
    load_s = time.perf_counter() - t0
    texts = make_texts(embedder, n_texts)
    n_tokens = sum(n + 2 for n in embedder.count_tokens_batch(texts))
    embedder.embed_documents(texts[: embedder.batch_size])  # warm-up: allocator, BLAS threads
    best = float("inf")
    for _ in range(max(1, repeat)):
        t = time.perf_counter()
        embedder.embed_documents(texts)
        best = min(best, time.perf_counter() - t)
    tokens_per_s = n_tokens / best
    return {
        "n_texts": n_texts,
        "n_tokens": n_tokens,
        "batch_size": embedder.batch_size,
        "seconds": round(best, 3),
        "tokens_per_s": round(tokens_per_s, 1),
        "chunks_per_s": round(n_texts / best, 1),
        "load_seconds": round(load_s, 3),
        "meets_budget": tokens_per_s >= BUDGET_TOKENS_PER_S,
        "cpus": os.cpu_count(),
        "load_avg_1m": round(load_avg, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-texts", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--check", action="store_true", help="exit 1 when below the budget")
    args = parser.parse_args()
    result = run(args.n_texts, batch_size=args.batch_size, repeat=args.repeat)
    print(
        f"local embedder: {result['tokens_per_s']:.0f} tokens/s, {result['chunks_per_s']:.1f} chunks/s "
        f"({result['n_texts']} texts, {result['n_tokens']} tokens, batch {result['batch_size']}, "
        f"best of {args.repeat}: {result['seconds']}s; model load {result['load_seconds']}s; "
        f"{result['cpus']} CPUs, load average {result['load_avg_1m']}) "
        f"budget {BUDGET_TOKENS_PER_S:.0f} tokens/s: {'OK' if result['meets_budget'] else 'BELOW'}"
    )
    return 1 if args.check and not result["meets_budget"] else 0


if __name__ == "__main__":
    sys.exit(main())
