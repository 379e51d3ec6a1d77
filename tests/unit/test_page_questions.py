"""A page's candidate questions, read from its headings, its bold definitions and its lists (issue 36)."""

from __future__ import annotations

from bookrag.domain.models import ChunkPayload
from bookrag.text.page_questions import candidates


def _chunk(index: int, headings: list[str], text: str) -> ChunkPayload:
    return ChunkPayload.from_dict({"chunk_index": index, "heading_path": ["Cloud vs On-Prem Deployment", *headings],
                                   "doc_title": "Cloud vs On-Prem Deployment", "content_text": text,
                                   "source_file": "appendices/cloud.md"})


def test_question_headings_definitions_glossaries_and_lists_become_questions() -> None:
    page = [
        _chunk(0, ["1.1 What is Cloud Robotics?"], "Cloud robotics moves computation off the robot."),
        _chunk(1, ["Terms"], "A **digital twin** is a virtual replica kept in sync with the robot."),
        _chunk(2, ["Glossary"], "- **Elastic Resources**: compute that grows with demand\n- **SLA**: a contract"),
        _chunk(3, ["Cloud Deployment", "Advantages"], "- Scales on demand\n- No hardware to buy\n- Managed"),
    ]
    assert candidates(page) == ["What is Cloud Robotics?", "What is a digital twin?", "What are elastic resources?",
                                "What are the advantages of cloud deployment?"]


def test_steps_code_and_a_single_list_item_give_nothing() -> None:
    page = [
        _chunk(0, ["Step 1: Set a UTF-8 locale"], "- `locale`  # check for UTF-8"),
        _chunk(1, ["Requirements"], "- Ubuntu 22.04"),  # one item is not a list to ask about
        _chunk(2, ["Notes"], "**Note:** this takes a while."),  # a bold label, not a defined term
    ]
    assert candidates(page) == []


def test_a_section_gives_one_candidate_before_any_gives_a_second() -> None:
    page = [
        _chunk(0, ["Nodes"], "A **node** is one process.\n\n- **rclpy**: the Python client\n- **rclcpp**: C++"),
        _chunk(1, ["Topics"], "A **topic** is a named channel."),
    ]
    assert candidates(page) == ["What is a node?", "What is a topic?", "What is rclpy?",
                                "What are the nodes of cloud vs On-Prem deployment?"]


def test_a_quiz_question_followed_by_its_options_is_no_candidate() -> None:
    # Its page asks it and never answers it: the answer is quoted from the chapter it tests.
    page = [_chunk(0, ["Question 1"], "What is the primary difference between topics and services?\n"
                                      "a) Topics are asynchronous\nb) Topics use TCP\nc) None"),
            _chunk(1, ["Review"], "- What is the primary difference between topics and services?")]
    assert candidates(page) == ["What is the primary difference between topics and services?"]
    assert candidates(page[:1]) == []


def test_a_heading_named_for_a_part_of_the_document_asks_about_its_subject_or_nothing() -> None:
    page = [_chunk(0, ["Lab Overview"], "This lab runs for two hours."),
            _chunk(1, ["Module Structure"], "Four chapters and a lab."),
            _chunk(2, ["Introduction to Gazebo Harmonic"], "Gazebo Harmonic simulates physics."),
            _chunk(3, ["Lab Overview", "Learning Objectives"], "- Build a node\n- Launch it")]
    assert candidates(page) == ["What is gazebo harmonic?",
                                "What are the learning objectives of cloud vs On-Prem deployment?"]
