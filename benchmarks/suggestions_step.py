"""The page questions' step alone (`services.suggesting.suggest_pages`), in process, on a copy of an ingested store.

    PYTHONPATH=<a checkout's shared/> python benchmarks/suggestions_step.py STORE [--json OUT] [--profile OUT]

STORE is a folder `bookrag ingest` filled (QDRANT_PATH), e.g. a copy of .bookrag/eval-textbook-2. It is copied
again (two processes must never open one store folder), every page's questions are cleared, and the step runs
as the CLI runs it, with the local embedder and the extractive agent. Prints its wall and CPU seconds (all the
process's threads, BLAS's included) and the report's counts; --json writes them with `per_page`, to compare two
checkouts' questions page by page; --profile writes a cProfile of the step. Compare two checkouts by running
each in turn, several times: the machine's load moves both.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import shutil
import tempfile
import time
from dataclasses import asdict
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store", type=Path)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--profile", type=Path)
    args = parser.parse_args()

    from bookrag.adapters.store.port import SUGGESTIONS_FIELD
    from bookrag.config.settings import load_settings
    from bookrag.services.container import container_for
    from bookrag.services.suggesting import suggest_pages

    with tempfile.TemporaryDirectory(prefix="suggestions-step-") as tmp:
        copy = Path(tmp) / "store"
        shutil.copytree(args.store, copy)
        settings = load_settings(qdrant_path=str(copy), embedding_provider="local", llm_provider="extractive",
                                 question_log="off")
        container = container_for(settings)
        store = container.store
        pages = {str(p["source_file"]) for p in store.scroll_payloads(["source_file"])}
        for page in pages:
            store._set_on_file(page, {SUGGESTIONS_FIELD: None})  # type: ignore[attr-defined]
        profile = cProfile.Profile() if args.profile else None
        wall, cpu = time.perf_counter(), time.process_time()
        if profile:
            profile.enable()
        report = suggest_pages(settings, container.embedder, store)
        if profile:
            profile.disable()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if profile and args.profile:
            profile.dump_stats(str(args.profile))
    counts = {k: v for k, v in asdict(report).items() if k != "per_page"}
    print(f"wall {wall:.2f} s  cpu {cpu:.2f} s  {counts}")
    if args.json:
        args.json.write_text(json.dumps({"wall": wall, "cpu": cpu, **asdict(report)}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
