"""Refit the grounding verdict's weights (`answering.answerers.grounding_score`) from the feature table.

`make fit-grounding` runs the grounding sets we tune on through the real store, embedder and Gemini path
(`benchmarks/grounding_eval.py run`), writes each judged sentence's features to `eval/grounding-features.csv`
(`... features`), then this: a logistic regression, faithful = 1 and invented = 0, on the rows of `FIT_SETS`
only (redux is never fit on: it is the check that the weights carry to a book we never tuned on), written to
`bookrag/data/grounding_weights.json`. The threshold is not fit here: it is chosen on the curve of both books
(`benchmarks/grounding_curve.py`) and kept from the current file unless `--threshold` is given.

scikit-learn is a dev dependency: the runtime reads the JSON and never imports it.

Usage: python -m bookrag.devtools.fit_grounding [eval/grounding-features.csv] [--threshold T] [--check]
(`--check`: refit and compare with the committed weights, writing nothing; exit 1 when they differ).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any

from bookrag.answering.answerers.grounding_score import FEATURES, WEIGHTS_FILE

FIT_SETS = ("grounding-sample-book", "grounding-textbook-2", "grounding-textbook-2-blind",
            "grounding-textbook-2-negations")
TABLE = Path("eval/grounding-features.csv")
# Regularisation: 5-fold cross-validation on the fit rows (textbook-2 old and blind, sample book: 582 rows,
# 9 features) gives 0.92-0.93 faithful kept / 0.89-0.93 invented dropped for C from 1 to 100 at 0.5; C = 10
# is the best of those on redux too (which is not fit on). Balanced classes: there are more faithful rows.
_C = 10.0
_DECIMALS = 6


def read_table(path: Path) -> tuple[list[list[float]], list[int]]:
    """The rows of the sets we fit on: (features, labels)."""
    xs, ys = [], []
    with path.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            if row["set"] in FIT_SETS:
                xs.append([float(row[name]) for name in FEATURES])
                ys.append(int(row["label"]))
    return xs, ys


def fit(path: Path, threshold: float) -> dict[str, Any]:
    """The weights fit on `path`'s rows (deterministic: lbfgs from zero on the same rows gives the same)."""
    from sklearn.linear_model import LogisticRegression

    xs, ys = read_table(path)
    clf = LogisticRegression(C=_C, class_weight="balanced", max_iter=10_000, tol=1e-10)
    clf.fit(xs, ys)
    return {"features": list(FEATURES), "coef": [round(float(c), _DECIMALS) for c in clf.coef_[0]],
            "intercept": round(float(clf.intercept_[0]), _DECIMALS), "threshold": threshold,
            "fit_on": list(FIT_SETS), "rows": len(ys), "faithful": sum(ys)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("table", nargs="?", type=Path, default=TABLE)
    parser.add_argument("--threshold", type=float, default=None)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    current = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    weights = fit(args.table, current["threshold"] if args.threshold is None else args.threshold)
    if args.check:
        same = all(weights[k] == current.get(k) for k in ("features", "coef", "intercept"))
        sys.stdout.write("weights reproduce\n" if same else f"weights differ: {weights} != {current}\n")
        return 0 if same else 1
    WEIGHTS_FILE.write_text(json.dumps(weights, indent=2) + "\n", encoding="utf-8")
    sys.stdout.write(json.dumps(weights, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
