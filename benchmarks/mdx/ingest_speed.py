"""One ingest of physical-ai-textbook-2 in this process, timed: the speed check of issue 28.

    python benchmarks/mdx/ingest_speed.py --phase read   # read + parse + chunk every file (the MDX work)
    python benchmarks/mdx/ingest_speed.py --phase ingest # the whole first ingest into a fresh embedded store

Prints one JSON line (phase, seconds, files, chunks). Run it several times, alternating the code before and
after a change (PYTHONPATH at the older tree's `shared/` for "before"), and compare medians: whole-process
timing (e.g. `/usr/bin/time -v`) includes start-up, which both sides share.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus" / "physical-ai-textbook-2" / "docs"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--phase", choices=("read", "ingest"), required=True)
    parser.add_argument("--docs", type=Path, default=CORPUS)
    args = parser.parse_args()
    from bookrag.config.settings import load_settings
    from bookrag.ingestion.ingestor import Ingestor, IngestReport
    from bookrag.services.container import container_for

    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(qdrant_path=Path(tmp) / "qdrant", embedding_provider="local")
        container = container_for(settings)
        started = time.perf_counter()
        if args.phase == "read":
            ingestor = Ingestor(settings, container.embedder, container.store)
            files = ingestor.load(args.docs, IngestReport())
            chunks = sum(len(ingestor.build_chunks(f)) for f in files)
            count = len(files)
        else:
            report = Ingestor(settings, container.embedder, container.store).run(args.docs)
            chunks, count = report.chunks_total, report.files_seen
        seconds = time.perf_counter() - started
    print(json.dumps({"phase": args.phase, "seconds": round(seconds, 3), "files": count, "chunks": chunks}))


if __name__ == "__main__":
    main()
