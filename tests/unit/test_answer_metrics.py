"""The reader's checks of an answer (devtools/answer_metrics, answer_quality, answer_sets), on hand-made
responses against a hand-made book: each check passes on a good answer and fails on a bad one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bookrag.contracts.agent import REFUSAL, Quote, Response, Source
from bookrag.devtools import answer_metrics as m
from bookrag.devtools.answer_quality import Quality, score_answer, summarise
from bookrag.devtools.answer_sets import check_case, load_answer_cases
from bookrag.devtools.book_sections import Book
from tests.support.paths import CORPUS, ROOT, SAMPLE_DOCS

TEXTBOOK_2 = CORPUS / "physical-ai-textbook-2" / "docs"

ENGINES = """---
title: Engines
---

# Simulators

Simulators run robots in software.

## Physics engines

A physics engine computes contacts and forces.

#### Simbody

- **Pros**: Highly accurate for biomechanics
- **Cons**: Slow for large worlds

#### ODE

- **Pros**: Fast and robust for wheeled robots

## Lab checklist

By the end of this chapter you will be able to install a simulator.

```xml
<physics type="dart">
  <max_step_size>0.001</max_step_size>
  <real_time_factor>1.0</real_time_factor>
</physics>
```
"""


@pytest.fixture
def book(tmp_path: Path) -> Book:
    (tmp_path / "sim").mkdir()
    (tmp_path / "sim" / "engines.md").write_text(ENGINES, encoding="utf-8")
    return Book(tmp_path)


def source(*quotes: str, file: str = "sim/engines.md", section: str = "Physics engines") -> Source:
    return Source(chapter="Simulators", section=section, source_url="https://book/sim/engines", chunk_id="c1",
                  source_file=file, score=0.8,
                  quotes=[Quote(text=q, start=0, end=len(q), fragment_url="https://book/sim/engines") for q in quotes])


def answer(text: str, *sources: Source) -> Response:
    return Response(answer=text, sources=list(sources), is_refusal=False)


def test_sentences_keep_their_markers_and_take_the_next_one() -> None:
    sentences = m.split_answer("First one. Second one [1]. Third [2].\n- a list line [1]\n```\ncode\n```")

    assert [s.markers for s in sentences] == [(1,), (1,), (2,), (1,), ()]
    assert [s.prose for s in sentences] == [True, True, True, False, False]
    assert sentences[1].text == "Second one."


def test_lead_from_gold_passes_on_the_gold_section_and_fails_on_a_checklist(book: Book) -> None:
    gold = book.gold("sim/engines.md", "Simbody")
    good = answer("Simbody: Pros: Highly accurate for biomechanics [1].",
                  source("- **Pros**: Highly accurate for biomechanics", section="Simbody"))
    bad = answer("By the end of this chapter you will be able to install a simulator [1]. "
                 "Simbody: Pros: Highly accurate for biomechanics [2].",
                 source("By the end of this chapter you will be able to install a simulator.", section="Lab checklist"),
                 source("- **Pros**: Highly accurate for biomechanics", section="Simbody"))

    question = "Which engine is the most accurate?"
    assert score_answer(book, good, gold, question).lead_from_gold is True
    assert score_answer(book, bad, gold, question).lead_from_gold is False


def test_a_sentence_is_located_through_its_cited_quote_when_reworded(book: Book) -> None:
    reworded = answer("Simbody (Pros: Highly accurate; Cons: Slow) [1].",
                      source("- **Pros**: Highly accurate for biomechanics", section="Simbody"))

    quality = score_answer(book, reworded, book.gold("sim/engines.md", "Simbody"), "Which engine is accurate?")

    assert quality.lead_from_gold is True and quality.unlocated == 0


def test_a_lead_in_is_located_with_its_list(book: Book) -> None:
    # "ODE" alone first occurs in a sentence of another section; with its list it is the ODE section.
    (book.docs / "sim" / "engines.md").write_text(ENGINES.replace("A physics engine computes",
                                                                  "ODE or not, a physics engine computes"))
    listed = answer("ODE: [1]\n\n- Pros: Fast and robust for wheeled robots.", source())

    assert score_answer(book, listed, book.gold("sim/engines.md", "ODE"), "Which engine is fast?").lead_from_gold


def test_off_topic_counts_sentences_of_unrelated_sections_only(book: Book) -> None:
    gold = book.gold("sim/engines.md", "Simbody")
    related = answer("A physics engine computes contacts and forces [1]. Pros: Highly accurate for biomechanics [2].",
                     source("A physics engine computes contacts and forces."),
                     source("- **Pros**: Highly accurate for biomechanics", section="Simbody"))
    unrelated = answer("Pros: Highly accurate for biomechanics [1]. By the end of this chapter you will be able "
                       "to install a simulator [2].",
                       source("- **Pros**: Highly accurate for biomechanics", section="Simbody"),
                       source("By the end of this chapter you will be able to install a simulator."))

    question = "Which physics engine is the most accurate?"
    assert score_answer(book, related, gold, question).off_topic_sentences == 0
    assert score_answer(book, unrelated, gold, question).off_topic_sentences == 1


def test_label_kept() -> None:
    assert m.label_kept("Simbody: Pros: Highly accurate for biomechanics.", "simbody")
    assert not m.label_kept("Pros: Highly accurate for biomechanics.", "simbody")
    assert m.label_kept("AI-optimized simulators need special hardware.", "ai-optimized")


def test_markup_in_prose() -> None:
    assert m.has_markup('Set <max_step_size>0.001</max_step_size> in the world.')
    assert m.has_markup("Rows: | Asset Creation | Easy | Complex | in the table.")
    assert not m.has_markup("Add a `<gazebo>` tag for friction.")
    assert not m.has_markup("Use the DART engine for contacts.")


def test_code_flattened_into_prose_is_markup_and_a_code_block_is_not(book: Book) -> None:
    block = '```xml\n<physics type="dart">\n  <max_step_size>0.001</max_step_size>\n</physics>\n```'
    cited = source(block, section="Lab checklist")
    flattened = answer('Configure it: <physics type="dart">; <max_step_size>0.001</max_step_size> [1].', cited)
    fenced = answer(f"Configure it [1]:\n{block}", cited)
    gold = book.gold("sim/engines.md", "Lab checklist")

    assert score_answer(book, flattened, gold, "How do I set the step size?").markup_in_prose == 1
    assert score_answer(book, fenced, gold, "How do I set the step size?").markup_in_prose == 0
    assert m.flattened_code("export A=1; export B=2", ["```bash\nexport A=1\nexport B=2\n```"])
    assert not m.flattened_code("u(t) = Kp * e(t) is the law", ["```\nu(t) = Kp * e(t)\n```"])


def test_definition_lead_names_the_term_as_the_subject_of_a_defining_verb() -> None:
    assert m.definition_lead(["A digital twin is a virtual replica of a physical system."], "digital twin")
    assert m.definition_lead(["Morphological computing refers to the body doing work."], "morphological computation")
    assert m.definition_lead(["CPGs are neural circuits."], "cpg")
    assert not m.definition_lead(["By the end of this chapter you will be able to build a twin."], "digital twin")
    # "is" somewhere in the sentence is not a definition of its first noun.
    assert not m.definition_lead(["The global costmap covers the map and the local costmap is small."], "costmap")
    assert not m.definition_lead([], "costmap")


def test_definition_lead_is_the_books_definition_in_the_books_words() -> None:
    babbling = "Like human infants, robots can learn through random movements (motor babbling)."
    zmp = "It's the point on the ground where the net moment of the ground reaction force is zero:"

    assert m.definition_lead([babbling + " [1]"], "motor babbling", [babbling])
    assert not m.definition_lead(["Robots learn about their bodies [1]."], "motor babbling", [babbling])
    # The sentence after the first continues it ("It's ..."), so the two lead together.
    assert m.definition_lead(["The ZMP matters for walking.", zmp.rstrip(":") + "."], "zmp", [zmp])
    assert not m.definition_lead(["The ZMP matters for walking.", "Walking " + zmp[5:]], "zmp", [zmp])
    assert m.definition_lead(["Open-loop control operates without feedback."], "open-loop control",
                             ["Other words.", "**Open-loop control** operates without feedback."])


def test_a_refusal_is_scored_as_refused_only(book: Book) -> None:
    refusal = Response(answer=REFUSAL, sources=[], is_refusal=True, refusal_reason="weak_evidence")

    assert score_answer(book, refusal, [], "anything", label="simbody") == Quality()


def test_summary_counts_false_refusals_and_false_answers() -> None:
    good = Quality(sentences=1, lead_from_gold=True, off_topic_sentences=0, label_kept=True, markup_in_prose=0)
    rows = [(True, False, 1.0, good), (True, True, 0.0, Quality()), (False, False, 0.0, Quality()),
            (False, True, 0.0, Quality())]

    summary = summarise(rows)

    assert summary["false_refusals"] == 0.5 and summary["false_answers"] == 0.5
    assert summary["keyword_recall"] == 0.5 and summary["lead_from_gold"] == 1.0 and summary["label_kept"] == 1.0


def test_check_case_names_each_wrong_field(book: Book) -> None:
    good = {"question": "Which engine is the most accurate?", "gold_file": "sim/engines.md", "gold_heading": "Simbody",
            "gold_passage": "- **Pros**: Highly accurate for biomechanics", "answer_keywords": ["highly accurate"],
            "kind": "factual", "shape": "list", "label": "simbody"}

    assert check_case(book, good) == []
    assert "heading" in check_case(book, {**good, "gold_heading": "Bullet"})[0]
    assert "passage" in check_case(book, {**good, "gold_passage": "Highly accurate for everything"})[0]
    assert "keyword" in check_case(book, {**good, "answer_keywords": ["fast and robust"]})[0]
    assert "label" in check_case(book, {**good, "label": "bullet"})[0]
    assert "label" in check_case(book, {**good, "label": ""})[0]


def _check_set(path: Path, docs: Path) -> None:
    book = Book(docs)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [(n, check_case(book, row)) for n, row in enumerate(lines, 1) if check_case(book, row)] == []
    cases = load_answer_cases(path)
    assert len(cases) == len(lines) and all(c.gold or not c.answerable for c in cases)


def test_the_sample_book_answer_set_matches_the_book() -> None:
    _check_set(ROOT / "eval" / "answers-sample-book.jsonl", SAMPLE_DOCS)


@pytest.mark.corpus
@pytest.mark.skipif(not TEXTBOOK_2.is_dir(), reason="needs ../shared/corpus/physical-ai-textbook-2")
def test_the_textbook_2_answer_set_matches_the_book() -> None:
    _check_set(ROOT / "eval" / "answers-textbook-2.jsonl", TEXTBOOK_2)
