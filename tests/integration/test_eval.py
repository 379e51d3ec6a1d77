"""The evaluation harness end to end: on the indexed sample book, through the CLI, and on textbook-2."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from bookrag.config.settings import Settings, load_settings
from bookrag.devtools.evaluation import evaluate_files, run_evaluation
from bookrag.devtools.questions import load_questions
from bookrag.errors import InvalidInputError
from bookrag.services.container import container_for
from tests.support.paths import CORPUS, ROOT, SAMPLE_DOCS

SAMPLE_SET = ROOT / "eval" / "sample-book.jsonl"
TEXTBOOK_2 = CORPUS / "physical-ai-textbook-2" / "docs"


def subset(path: Path, tmp_path: Path, keep: int) -> Path:
    """The first `keep` answerable questions and every unanswerable one: a fast, still mixed set."""
    lines = path.read_text(encoding="utf-8").splitlines()
    answerable = [ln for ln in lines if '"unanswerable"' not in ln][:keep]
    out = tmp_path / path.name
    out.write_text("\n".join(answerable + [ln for ln in lines if '"unanswerable"' in ln]) + "\n", encoding="utf-8")
    return out


def test_modes_on_the_sample_book(book_env: Settings, tmp_path: Path) -> None:
    questions = load_questions(subset(SAMPLE_SET, tmp_path, keep=8))

    report = run_evaluation(container_for(book_env).retriever, questions, ["bm25", "dense", "default"])

    data = report.as_dict()
    assert set(data["modes"]) == {"bm25", "dense", "default"}
    default = data["modes"]["default"]
    assert default["overall"]["n"] == 8 and default["overall"]["hit@5"] >= 0.85
    assert 0.0 <= default["overall"]["mrr@10"] <= 1.0 and 0.0 <= default["overall"]["evidence@5"] <= 1.0
    assert default["auc"]["overall"] is not None and default["auc"]["overall"] >= 0.8
    assert default["seconds_per_query"] > 0
    assert len(data["questions"]) == len(questions)
    rows = data["thresholds_default_mode"]
    assert [r["threshold"] for r in rows] == sorted(r["threshold"] for r in rows)
    assert all(a["gold_chunks_kept"] >= b["gold_chunks_kept"] for a, b in itertools.pairwise(rows))


def test_cli_prints_a_table_and_writes_json(book_env: Settings, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bookrag.devtools.cli import app

    out = tmp_path / "report.json"
    questions = subset(SAMPLE_SET, tmp_path, keep=3)

    result = CliRunner().invoke(app, ["eval", str(questions), "--docs", str(SAMPLE_DOCS), "--modes",
                                      "dense,hybrid", "--json", str(out)])

    assert result.exit_code == 0, result.output
    assert "hit@5" in result.output and "hybrid" in result.output
    data = json.loads(out.read_text())
    assert set(data["modes"]) == {"dense", "hybrid"}
    assert data["config"]["question_set"] == questions.name and data["config"]["chunks"] > 0


def test_cli_refuses_an_unknown_mode(book_env: Settings, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bookrag.devtools.cli import app

    result = CliRunner().invoke(app, ["eval", str(subset(SAMPLE_SET, tmp_path, keep=1)), "--modes", "colbert"])

    assert result.exit_code == 2 and "colbert" in result.output


@pytest.mark.corpus
@pytest.mark.skipif(not TEXTBOOK_2.is_dir(), reason="needs ../shared/corpus/physical-ai-textbook-2")
def test_textbook_2_appendices(tmp_path: Path) -> None:
    """Textbook-2's appendices (5 files) and the questions they answer, plus every unanswerable one.

    A slice of the tuning run (benchmarks/eval-textbook-2.md), small enough for the suite: hybrid with
    diversity must not lose to either single retriever.
    """
    docs = tmp_path / "docs"
    shutil.copytree(TEXTBOOK_2 / "appendices", docs / "appendices")
    lines = (ROOT / "eval" / "textbook-2.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [ln for ln in lines
            if all(g.startswith("appendices/") for g in json.loads(ln)["gold_files"])]
    questions = tmp_path / "appendices.jsonl"
    questions.write_text("\n".join(kept) + "\n", encoding="utf-8")
    settings = load_settings(qdrant_path=tmp_path / "qdrant", embedding_provider="local")

    report = evaluate_files(settings, questions, ["bm25", "dense", "default"], docs)

    modes: dict[str, Any] = report.as_dict(per_question=False)["modes"]
    best, bm25, dense = modes["default"]["overall"], modes["bm25"]["overall"], modes["dense"]["overall"]
    assert best["n"] >= 7 and best["hit@5"] >= 0.85
    for metric in ("hit@5", "evidence@5"):
        assert best[metric] >= max(bm25[metric], dense[metric])


ANSWER_SET = ROOT / "eval" / "answers-sample-book.jsonl"


def test_answer_set_scored_as_a_reader_would_on_the_sample_book(book_env: Settings) -> None:
    """The sample book's answer set (eval/answers-sample-book.jsonl) end to end: every shape is reported, and
    today's answerer answers most answerable questions, refuses the off-book ones, keeps labels."""
    report = evaluate_files(book_env, ANSWER_SET, ["default"], SAMPLE_DOCS, answers=True)

    assert report.answers is not None
    shapes = report.answers.summary()["shapes"]
    expected = {"overall", "definition", "list", "table", "short-section", "code", "multi-part", "unanswerable"}
    assert expected <= set(shapes)
    overall = shapes["overall"]
    assert overall["n"] == len(ANSWER_SET.read_text(encoding="utf-8").splitlines())
    assert overall["false_refusals"] <= 0.2 and shapes["unanswerable"]["false_answers"] == 0.0
    for metric in ("keyword_recall", "lead_from_gold", "with_off_topic", "label_kept", "with_markup_in_prose",
                   "definition_lead"):
        assert 0.0 <= overall[metric] <= 1.0, metric
    rows = report.as_dict()["answers"]["questions"]
    assert all("shape" in r and "lead_from_gold" in r for r in rows)


