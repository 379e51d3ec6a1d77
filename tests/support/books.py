"""A small hand-written book ingested into its own embedded Qdrant store, with the local embedder."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from bookrag.config.settings import Settings, load_settings
from bookrag.ingestion.ingestor import Ingestor, IngestReport
from bookrag.services.container import container_for


def ingest_pages(root: Path, pages: dict[str, str], **overrides: Any) -> tuple[Settings, IngestReport]:
    """Writes `pages` (relative path -> Markdown, dedented) under `root/docs` and ingests them into
    `root/qdrant`; `overrides` are further settings."""
    docs = root / "docs"
    for rel, text in pages.items():
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    settings = load_settings(qdrant_path=root / "qdrant", embedding_provider="local", **overrides)
    return settings, Ingestor(settings, container_for(settings).embedder, container_for(settings).store).run(docs)


def extractive_agent(factory: Any, name: str, pages: dict[str, str]) -> Any:
    """The agent of a small book of `pages`, ingested under a fresh folder of pytest's `tmp_path_factory`,
    answering with the extractive answerer: one per test module (a module-scoped fixture's)."""
    settings, _ = ingest_pages(Path(factory.mktemp(name)), pages, llm_provider="extractive")
    return container_for(settings).agent
