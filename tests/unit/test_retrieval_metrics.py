"""The evaluation metrics on tiny hand-computed examples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bookrag.devtools.evaluation import parse_modes
from bookrag.devtools.questions import Question, evidence, hit_at, load_questions, reciprocal_rank, roc_auc
from bookrag.errors import InvalidInputError

FACTUAL = Question("q", ("a.md", "quiz.md"), ("pid", "integral"), "factual")
MULTI = Question("q", ("a.md", "b.md"), (), "multi")


def test_factual_hit_needs_any_gold_file_in_the_top_5() -> None:
    assert hit_at(["x.md", "y.md", "z.md", "w.md", "quiz.md"], FACTUAL)
    assert not hit_at(["x.md", "y.md", "z.md", "w.md", "v.md", "a.md"], FACTUAL)


def test_multi_hit_needs_every_gold_file() -> None:
    assert not hit_at(["a.md", "x.md"], MULTI)
    assert hit_at(["b.md", "x.md", "a.md"], MULTI)


def test_reciprocal_rank_of_the_first_gold_file() -> None:
    assert reciprocal_rank(["x.md", "y.md", "a.md", "b.md"], {"a.md", "b.md"}) == pytest.approx(1 / 3)
    assert reciprocal_rank(["a.md"], {"a.md"}) == 1.0
    assert reciprocal_rank([*["x.md"] * 10, "a.md"], {"a.md"}) == 0.0  # 11th is past the cut-off


def test_evidence_is_the_share_of_keywords_found_case_insensitively() -> None:
    texts = ["The INTEGRAL term removes", "steady-state error."]
    assert evidence(texts, ["integral", "steady-state error", "riccati"]) == pytest.approx(2 / 3)
    assert evidence([], []) == 1.0


def test_auc_counts_pairs_and_ties_half() -> None:
    # Pairs (p, n): (0.9, 0.5) win, (0.9, 0.7) win, (0.5, 0.5) tie, (0.5, 0.7) loss -> 2.5 / 4.
    assert roc_auc([0.9, 0.5], [0.5, 0.7]) == pytest.approx(0.625)
    assert roc_auc([0.9], [0.1, 0.2]) == 1.0
    assert roc_auc([0.3], []) is None


def test_question_set_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps({"question": "Why?", "gold_files": ["a.md"], "answer_keywords": ["PID"],
                                "kind": "factual"}) + "\n")

    (q,) = load_questions(path)

    assert q == Question("Why?", ("a.md",), ("pid",), "factual")


def test_bad_question_line_is_refused_with_its_line_number(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text('{"question": "ok", "gold_files": [], "answer_keywords": [], "kind": "unanswerable"}\n'
                    '{"question": "no kind"}\n')

    with pytest.raises(InvalidInputError, match="line 2"):
        load_questions(path)


def test_modes_are_parsed_and_unknown_ones_refused() -> None:
    assert parse_modes("bm25, dense,hybrid+diversity") == ["bm25", "dense", "hybrid+diversity"]
    with pytest.raises(InvalidInputError, match="colbert"):
        parse_modes("dense,colbert")
