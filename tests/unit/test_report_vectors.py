"""The gap questions' vectors kept between two reports: a second report embeds only what is new, the file
holds only the last report's questions, is the owner's alone, and a torn file is an empty cache."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

import numpy as np

from bookrag.adapters.question_log.vectors import FILE, QuestionVectors


def _embed(calls: list[list[str]]) -> Callable[[list[str]], np.ndarray]:
    def embed(texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        return np.asarray([[float(len(t)), 1.0] for t in texts], dtype=np.float32)

    return embed


def test_a_second_report_embeds_only_new_questions(tmp_path: Path) -> None:
    calls: list[list[str]] = []
    first = QuestionVectors(tmp_path, "local/x", 2).embed(["a", "bb"], _embed(calls))
    again = QuestionVectors(tmp_path, "local/x", 2)
    second = again.embed(["bb", "ccc"], _embed(calls))
    assert calls == [["a", "bb"], ["ccc"]] and again.embedded == 1
    assert np.array_equal(second[0], first[1]) and second[1].tolist() == [3.0, 1.0]
    assert stat.S_IMODE((tmp_path / FILE).stat().st_mode) == 0o600
    QuestionVectors(tmp_path, "local/x", 2).embed(["a"], _embed(calls))  # "a" was dropped by the last report
    assert calls[-1] == ["a"]


def test_another_embedder_or_a_torn_file_starts_empty(tmp_path: Path) -> None:
    calls: list[list[str]] = []
    QuestionVectors(tmp_path, "local/x", 2).embed(["a"], _embed(calls))
    QuestionVectors(tmp_path, "cohere/y", 2).embed(["a"], _embed(calls))
    (tmp_path / FILE).write_bytes(b"not a zip")
    QuestionVectors(tmp_path, "local/x", 2).embed(["a"], _embed(calls))
    assert calls == [["a"], ["a"], ["a"]]