def test_an_answer_set_needs_the_book_to_score_answers(book_env: Settings) -> None:
    with pytest.raises(InvalidInputError, match="--docs"):
        evaluate_files(book_env, ANSWER_SET, ["default"], None, answers=True)


@pytest.mark.corpus
@pytest.mark.skipif(not TEXTBOOK_2.is_dir(), reason="needs ../shared/corpus/physical-ai-textbook-2")
def test_conversation_set_c_on_a_slice_of_textbook_2(tmp_path: Path) -> None:
    """Set C's conversations whose turns live in the appendices and module 1 chapter 4 (a selection after an
    unrelated turn, a selection after a refusal, a follow-up about the previous answer), on those files only."""
    from bookrag.devtools.book_sections import Book
    from bookrag.devtools.conversation_eval import load_conversations, run_conversations
    from bookrag.ingestion.ingestor import Ingestor

    docs = tmp_path / "docs"
    shutil.copytree(TEXTBOOK_2 / "appendices", docs / "appendices")
    module_1 = "module-1-physical-ai-foundations"
    (docs / module_1).mkdir()
    shutil.copy(TEXTBOOK_2 / module_1 / "chapter-4.md", docs / module_1)
    cases = [c for c in load_conversations(ROOT / "eval" / "conversations-textbook-2-c.jsonl")
             if all((docs / f).is_file() for t in c.turns for f in t.gold_files)]
    settings = load_settings(qdrant_path=tmp_path / "qdrant", embedding_provider="local")
    container = container_for(settings)
    Ingestor(settings, container.embedder, container.store).run(docs)

    report = run_conversations(container.agent, cases, Book(docs))

    patterns = {c.pattern for c in cases}
    assert {"answer-referent", "selection-after-topic", "selection-after-refusal"} <= patterns
    assert set(report["last_turn_reader_checks"]) <= patterns
    selections = [r for r in report["per_last_turn"] if r["pattern"].startswith("selection")]
    assert selections and all(r["selection_in_book"] for r in selections)
