"""What book versions cost on the embedded store (Qdrant Edge): in-place against atomic ingest.

    python benchmarks/edge_versions.py [--copies 10] [--out benchmarks/edge-versions.json]

The book is the sample book (`book/docs`) `--copies` times over, each copy in its own folder (10 copies:
~2,090 chunks, the size of textbook-2, which stays held out). Local embedder. Measured, in this order:

1. in-place: the first ingest (everything embedded), an unchanged re-ingest, one file changed;
2. atomic, on a copy of the in-place folder before that change: the first atomic ingest (the folder
   becomes versions: a copy of the in-place shard, nothing embedded), an unchanged one, the same file
   changed (a copy of the live version, one file embedded, optimise);
3. `bookrag ingest` wall time, unchanged book, as a user runs it (a fresh process each, 3 runs);
4. searches in this process, on the versioned folder, while `bookrag ingest --atomic` publishes one
   changed file from another process: how many were answered, errors, latency;
5. disk: bytes held and file lengths, per shard.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "shared"))

from suite import child_env  # noqa: E402

from bookrag.adapters.store.edge.files import copy_shard, edge_dir  # noqa: E402
from bookrag.adapters.store.edge.shards import close_shard  # noqa: E402
from bookrag.adapters.store.edge.versions import EdgeVersions  # noqa: E402
from bookrag.config.settings import Settings, load_settings  # noqa: E402
from bookrag.ingestion.ingestor import Ingestor, IngestReport  # noqa: E402
from bookrag.ingestion.versions import publish  # noqa: E402
from bookrag.services.container import container_for  # noqa: E402

CHANGED = "copy-00/intro.md"


def log(message: str) -> None:
    print(f"[edge-versions {time.strftime('%H:%M:%S')}] {message}", flush=True)


def make_book(target: Path, copies: int) -> Path:
    for n in range(copies):
        shutil.copytree(ROOT / "book" / "docs", target / f"copy-{n:02d}")
    return target


def change_one_file(book: Path, sentence: str) -> None:
    page = book / CHANGED
    page.write_text(page.read_text(encoding="utf-8") + f"\n\n{sentence}\n", encoding="utf-8")


def settings_for(folder: Path) -> Settings:
    return load_settings(qdrant_path=folder, embedding_provider="local")


def timed(fn: Any) -> tuple[float, IngestReport]:
    started = time.perf_counter()
    report = fn()
    return time.perf_counter() - started, report


def in_place(settings: Settings, book: Path) -> tuple[float, IngestReport]:
    container = container_for(settings)
    return timed(lambda: Ingestor(settings, container.embedder, container.store).run(book))


def atomic(settings: Settings, book: Path) -> tuple[float, IngestReport]:
    return timed(lambda: publish(settings, container_for(settings).embedder, EdgeVersions(settings), book))


def row(seconds: float, report: IngestReport) -> dict[str, Any]:
    return {"seconds": round(seconds, 3), "files_changed": report.files_changed,
            "chunks_embedded": report.chunks_embedded, "chunks_copied": report.chunks_copied,
            "chunks_total": report.chunks_total}


def disk(folder: Path) -> dict[str, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return {"held_bytes": sum(p.stat().st_blocks * 512 for p in files),
            "file_lengths": sum(p.stat().st_size for p in files)}


def cli_env(folder: Path) -> dict[str, str]:
    """The CLI's environment: the developer's, without any setting of ours but the store and embedder."""
    return {**child_env(folder, ROOT, as_lambda=False), "OPENBLAS_NUM_THREADS": "1"}


def cli_wall(folder: Path, book: Path, runs: int = 3) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "bookrag.devtools.cli", "ingest", str(book)], check=True,
                       capture_output=True, env=cli_env(folder), cwd=ROOT)
        times.append(round(time.perf_counter() - started, 3))
    return times


def serve_while_publishing(settings: Settings, book: Path) -> dict[str, Any]:
    retriever = container_for(settings).retriever
    latencies: list[float] = []
    failures: list[str] = []
    done = threading.Event()

    def ask() -> None:
        while not done.is_set():
            started = time.perf_counter()
            try:
                retriever.search("What is the zero moment point in bipedal walking?")
            except Exception as exc:
                failures.append(type(exc).__name__)
            latencies.append((time.perf_counter() - started) * 1000)

    asking = threading.Thread(target=ask)
    asking.start()
    started = time.perf_counter()
    try:
        subprocess.run([sys.executable, "-m", "bookrag.devtools.cli", "ingest", str(book), "--atomic"],
                       check=True, capture_output=True, env=cli_env(settings.qdrant_path), cwd=ROOT)
        ingest_s = time.perf_counter() - started
    finally:
        done.set()  # a failed ingest must not leave the asking thread keeping the process alive
        asking.join()
    ordered = sorted(latencies)
    return {"ingest_wall_s": round(ingest_s, 3), "searches": len(latencies), "errors": len(failures),
            "p50_ms": round(statistics.median(ordered), 2),
            "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2), "max_ms": round(ordered[-1], 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--out", type=Path, default=HERE / "edge-versions.json")
    args = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    work = Path(tempfile.mkdtemp(prefix="bookrag-edge-versions-"))
    result: dict[str, Any] = {"copies": args.copies, "load_average_start": os.getloadavg()[0]}
    try:
        book = make_book(work / "book", args.copies)
        plain = settings_for(work / "in-place")
        log("in-place: first ingest (everything embedded)")
        result["in_place_first"] = row(*in_place(plain, book))
        result["in_place_unchanged"] = row(*in_place(plain, book))
        close_shard(plain)
        copy_shard(plain.qdrant_path, work / "versions", durable=False)
        versioned = settings_for(work / "versions")
        log("in-place: one file changed")
        edited = work / "edited"
        shutil.copytree(book, edited)
        change_one_file(edited, "A sentence added for the benchmark.")
        result["in_place_one_file"] = row(*in_place(plain, edited))
        log("atomic: migration, unchanged, one file changed")
        result["atomic_first_from_in_place"] = row(*atomic(versioned, book))
        result["atomic_unchanged"] = row(*atomic(versioned, book))
        result["atomic_one_file"] = row(*atomic(versioned, edited))
        result["disk"] = {"in_place": disk(edge_dir(plain) / plain.qdrant_collection),
                          "version": disk(edge_dir(versioned) / str(EdgeVersions(versioned).live()))}
        close_shard(plain)
        close_shard(versioned)
        log("bookrag ingest wall time, unchanged book")
        result["cli_unchanged_wall_s"] = {"in_place": cli_wall(plain.qdrant_path, edited),
                                          "atomic": cli_wall(versioned.qdrant_path, edited)}
        log("searches while another process publishes")
        change_one_file(book, "Another sentence, published while searches run.")
        result["serving_during_publish"] = serve_while_publishing(versioned, book)
        close_shard(versioned)
        result["load_average_end"] = os.getloadavg()[0]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
