"""Weights fit offline, read at run time: the answerer's statement score, the gate, the grounding verdict
(`bookrag/data/*.json`, each refit by its own command). One reader, so that a file fit on other features
than the code computes is refused the same way everywhere."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from importlib.resources import files
from typing import Any

__all__ = ["logistic", "read_fitted"]


def read_fitted(name: str, features: tuple[str, ...]) -> dict[str, Any]:
    """The JSON of `bookrag/data/<name>`. Raises ValueError when it was fit on other `features` (a refit is due)."""
    raw: dict[str, Any] = json.loads((files("bookrag") / "data" / name).read_text(encoding="utf-8"))
    if tuple(raw["features"]) != features:
        raise ValueError(f"{name} was fit on other features than the code computes: refit it")
    return raw


def logistic(coef: Sequence[float], intercept: float, x: Sequence[float]) -> float:
    """A logistic regression's probability for one row `x` (in the order of its features)."""
    z = intercept + sum(c * v for c, v in zip(coef, x, strict=True))
    return 1.0 / (1.0 + math.exp(-z))
