"""Default minimum similarity per embedder and interface (a leaf module: health imports it cheaply).

The Cohere column is the contracts' (calibrated for embed-english-v3.0 cosine scores).
all-MiniLM-L6-v2 scores lower for the same relevance, so its column is measured on our question sets
(see README "Score thresholds" and benchmarks/).
"""

from __future__ import annotations

DEFAULT_THRESHOLDS: dict[str, dict[str, float]] = {
    "cohere": {"rest": 0.7, "tool_content": 0.5, "agent": 0.75, "python": 0.0, "perform_retrieval": 0.0},
    "local": {"rest": 0.35, "tool_content": 0.25, "agent": 0.35, "python": 0.0, "perform_retrieval": 0.0},
}
