"""The grounding threshold's curve: faithful sentences kept and invented ones dropped, per threshold.

Reads the runs of `benchmarks/grounding_eval.py run` in a folder (each sentence's verdict at every
threshold of its CURVE, as the agent judges it, the core rule aside) and draws both shares against the
threshold -> <out>.png, with the figures in <out>.json. matplotlib is a dev dependency only.

Usage: python benchmarks/grounding_curve.py .bookrag/grounding-eval benchmarks/grounding-curve
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def points(folder: Path) -> dict[str, dict[str, float]]:
    rows = [s for p in sorted(folder.glob("*.json")) for a in json.loads(p.read_text(encoding="utf-8"))["answers"]
            for s in a["sentences"] if s["shown"] and "curve" in s]
    out: dict[str, dict[str, float]] = {}
    for t in sorted({t for s in rows for t in s["curve"]}, key=float):
        faithful = [s["curve"][t] for s in rows if s["kind"] == "faithful" and t in s["curve"]]
        invented = [not s["curve"][t] for s in rows if s["kind"] != "faithful" and t in s["curve"]]
        out[t] = {"faithful_kept": round(sum(faithful) / len(faithful), 3),
                  "invented_dropped": round(sum(invented) / len(invented), 3),
                  "n_faithful": len(faithful), "n_invented": len(invented)}
    return out


def main(folder: str, out: str, chosen: float = 0.6) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curve = points(Path(folder))
    xs = [float(t) for t in curve]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(xs, [100 * p["faithful_kept"] for p in curve.values()], marker="o", label="faithful sentences kept")
    ax.plot(xs, [100 * p["invented_dropped"] for p in curve.values()], marker="s", label="invented sentences dropped")
    ax.axvline(chosen, color="grey", linestyle="--", label=f"MIN_SUPPORT = {chosen}")
    ax.axhline(95, color="tab:blue", linestyle=":", linewidth=0.8)
    ax.axhline(90, color="tab:orange", linestyle=":", linewidth=0.8)
    ax.set_xlabel("support threshold")
    ax.set_ylabel("% of sentences")
    ax.set_ylim(0, 102)
    ax.set_title("Grounding on textbook-2 + sample book (local MiniLM)")
    ax.legend(loc="lower left")
    fig.tight_layout()
    fig.savefig(out + ".png", dpi=110)
    Path(out + ".json").write_text(json.dumps({"chosen": chosen, "curve": curve}, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(curve, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
