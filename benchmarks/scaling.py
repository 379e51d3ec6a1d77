"""`make bench` scaling run: the embedded store at about 2k, 10k and 50k chunks, Qdrant Edge against
qdrant-client's local mode (the embedded store before it), in one run.

    python benchmarks/scaling.py [--sizes 2000,10000,50000] [--queries 300] [--local-max-queries 60]
                                 [--out benchmarks/scaling.json] [--png benchmarks/scaling.png]

The store part is synthetic: random unit vectors (384-d, the local embedder's width), BM25-like sparse
vectors (40-60 terms per chunk drawn from a Zipf distribution over 30,000 term ids) and payloads shaped
like real chunks (~900 characters of text, 40 chunks per file). Random vectors are the hard case for
HNSW (no clusters to exploit), so the Edge figures are, if anything, pessimistic. Queries are real
questions embedded by the local model (the query side is what a request pays).

Each (engine, size) runs in a fresh process (so its peak RSS is its own) and measures: write
throughput (upserts, then for Edge the end-of-ingest optimise that builds HNSW), on-disk size, reopen
time (close, open, first search), store search alone (`search` on the adapter, hybrid RRF of a dense and
a BM25 prefetch, payloads and vectors back: what `Retriever.search` asks), and `Retriever.search`
(embed from the query cache's miss path, search, ranking). Edge also gets warm POST /api/retrieve
through the Lambda handler (benchmarks/child.py warm), at each size.

Local mode is capped: it runs at most --local-max-queries searches per size (each ~0.1 s at 50k), and
its handler run is not measured (the service no longer builds it); its `Retriever.search` is the same
code path with the store swapped.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DIM = 384
CHUNKS_PER_FILE = 40
QUESTIONS = [
    "What is the zero moment point in bipedal walking?", "How does a PID controller remove steady-state error?",
    "Which sensors does a humanoid use for balance?", "How do I install ROS 2 Humble on Ubuntu?",
    "What is domain randomization in simulation?", "How does SLAM build a map while localising?",
    "What are Denavit-Hartenberg parameters?", "When should I use an action instead of a service?",
    "How do vision-language-action models turn actions into tokens?", "What is a digital twin?",
    "What is the sim-to-real gap?", "How does Nav2 plan a path around obstacles?",
]
_VOCABULARY = ("robot joint sensor torque controller balance gait actuator kinematics dynamics policy reward "
               "simulation camera lidar imu encoder trajectory planner map localisation grasp gripper model "
               "transformer token latency bandwidth motor battery frame topic node service action")
WORDS = _VOCABULARY.split()


def log(message: str) -> None:
    print(f"[scaling {time.strftime('%H:%M:%S')}] {message}", flush=True)


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]

    return {"p50": round(statistics.median(ordered), 3), "p95": round(pick(0.95), 3), "n": len(ordered)}


def tree_mb(path: Path, apparent: bool = False) -> float:
    """Allocated size (what the disk holds), or `apparent` (file lengths: Edge preallocates sparse mmap
    files, and a zip, a layer's unzipped-size limit or a copy without sparse support counts these)."""
    files = [p.stat() for p in path.rglob("*") if p.is_file()]
    total = sum(st.st_size for st in files) if apparent else sum(st.st_blocks * 512 for st in files)
    return round(total / 2**20, 1)


def synthetic_records(n: int) -> list[Any]:
    import numpy as np

    from bookrag.domain.models import ChunkPayload, PointRecord, SparseVector
    from bookrag.ingestion.ingestor import chunk_uuid

    rng = np.random.default_rng(20261123)
    dense = rng.standard_normal((n, DIM)).astype(np.float32)
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    records = []
    for i in range(n):
        terms = np.unique(rng.zipf(1.3, size=int(rng.integers(40, 61))) % 30_000)
        source_file = f"part-{i // (CHUNKS_PER_FILE * 50):02d}/file-{i // CHUNKS_PER_FILE:05d}.md"
        text = " ".join(rng.choice(WORDS, size=140))
        payload = ChunkPayload(
            chunk_id=chunk_uuid(source_file, i % CHUNKS_PER_FILE), content_text=text, source_file=source_file,
            source_url=f"https://example.test/docs/{source_file[:-3]}#s{i % CHUNKS_PER_FILE}",
            module_name=source_file.split("/")[0], section_heading=f"Section {i % CHUNKS_PER_FILE}",
            heading_path=(f"File {i // CHUNKS_PER_FILE}", f"Section {i % CHUNKS_PER_FILE}"),
            doc_title=f"File {i // CHUNKS_PER_FILE}", chunk_index=i % CHUNKS_PER_FILE,
            total_chunks=CHUNKS_PER_FILE, token_count=180, page_number=i // CHUNKS_PER_FILE, created_at=0.0,
            content_hash=f"{i:064x}", file_hash=f"{i // CHUNKS_PER_FILE:064x}")
        weights = (1.0 + rng.random(len(terms))).astype(np.float32)
        records.append(PointRecord(chunk_id=payload.chunk_id, dense=dense[i],
                                   sparse=SparseVector([int(t) for t in terms], [float(w) for w in weights]),
                                   payload=payload))
    return records


def open_store(engine: str, folder: Path) -> tuple[Any, Any]:
    """(store, closer) for `engine` on `folder`."""
    from bookrag.config.settings import load_settings

    settings = load_settings(qdrant_path=folder, embedding_provider="local")
    if engine == "edge":
        from bookrag.adapters.store.edge.shards import close_shard
        from bookrag.adapters.store.edge.store import EdgeStore

        return EdgeStore(settings), lambda: close_shard(settings)
    from qdrant_client import QdrantClient

    from bookrag.adapters.store.qdrant.store import VectorStore

    client = QdrantClient(path=str(folder / "local-mode"))
    return VectorStore(settings, client), client.close


def run_child(engine: str, size: int, folder: Path, queries: int) -> dict[str, Any]:
    import numpy as np

    from bookrag.adapters.embedders.local import MODEL_NAME
    from bookrag.config.settings import load_settings
    from bookrag.retrieval.retriever import Retriever
    from bookrag.services.container import container_for
    from bookrag.text.bm25 import BM25Encoder

    records = synthetic_records(size)
    store, close = open_store(engine, folder)
    started = time.perf_counter()
    store.ensure_collection(MODEL_NAME, DIM)
    store.upsert(records, batch_size=256)
    upserted = time.perf_counter()
    store.finish_ingest()
    finished = time.perf_counter()
    del records
    close()
    disk_mb, apparent_mb = tree_mb(folder), tree_mb(folder, apparent=True)

    t0 = time.perf_counter()
    store, close = open_store(engine, folder)
    settings = load_settings(qdrant_path=folder, embedding_provider="local")
    embedder = container_for(settings).embedder
    bm25 = BM25Encoder()
    vectors = [np.asarray(embedder.embed_query(q)) for q in QUESTIONS]
    t1 = time.perf_counter()
    store.search(vectors[0], bm25.encode_query(QUESTIONS[0]), mode="hybrid", limit=10)
    reopen_s = time.perf_counter() - t1  # open is lazy: the first search opens the store
    setup_s = t1 - t0

    search_ms = []
    for i in range(queries):
        q = i % len(QUESTIONS)
        t = time.perf_counter()
        hits = store.search(vectors[q], bm25.encode_query(QUESTIONS[q]), mode="hybrid", limit=10)
        search_ms.append((time.perf_counter() - t) * 1000)
        assert len(hits) == 10
    retriever = Retriever(settings, embedder, store, None)
    retrieve_ms = []
    for i in range(queries):
        t = time.perf_counter()
        retriever.search(f"{QUESTIONS[i % len(QUESTIONS)]} ({i})")  # a new query: the embedding is paid
        retrieve_ms.append((time.perf_counter() - t) * 1000)
    close()
    return {"engine": engine, "chunks": size, "upsert_s": round(upserted - started, 2),
            "optimize_s": round(finished - upserted, 2), "ingest_s": round(finished - started, 2),
            "write_points_per_s": round(size / (finished - started), 1), "disk_mb": disk_mb,
            "apparent_mb": apparent_mb,
            "reopen_s": round(reopen_s, 3), "model_setup_s": round(setup_s, 2),
            "search_ms": percentiles(search_ms), "retriever_search_ms": percentiles(retrieve_ms),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def handler_warm(folder: Path, n: int, extra_env: dict[str, str] | None = None) -> dict[str, Any]:
    """Warm POST /api/retrieve through the Lambda handler on this store (benchmarks/child.py warm), in the
    functions' environment from template.yaml, with `extra_env` on top."""
    sys.path.insert(0, str(HERE))
    from suite import child_env
    from suite import run_child as run_bench_child

    env = {**child_env(folder, ROOT), **(extra_env or {})}
    _, warm, _ = run_bench_child("warm", env, "--n", str(n), "--cached", "50", "--code-root", str(ROOT),
                                 timeout=1800)
    return {"total_ms": warm["varied"]["total_ms"], "search_ms": warm["varied"]["search_ms"],
            "embed_ms": warm["varied"]["embed_ms"], "peak_rss_mb": warm["peak_rss_mb"]}


def plot(results: list[dict[str, Any]], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for engine, label, style in (("edge", "Qdrant Edge", "o-"), ("local", "qdrant-client local mode", "s--")):
        rows = sorted((r for r in results if r["engine"] == engine), key=lambda r: r["chunks"])
        if not rows:
            continue
        sizes = [r["chunks"] for r in rows]
        left.plot(sizes, [r["search_ms"]["p50"] for r in rows], style, label=f"{label} p50")
        left.plot(sizes, [r["search_ms"]["p95"] for r in rows], style, alpha=0.4, label=f"{label} p95")
        right.plot(sizes, [r["retriever_search_ms"]["p50"] for r in rows], style, label=f"{label}: Retriever.search")
        if engine == "edge" and all("handler" in r for r in rows):
            right.plot(sizes, [r["handler"]["total_ms"]["p50"] for r in rows], "^-",
                       label="Qdrant Edge: POST /api/retrieve (handler)")
    for ax, title in ((left, "store search alone (hybrid RRF)"), (right, "warm retrieve, local embedder (p50)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        sizes_seen = sorted({r["chunks"] for r in results})
        ax.set_xticks(sizes_seen, [f"{n:,}" for n in sizes_seen])
        ax.minorticks_off()
        ax.set_xlabel("chunks in the book")
        ax.set_ylabel("ms")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2000,10000,50000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--local-max-queries", type=int, default=60)
    parser.add_argument("--engines", default="edge,local")
    parser.add_argument("--handler-n", type=int, default=300, help="warm handler invocations per size (Edge)")
    parser.add_argument("--out", type=Path, default=HERE / "scaling.json")
    parser.add_argument("--png", type=Path, default=HERE / "scaling.png")
    parser.add_argument("--child", nargs=3, metavar=("ENGINE", "SIZE", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        engine, size, folder = args.child[0], int(args.child[1]), Path(args.child[2])
        print(json.dumps(run_child(engine, size, folder, args.queries)))
        return

    results: list[dict[str, Any]] = []
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": str(ROOT / "shared")}
    work = Path(tempfile.mkdtemp(prefix="bookrag-scaling-"))
    try:
        for size in [int(s) for s in args.sizes.split(",")]:
            for engine in args.engines.split(","):
                folder = work / f"{engine}-{size}"
                queries = args.queries if engine == "edge" else min(args.queries, args.local_max_queries)
                log(f"{engine} at {size} chunks ({queries} searches)")
                out = subprocess.run([sys.executable, __file__, "--queries", str(queries), "--child", engine,
                                      str(size), str(folder)], env=env, capture_output=True, text=True,
                                     timeout=7200, check=False)
                if out.returncode != 0:
                    raise SystemExit(f"{engine} at {size} failed: {out.stderr[-3000:]}")
                row = json.loads(out.stdout.strip().splitlines()[-1])
                if engine == "edge" and args.handler_n:
                    row["handler"] = handler_warm(folder, args.handler_n)
                log(json.dumps(row))
                results.append(row)
                shutil.rmtree(folder, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpus": os.cpu_count(),
              "load_avg_end": [round(x, 2) for x in os.getloadavg()],
              "data": "synthetic: random unit vectors (384-d), Zipf sparse vectors, chunk-shaped payloads; "
                      "real questions embedded by the local model",
              "local_mode_queries_capped_at": args.local_max_queries, "results": results}
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    plot(results, args.png)
    log(f"wrote {args.out} and {args.png}")


if __name__ == "__main__":
    main()
