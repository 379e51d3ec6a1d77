"""The grounding verdict's weights are data (issue 34): refitting them from the committed feature table gives
the committed weights, and the runtime reads them without scikit-learn."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from bookrag.answering.answerers.grounding_score import FEATURES, WEIGHTS_FILE, Features, model

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "eval" / "grounding-features.csv"


def test_refitting_the_committed_table_reproduces_the_committed_weights() -> None:
    pytest.importorskip("sklearn")
    from bookrag.devtools.fit_grounding import fit

    committed = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))

    refit = fit(TABLE, committed["threshold"])

    assert refit["features"] == list(FEATURES) == committed["features"]
    assert refit["coef"] == committed["coef"] and refit["intercept"] == committed["intercept"]


def test_the_verdict_is_a_sigmoid_of_the_fitted_weights() -> None:
    fitted = model()
    supported = Features.of(1.0, 1.0, 1.0, 0.9, False, False, False, 20)
    invented = Features.of(0.3, 0.3, 0.2, 0.2, True, False, False, 10)

    assert fitted.probability(supported.row()) >= fitted.threshold > fitted.probability(invented.row())
    low, high = fitted.cosine_range(supported)
    assert low <= fitted.probability(supported.row()) <= high
    # The probability is the sigmoid of the committed file's weights, whatever they are.
    weights = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    z = sum(c * x for c, x in zip(weights["coef"], invented.row(), strict=True)) + weights["intercept"]
    assert fitted.probability(invented.row()) == pytest.approx(1.0 / (1.0 + math.exp(-z)))


def test_the_runtime_never_imports_scikit_learn() -> None:
    code = ("import sys; import bookrag.answering.agent, bookrag.answering.answerers.grounding; "
            "from bookrag.answering.answerers.grounding_score import model; model(); "
            "sys.exit('sklearn' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=False).returncode == 0
