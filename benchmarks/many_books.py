"""Many books in one embedded store (issue 38): what a second, a third or a hundredth book costs a request.

    python benchmarks/many_books.py [--sizes 1,10,100] [--chunks 200] [--queries 200] [--no-real]
                                    [--out benchmarks/many-books.json] [--png benchmarks/many-books.png]

Two parts, each (layout, size) in a fresh process, so each peak RSS is its own:

- real books: the sample book alone, then with textbook-2 and redux-docs ingested beside it as books `textbook-2`
  and `redux` (../shared/corpus; measured only, nothing tuned on them). Warm `Retriever.search` p50 on the sample
  book's eval questions, before and after, and each book's own p50 on its questions. Warm: every question was
  asked once before the timed rounds (its embedding cached), so the figures are the store's and the ranking's.
- synthetic books: 1, 10 and 100 books of `--chunks` chunks (random unit vectors, BM25-like sparse vectors and
  chunk-shaped payloads, `benchmarks/scaling.py`'s), each its own shard under `book_chunks--<id>`, written through
  each book's container (the layout the service reads). Ingest time (upserts and the end-of-ingest optimise; the
  local model's embedding is left out: it costs the same per chunk whatever the number of books), warm
  `Retriever.search` p50 on randomly chosen books with every book open, and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(ROOT / "shared")]
CORPUS = ROOT.parent / "shared" / "corpus"
REAL_BOOKS = {"textbook-2": (CORPUS / "physical-ai-textbook-2" / "docs", ROOT / "eval" / "textbook-2.jsonl"),
              "redux": (CORPUS / "redux-docs" / "docs", ROOT / "eval" / "answers-redux.jsonl")}


def log(message: str) -> None:
    print(f"[many-books {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def questions(path: Path, n: int = 40) -> list[str]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [str(r["question"]) for r in rows][:n]


def warm_p50(retriever: Any, asked: list[str], rounds: int) -> dict[str, float]:
    """`Retriever.search` over `asked`, each asked once untimed first (its embedding cached)."""
    for q in asked:
        retriever.search(q)
    times = []
    for i in range(rounds):
        t = time.perf_counter()
        retriever.search(asked[i % len(asked)])
        times.append((time.perf_counter() - t) * 1000)
    ordered = sorted(times)
    return {"p50": round(statistics.median(ordered), 3), "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 3),
            "n": len(ordered)}


def rankings(retriever: Any, asked: list[str]) -> list[list[str]]:
    """Each question's ranked chunk ids and cosines: a book's retrieval quality is a function of these."""
    return [[f"{h.chunk_id}:{h.score:.5f}" for h in retriever.search(q).hits] for q in asked]


def child_real(folder: Path, rounds: int) -> dict[str, Any]:
    from bookrag.config.settings import load_settings
    from bookrag.ingestion.ingestor import Ingestor
    from bookrag.services.container import container_for

    root = container_for(load_settings(qdrant_path=folder, embedding_provider="local"))
    sample = questions(ROOT / "eval" / "sample-book.jsonl")
    t = time.perf_counter()
    report = Ingestor(root.settings, root.embedder, root.store).run(ROOT / "book" / "docs")
    out: dict[str, Any] = {"sample_book": {"chunks": report.chunks_total,
                                           "ingest_s": round(time.perf_counter() - t, 1)}}
    out["one_book"] = {"sample_book_ms": warm_p50(root.retriever, sample, rounds), "peak_rss_mb": rss_mb()}
    alone = rankings(root.retriever, questions(ROOT / "eval" / "sample-book.jsonl", 1000))
    log(f"one book: {out['one_book']}")
    for book, (docs, _) in REAL_BOOKS.items():
        container = root.book(book)
        t = time.perf_counter()
        report = Ingestor(container.settings, container.embedder, container.store).run(docs)
        out[book] = {"chunks": report.chunks_total, "ingest_s": round(time.perf_counter() - t, 1)}
        log(f"ingested {book}: {out[book]}")
    three: dict[str, Any] = {"sample_book_ms": warm_p50(root.retriever, sample, rounds)}
    for book, (_, asked) in REAL_BOOKS.items():
        three[f"{book}_ms"] = warm_p50(root.book(book).retriever, questions(asked), rounds)
    three["peak_rss_mb"] = rss_mb()
    beside = rankings(root.retriever, questions(ROOT / "eval" / "sample-book.jsonl", 1000))
    # Equal rankings for every eval question: the sample book's eval figures are its one-book figures.
    three["sample_book_rankings_equal"] = f"{sum(a == b for a, b in zip(alone, beside, strict=True))}/{len(alone)}"
    out["three_books"] = three
    return out


def child_synthetic(folder: Path, books: int, chunks: int, rounds: int) -> dict[str, Any]:
    import numpy as np
    from benchmarks.scaling import DIM, QUESTIONS, synthetic_records

    from bookrag.adapters.embedders.local import MODEL_NAME
    from bookrag.config.settings import load_settings
    from bookrag.services.container import container_for

    root = container_for(load_settings(qdrant_path=folder, embedding_provider="local"))
    ids = [f"b{i:03d}" for i in range(books)]
    records = synthetic_records(chunks)
    t = time.perf_counter()
    for book in ids:
        store = root.book(book).store
        store.ensure_collection(MODEL_NAME, DIM)
        # Each book's own vectors: shuffled dense rows, so no two books answer alike.
        rows = np.random.default_rng(int(book[1:])).permutation(len(records))
        store.upsert([r.__class__(chunk_id=r.chunk_id, dense=records[j].dense, sparse=r.sparse, payload=r.payload)
                      for r, j in zip(records, rows, strict=True)], batch_size=256)
        store.finish_ingest()
    ingest_s = time.perf_counter() - t
    after_ingest = rss_mb()
    rng = random.Random(7)
    for book in ids:  # every book open and warm, each question's embedding cached
        for q in QUESTIONS:
            root.book(book).retriever.search(q)
    times = []
    for i in range(rounds):
        book = rng.choice(ids)
        t = time.perf_counter()
        root.book(book).retriever.search(QUESTIONS[i % len(QUESTIONS)])
        times.append((time.perf_counter() - t) * 1000)
    ordered = sorted(times)
    return {"books": books, "chunks_per_book": chunks, "ingest_s": round(ingest_s, 2),
            "ingest_s_per_book": round(ingest_s / books, 3),
            "retrieve_ms": {"p50": round(statistics.median(ordered), 3),
                            "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 3), "n": len(ordered)},
            "rss_after_ingest_mb": after_ingest, "peak_rss_mb": rss_mb(),
            "disk_mb": round(sum(p.stat().st_blocks * 512 for p in folder.rglob("*") if p.is_file()) / 2**20, 1)}


def run_child(*args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=False)
    sys.stderr.write(done.stderr[-2000:])
    if done.returncode:
        raise SystemExit(f"child {args} failed")
    return json.loads(done.stdout)


def plot(synthetic: list[dict[str, Any]], png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    books = [r["books"] for r in synthetic]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot(books, [r["retrieve_ms"]["p50"] for r in synthetic], marker="o", label="p50")
    left.plot(books, [r["retrieve_ms"]["p95"] for r in synthetic], marker="o", label="p95")
    left.set(xscale="log", xlabel="books in one store (200 chunks each)", ylabel="warm retrieve (ms)",
             title="Retriever.search, a random book per request")
    left.legend()
    right.plot(books, [r["peak_rss_mb"] for r in synthetic], marker="o", label="peak RSS (MB)")
    right.plot(books, [r["ingest_s"] for r in synthetic], marker="o", label="ingest, all books (s)")
    right.set(xscale="log", xlabel="books in one store", title="memory and ingest (store writes)")
    right.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", nargs="+")
    parser.add_argument("--sizes", default="1,10,100")
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-real", action="store_true")
    parser.add_argument("--out", type=Path, default=HERE / "many-books.json")
    parser.add_argument("--png", type=Path, default=HERE / "many-books.png")
    args = parser.parse_args()
    if args.child:
        kind, folder, *rest = args.child
        result = (child_real(Path(folder), int(rest[0])) if kind == "real"
                  else child_synthetic(Path(folder), int(rest[0]), int(rest[1]), int(rest[2])))
        print(json.dumps(result))
        return
    results: dict[str, Any] = {"synthetic": []}
    with tempfile.TemporaryDirectory(prefix="many-books-") as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            log(f"synthetic: {size} books")
            results["synthetic"].append(run_child("synthetic", str(Path(tmp) / f"s{size}"), str(size),
                                                  str(args.chunks), str(args.queries)))
            log(json.dumps(results["synthetic"][-1]))
        if not args.no_real and all(docs.is_dir() for docs, _ in REAL_BOOKS.values()):
            log("real books")
            results["real"] = run_child("real", str(Path(tmp) / "real"), str(args.queries))
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    plot(results["synthetic"], args.png)
    log(f"wrote {args.out} and {args.png}")


if __name__ == "__main__":
    main()
