"""Where the repository's inputs are, whatever the working directory."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # tests/support/ -> the repository
SAMPLE_DOCS = ROOT / "book" / "docs"
EVENTS = ROOT / "events"
FIXTURES = ROOT / "tests" / "fixtures"
CORPUS = ROOT.parent / "shared" / "corpus"  # beside the checkout, not in it; tests needing it skip without it
