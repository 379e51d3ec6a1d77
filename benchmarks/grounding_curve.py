"""The grounding threshold's curve on both books: faithful sentences kept and invented ones dropped, per threshold.

Reads the runs of `benchmarks/grounding_eval.py run` in a folder (each sentence's P(faithful), every feature
computed, as the agent judges it, the core rule aside) and draws both shares against the threshold for
textbook-2 (its old set and its blind set: the book the weights are fit on), Starlette's docs (a second book we
tune on, not fit on) and redux (never tuned or fit on), with
the chosen threshold (`grounding_weights.json`) -> <out>.png, and the figures in <out>.json. matplotlib is a
dev dependency only.

Usage: python benchmarks/grounding_curve.py .bookrag/grounding-eval benchmarks/grounding-curve
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

BOOKS = {"textbook-2": ("textbook-2", "textbook-2-blind", "textbook-2-negations"), "starlette": ("starlette",),
         "redux": ("redux",)}
THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 20))


def points(folder: Path, runs: tuple[str, ...]) -> dict[str, dict[str, float]]:
    rows = [s for name in runs if (folder / f"{name}.json").exists()
            for a in json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))["answers"]
            for s in a["sentences"] if s["shown"] and s.get("score") is not None and s.get("judged", True)]
    out: dict[str, dict[str, float]] = {}
    faithful = [s["score"] for s in rows if s["kind"] == "faithful"]
    invented = [s["score"] for s in rows if s["kind"] != "faithful"]
    if not faithful or not invented:
        return out
    for t in THRESHOLDS:
        out[str(t)] = {"faithful_kept": round(sum(p >= t for p in faithful) / len(faithful), 3),
                       "invented_dropped": round(sum(p < t for p in invented) / len(invented), 3),
                       "n_faithful": len(faithful), "n_invented": len(invented)}
    return out


def main(folder: str, out: str) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bookrag.answering.answerers.grounding_score import model

    chosen = model().threshold
    curves: dict[str, Any] = {book: points(Path(folder), runs) for book, runs in BOOKS.items()}
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for (book, curve), colour in zip(curves.items(), ("tab:blue", "tab:green", "tab:red"), strict=False):
        if not curve:
            continue
        xs = [float(t) for t in curve]
        ax.plot(xs, [100 * p["faithful_kept"] for p in curve.values()], color=colour, marker="o", markersize=3,
                label=f"{book}: faithful kept")
        ax.plot(xs, [100 * p["invented_dropped"] for p in curve.values()], color=colour, marker="s", markersize=3,
                linestyle="--", label=f"{book}: invented dropped")
    ax.axvline(chosen, color="grey", linestyle="--", label=f"threshold = {chosen}")
    ax.axhline(95, color="grey", linestyle=":", linewidth=0.8)
    ax.axhline(90, color="grey", linestyle=":", linewidth=0.8)
    ax.set_xlabel("threshold on P(faithful)")
    ax.set_ylabel("% of sentences")
    ax.set_ylim(30, 102)
    ax.set_title("Grounding verdict: textbook-2 (fit), starlette (tuned), redux (never), local MiniLM")
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(out + ".png", dpi=110)
    Path(out + ".json").write_text(json.dumps({"chosen": chosen, "curves": curves}, indent=2) + "\n",
                                   encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
