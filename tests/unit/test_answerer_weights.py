"""The answerer's fitted weights (issue 37): the committed file is exactly what the documented refit gives
from the committed feature tables, and it matches the features the answerer computes."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import pytest

from bookrag.answering.answerers.scoring import FEATURES, weights
from bookrag.answering.gate import SILENCE_FEATURES, silence

TABLES = sorted((Path(__file__).resolve().parents[2] / "eval" / "fit").glob("*.csv"))


def test_refitting_the_committed_tables_gives_the_committed_weights() -> None:
    pytest.importorskip("sklearn", reason="scikit-learn (the dev extras) fits the weights")
    from bookrag.devtools.fit_answerer import fit

    assert TABLES, "eval/fit holds the feature tables `make refit` extracts"
    data = files("bookrag") / "data"
    weights, gate = fit(TABLES)
    assert weights.as_dict() == json.loads((data / "answerer-weights.json").read_text(encoding="utf-8"))
    assert gate.as_dict() == json.loads((data / "gate-weights.json").read_text(encoding="utf-8"))


def test_the_weights_name_the_features_the_answerer_computes() -> None:
    fitted = weights()
    assert len(fitted.coef) == len(FEATURES)
    assert 0.0 < fitted.min_keep < 1.0
    assert len(silence().coef) == len(SILENCE_FEATURES) and 0.0 < silence().bar < 1.0


def test_the_refit_never_reads_the_untuned_book() -> None:
    # Redux is where we see whether the weights carry: fitting on it would hide exactly that.
    assert TABLES and not any("redux" in t.name for t in TABLES)


def test_the_gate_bar_refuses_no_answerable_question_more_than_the_off_book_ones_it_gains_need() -> None:
    pytest.importorskip("sklearn", reason="scikit-learn (the dev extras) fits the weights")
    from bookrag.devtools.fit_answerer import _bar

    # 200 answerable questions, of which 2% (four) may be refused; 5 off-book ones. The highest bar under that cap
    # (0.45, the fifth answerable) refuses four answerable questions and the three off-book ones below 0.30; any
    # bar in (0.30, 0.35] refuses the same three off-book questions and only two answerable ones: the highest of
    # them, 0.35, answers the answerable question at 0.35 and refuses all it can below.
    pos = [0.10, 0.20, 0.35, 0.40, 0.45, *([0.90] * 195)]
    neg = [0.05, 0.15, 0.30, 0.60, 0.80]
    bar = _bar(pos, neg)
    assert bar == pytest.approx(0.35)
    assert sum(p < bar for p in pos) == 2 and sum(n < bar for n in neg) == 3
