"""Ranking after the store: per-section and per-file diversity, and the monotone score."""

from __future__ import annotations

from collections import Counter

from bookrag.domain.models import StoredHit


def monotone_scores(cosines: list[float]) -> list[float]:
    """The running minimum of `cosines`: non-increasing, and each at most its own cosine."""
    out: list[float] = []
    for c in cosines:
        out.append(min(c, out[-1]) if out else c)
    return out



def diversify(hits: list[StoredHit], top_k: int, cap: int, file_cap: int = 0) -> list[StoredHit]:
    """Take hits in rank order, at most `cap` per (file, section) and `file_cap` per file (0: no
    limit); fill from the skipped ones, in rank order, if too few remain.

    Adjacent chunks of one section overlap and say much the same; capping them leaves room for the
    other sections and files a question may need. `cap <= 0` turns diversity off.
    """
    if cap <= 0:
        return hits[:top_k]
    sections: Counter[tuple[str, str]] = Counter()
    files: Counter[str] = Counter()
    chosen: list[StoredHit] = []
    deferred: list[StoredHit] = []
    for h in hits:
        source = h.payload.source_file
        key = (source, h.payload.section_heading)
        if sections[key] < cap and (file_cap <= 0 or files[source] < file_cap):
            sections[key] += 1
            files[source] += 1
            chosen.append(h)
        else:
            deferred.append(h)
        if len(chosen) == top_k:
            return chosen
    # Filling keeps rank order overall: a deferred hit goes back where the ranker had it.
    position = {id(h): i for i, h in enumerate(hits)}
    return sorted(chosen + deferred[: top_k - len(chosen)], key=lambda h: position[id(h)])
