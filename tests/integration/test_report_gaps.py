"""`bookrag report`'s gaps on a synthetic log over the indexed sample book, 30% of it off-topic: the listed gaps
are the questions near the book it does not answer, each with the sections (and so pages) where an answer would
go; the off-topic ones are counted, not listed; a gap's phrasings in other languages and casing are one entry."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bookrag.adapters.question_log.local import LocalQuestionLog
from bookrag.domain.question_log import QueryRecord

# Near the book, not answered by it: (phrasing, times asked).
NEAR = {
    "isaac": [("How do I install Isaac Sim on Windows?", 8), ("HOW DO I INSTALL ISAAC SIM ON WINDOWS", 4),
              ("¿Cómo instalo Isaac Sim en Windows?", 4), ("Can Isaac Sim run on Windows 11?", 4)],
    "mac": [("Can I use ROS 2 on a Mac with Apple silicon?", 8), ("¿Puedo usar ROS 2 en un Mac con Apple silicon?", 4),
            ("does ros 2 run natively on macos", 3)],
    "gpu": [("Which graphics card do I need to run the simulations?", 8), ("What GPU do I need for this course?", 5)],
    "battery": [("How long does a humanoid robot's battery last?", 8)],
    "mavros": [("How do I set up MAVROS to talk to a PX4 autopilot?", 7)],
}
# Off-topic, 30% of the records, the largest topic larger than any near one: by count alone it would lead.
OFF = {
    "worldcup": [("Who won the 2022 FIFA World Cup?", 10), ("who won the 2022 world cup", 4),
                 ("¿Quién ganó el Mundial de 2022?", 6)],
    "weather": [("What's the weather in Karachi today?", 4)],
    "recipes": [("How do I bake lasagna?", 3)],
}


def _records(now: float) -> list[QueryRecord]:
    out = []
    for topics in (NEAR, OFF):
        for phrasings in topics.values():
            for question, times in phrasings:
                out += [QueryRecord(query_id=f"q{len(out)}", at=now - 60 * len(out), route="answer", question=question,
                                    book_version="v1", outcome="refused", refusal_reason="no_relevant_context",
                                    sections=(), latency_ms=40.0, answerer="extractive", key_hash="k", top_score=None)
                        for _ in range(times)]
    return out


@pytest.fixture
def report(book_env: Any, use_env: Callable[..., None], tmp_path: Path) -> dict[str, Any]:
    folder = tmp_path / "question-log"
    records = _records(time.time())
    off = sum(t for phrasings in OFF.values() for _, t in phrasings)
    assert off / len(records) == pytest.approx(0.3, abs=0.01)
    LocalQuestionLog(folder).write(records)
    use_env(QUESTION_LOG_PATH=str(folder))
    from typer.testing import CliRunner

    from bookrag.devtools.cli import app

    result = CliRunner().invoke(app, ["report", "--json", "--since", "all"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


def _topic(question: str) -> str:
    return next(t for topics in (NEAR, OFF) for t, phrasings in topics.items() if question in dict(phrasings))


def test_no_off_topic_cluster_is_listed_and_all_of_them_are_counted(report: dict[str, Any]) -> None:
    gaps = report["gaps"]
    listed = [{_topic(q) for q in c["examples"]} for c in gaps["clusters"]]
    assert not [topics for topics in listed if topics & set(OFF)], listed
    assert {t for topics in listed for t in topics} == set(NEAR)
    off = gaps["off_topic"]
    assert off["questions"] == sum(t for phrasings in OFF.values() for _, t in phrasings)
    assert off["below"] == 0.26 and off["examples"][0] == "Who won the 2022 FIFA World Cup?"


def test_a_gap_in_several_languages_and_casings_is_one_entry_linked_to_its_sections(report: dict[str, Any]) -> None:
    by_topic = {_topic(c["label"]): c for c in report["gaps"]["clusters"]}
    isaac, mac = by_topic["isaac"], by_topic["mac"]
    assert isaac["count"] == 20 and isaac["distinct"] == 3  # the upper-case one is the same question
    assert mac["count"] == 15 and mac["distinct"] == 3
    assert len(by_topic) == len(report["gaps"]["clusters"]) == report["gaps"]["near_clusters"] == len(NEAR)
    for cluster in report["gaps"]["clusters"]:
        # Each entry links to the pages where an answer would go (a section's URL: its page and anchor).
        assert cluster["nearest_sections"], cluster["label"]
        assert all(s["url"].startswith("http://localhost:3000/docs/") for s in cluster["nearest_sections"])
        assert cluster["book_similarity"] >= 0.26
