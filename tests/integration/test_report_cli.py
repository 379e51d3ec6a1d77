"""`bookrag report` on a question log written through `LocalQuestionLog`, over the indexed sample book: the
JSON's keys and figures, the gaps' nearest sections, the HTML page (a `<script>` question shown as text),
and a clear error without the plotting extra."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bookrag.adapters.question_log.local import LocalQuestionLog
from bookrag.domain.question_log import FeedbackRecord, LoggedSection, QueryRecord

ZMP = LoggedSection(url="http://localhost:3000/docs/module-4-humanoids/locomotion#the-zero-moment-point-zmp",
                    title="Bipedal Locomotion and Balance > The zero moment point (ZMP)", score=0.62)
SCRIPT = "<script>alert('x')</script> how do I install Isaac Sim on Windows?"
GAPS = ["How do I install Isaac Sim on Windows?", "Can Isaac Sim run on Windows 11?", SCRIPT,
        "Who won the 2018 FIFA World Cup?", "Who won the 2022 FIFA World Cup?"]


def _write_log(folder: Path, now: float) -> None:
    records = [QueryRecord(query_id=f"a{n}", at=now - n * 3600, route="answer", question="What is the ZMP?",
                           book_version="v1", outcome="answered", refusal_reason=None, sections=(ZMP,),
                           latency_ms=100.0 + n, answerer="extractive", key_hash="k", top_score=0.62)
               for n in range(6)]
    records += [QueryRecord(query_id=f"g{n}", at=now - 60 * n, route="answer_stream", question=q, book_version="v1",
                            outcome="refused", refusal_reason="no_relevant_context", sections=(),
                            latency_ms=50.0, answerer="extractive", key_hash="k", top_score=0.2)
                for n, q in enumerate(GAPS)]
    records.append(QueryRecord(query_id="old", at=now - 40 * 86_400, route="answer", question="Too old to count",
                               book_version="v1", outcome="refused", refusal_reason="no_relevant_context",
                               sections=(), latency_ms=1.0, answerer="extractive", key_hash="k", top_score=0.1))
    log = LocalQuestionLog(folder)
    log.write(records)
    log.add_feedback(FeedbackRecord(query_id="a0", rating="down", at=now, comment="<b>wrong</b> formula"))
    log.add_feedback(FeedbackRecord(query_id="a1", rating="up", at=now))


@pytest.fixture
def logged(book_env: Any, use_env: Callable[..., None], tmp_path: Path) -> Path:
    folder = tmp_path / "question-log"
    _write_log(folder, time.time())
    use_env(QUESTION_LOG_PATH=str(folder))
    return folder


def _run(*args: str) -> Any:
    from typer.testing import CliRunner

    from bookrag.devtools.cli import app

    return CliRunner().invoke(app, ["report", *args])


def test_report_json_reads_the_window_and_clusters_the_gaps(logged: Path) -> None:
    result = _run("--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["schema"] == "bookrag.report/1"
    assert (data["questions"], data["answered"], data["refused"], data["votes_down"]) == (11, 6, 5, 1)
    assert data["refusal_rate"] == pytest.approx(5 / 11, abs=1e-4)
    assert {r["route"] for r in data["routes"]} == {"answer", "answer_stream"}
    assert data["top_sections"][0] == {"url": ZMP.url, "title": ZMP.title, "asked": 6, "cited": 6}
    assert data["downvoted_sections"][0]["down"] == 1 and data["downvoted_sections"][0]["up"] == 1
    gaps = data["gaps"]
    assert gaps["questions"] == 5
    clusters = [sorted(c["examples"]) for c in gaps["clusters"]]
    assert clusters == [sorted(GAPS[:3])]  # the Isaac Sim phrasings, markup and all, are one topic
    # The World Cup questions are about nothing the book says: counted, not listed among the gaps.
    assert gaps["off_topic"]["questions"] == 2 and gaps["off_topic"]["clusters"] == 1
    isaac = next(c for c in gaps["clusters"] if SCRIPT in c["examples"])
    assert isaac["count"] == 3 and len(isaac["nearest_sections"]) == 3
    assert all(s["url"].startswith("http://localhost:3000/docs/") for s in isaac["nearest_sections"])
    assert data["notes"] == []
    assert (logged / "report-vectors.npz").exists()  # the next report embeds only what is new


def test_report_text_and_html_escape_a_readers_markup(logged: Path, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    result = _run("--since", "7d", "--html", str(page))
    assert result.exit_code == 0, result.output
    assert "Content gaps: 5 questions" in result.output and f"HTML report: {page}" in result.output
    assert "Off-topic (nearest chunk under 0.26): 2 questions in 1 topics" in result.output
    html = page.read_text(encoding="utf-8")
    assert "<script>" not in html and "<b>wrong</b>" not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html and "&lt;b&gt;wrong&lt;/b&gt; formula" in html
    assert html.count('src="data:image/png;base64,') >= 4  # per day, latency, gaps, sections, down votes
    assert "default-src 'none'" in html


def test_html_without_the_plotting_extra_says_how_to_install_it(logged: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the extra were not installed
    result = _run("--html", str(tmp_path / "r.html"))
    assert result.exit_code == 2
    assert "pip install 'bookrag[report]'" in result.output
    assert not (tmp_path / "r.html").exists()


def test_a_bad_window_and_a_log_turned_off_are_refused_clearly(logged: Path, use_env: Callable[..., None]) -> None:
    assert _run("--since", "soon").exit_code == 2
    use_env(QUESTION_LOG="off")
    result = _run()
    assert result.exit_code == 2 and "QUESTION_LOG=off" in result.output
