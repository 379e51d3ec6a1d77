"""Issue 24's conversation shapes, through the real agent (offline rewrite, extractive answerer) on the
sample book: a referent named by the previous answer, a selection that ignores an unrelated earlier
turn, and a refused turn that does not make the next question refused."""

from __future__ import annotations

from typing import Any

import pytest

from bookrag.contracts.agent import REFUSAL, Response
from bookrag.domain.conversation import Conversation, Selection, Turn
from bookrag.services.container import container_for

# A sentence of module-2-simulation/gazebo.md, as a reader copies it from the page.
STEP_SIZE = Selection("Smaller steps are more accurate for stiff contacts such as feet hitting the ground, "
                      "but cost more CPU.", source_file="module-2-simulation/gazebo.md")


@pytest.fixture
def ask(book_env: Any) -> Any:
    agent = container_for(book_env).agent

    def run(question: str, history: tuple[Turn, ...] = (), selection: Selection | None = None) -> Response:
        conversation = Conversation(history, selection) if history or selection else None
        return agent.run(question, conversation)

    return run


def turn(ask: Any, question: str) -> Turn:
    response = ask(question)
    return Turn(question, response.answer, question)


def test_a_follow_up_s_pronoun_is_the_entity_the_previous_answer_picked(ask: Any) -> None:
    picked = turn(ask, "Which physics engine is biomechanics-oriented?")
    assert "Simbody" in picked.answer

    follow_up = ask("Which Gazebo is it available in?", (picked,))

    assert follow_up.standalone_question == "Which Gazebo is Simbody physics engine available in?"
    assert not follow_up.is_refusal and "Simbody" in follow_up.answer and "Gazebo Classic" in follow_up.answer
    # a client that sends only its questions: the answer is unknown, the earlier subject is used as before
    unanswered = ask("Which Gazebo is it available in?", (Turn(picked.question),))
    assert unanswered.standalone_question == "Which Gazebo is physics engine available in?"


def test_a_selection_is_answered_from_its_passage_not_from_an_unrelated_earlier_turn(ask: Any) -> None:
    alone = ask("Explain this more simply", selection=STEP_SIZE)
    earlier = turn(ask, "How do I install ROS 2 Humble?")

    after = ask("Explain this more simply", (earlier,), STEP_SIZE)

    assert after.standalone_question == "Explain this more simply"
    assert after.answer == alone.answer
    # Its section may name ROS ("... ROS nodes must use `use_sim_time`"); the installation page never joins.
    assert "module-1-ros2/installation.md" not in {s.source_file for s in after.sources}
    assert after.selection_in_book is True


def test_a_selection_question_that_refers_back_brings_the_earlier_subject(ask: Any) -> None:
    earlier = turn(ask, "What is the real-time factor?")

    after = ask("How does this relate to what you said before?", (earlier,), STEP_SIZE)

    assert after.standalone_question == "How does this relate to what you said before (real-time factor)?"
    assert after.selection_in_book is True and not after.is_refusal


def test_a_refused_turn_does_not_make_the_next_question_refused(ask: Any) -> None:
    refused = turn(ask, "What is the capital of France?")
    assert refused.answer == REFUSAL
    alone = ask("Explain this more simply", selection=STEP_SIZE)

    selected = ask("Explain this more simply", (refused,), STEP_SIZE)

    assert not selected.is_refusal and selected.answer == alone.answer
    installed = turn(ask, "How do I install ROS 2 Humble?")
    follow_up = ask("Which Ubuntu version does it need?", (installed, refused))
    assert follow_up.standalone_question == "Which Ubuntu version does ROS 2 Humble need?"
    assert not follow_up.is_refusal and "22.04" in follow_up.answer


def test_a_selection_is_answered_from_its_section_unless_the_question_reaches_beyond_it(ask: Any,
                                                                                       book_env: Any) -> None:
    # Textbook-2's set C (issue 24, on 39e8891): "Which of these should I use for a humanoid with lots of
    # contacts?" about a list of physics engines ended with another page's "Proper simulation of
    # robot-robot and human-robot contacts": the answerer had the book at large beside the passage.
    agent = container_for(book_env).agent

    def retrieved(question: str) -> set[tuple[str, str]]:
        events = agent.events(question, Conversation((), STEP_SIZE))
        return {(s.source_file, s.section) for e in events if e.kind == "sources" for s in e.sources}

    simply = ask("Why does this matter for feet?", selection=STEP_SIZE)

    assert not simply.is_refusal
    assert {(s.source_file, s.section) for s in simply.sources} == {
        ("module-2-simulation/gazebo.md", "Step size and real-time factor")}, simply.answer
    assert retrieved("Why does this matter for feet?") == {("module-2-simulation/gazebo.md",
                                                             "Step size and real-time factor")}
    assert len(retrieved("Where else does the book talk about the step size?")) > 1
