"""What both Qdrant engines (Edge in-process, qdrant-client remote) share: the named vectors each point
stores, and the order of the scored points either returns.

Qdrant-shaped, not part of the port: another engine may name and rank its vectors as it likes, as long as
its `search` keeps the port's promise (every hit carries its cosine, clamped to [0, 1]).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bookrag.domain.models import ChunkPayload, StoredHit

DENSE = "dense"  # cosine, the embedder's dimension
SPARSE = "bm25"  # BM25 term weights, with Qdrant's IDF modifier

# Candidates fetched past the limit, so that a tie at the cut is broken by `ranked`, not by the engine.
TIE_MARGIN = 4


def ranked(scores: Sequence[float], vectors: Sequence[Any], ids: Sequence[str], dense: np.ndarray,
           wanted: int) -> list[tuple[int, float]]:
    """(index, cosine) of the `wanted` best points, by the engine's score. Equal scores, common after RRF
    (a chunk ranked r-th by one list ties with another ranked r-th by the other), go to the chunk closer
    to the question's vector, then by id: the engine returns ties in no fixed order, and the closer chunk
    is the better guess (textbook-2: hit@5 0.951 with ties by id, 0.976 with ties by cosine).
    A missing or malformed vector counts as cosine 0."""
    if not scores:
        return []
    width = dense.shape[0]
    # One matrix product for every point's cosine, rather than a dot product per point.
    matrix = np.asarray([v if isinstance(v, list) and len(v) == width else [0.0] * width for v in vectors],
                        dtype=np.float32)
    cosines = matrix @ dense.astype(np.float32, copy=False)
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], -float(cosines[i]), ids[i]))[:wanted]
    return [(i, min(1.0, max(0.0, float(cosines[i])))) for i in order]


def stored_hits(points: Sequence[Any], dense: np.ndarray, wanted: int) -> list[StoredHit]:
    """The `wanted` best of either engine's scored points (`id`, `score`, `vector`, `payload`), ordered by
    `ranked`. Qdrant Edge builds `vector` from its buffers on each access: it is read once per point."""
    vectors = [v.get(DENSE) if isinstance(v := p.vector, dict) else None for p in points]
    best = ranked([p.score for p in points], vectors, [str(p.id) for p in points], dense, wanted)
    return [StoredHit(chunk_id=str(points[i].id), rank_score=float(points[i].score), cosine=cosine,
                      payload=ChunkPayload.from_dict(points[i].payload or {})) for i, cosine in best]
