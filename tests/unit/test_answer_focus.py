"""What may join an extractive answer besides its lead (issue 24: "no sentence from an unrelated section").
Each test fails on the answerer of fd6ffd9.

- a reading list ("References and Further Reading") never leads nor joins: it names where to read more,
  in the words of the chapter's subject;
- another section's whole list joins only under a heading that shares the question's words;
- "How is X computed?" asks for the formula the book sets as a block (fails on e8abe89);
- the lab a robot lives in is not a lab exercise, "how often" asks for a schedule, and "X is <adjective>" is
  not X's definition (fail on 75c50b1)."""

from __future__ import annotations

from tests.support.answers import answer, hits_of

SERVICES = """# Services

## Characteristics of services

- **Blocking**: The caller is blocked until the server sends its response back.
- **One-to-one**: Each request is answered by exactly one server.
"""

READING = """# Communication patterns

## References and Further Reading

- The middleware's handbook on communication patterns, blocking calls and callers.
- A survey of caller patterns and blocking communication in robot middleware.
"""

TROUBLESHOOTING = """# Debugging

## Common Issues and Solutions

- **Slow callbacks**:
  - Check the callback for blocking communication calls before blaming the network.
  - Measure the control loop with the middleware's own timing tools.
"""


def test_a_reading_list_never_joins_an_answer() -> None:
    text = answer("Which communication pattern blocks the caller?",
                  [*hits_of(SERVICES, "services.md", 0.6), *hits_of(READING, "reading.md", 0.6)])
    assert text.startswith("Characteristics of services"), text
    assert "handbook" not in text and "survey" not in text, text


def test_another_sections_list_joins_only_under_a_heading_the_question_names() -> None:
    text = answer("Which communication pattern blocks the caller?",
                  [*hits_of(SERVICES, "services.md", 0.6), *hits_of(TROUBLESHOOTING, "debugging.md", 0.6)])
    assert "blocked until the server" in text, text
    assert "Slow callbacks" not in text and "timing tools" not in text, text


FORMULA = """# Balance

## Zero moment point

The ZMP is the point on the ground where the net moment of the contact forces is zero:

```
x_zmp = sum(m_i * (g * x_i - h_i * a_i)) / sum(m_i * g)
```
"""


def test_how_is_it_computed_shows_the_formula() -> None:
    for question in ("How is the ZMP computed?", "What's the formula for the ZMP?", "How is the ZMP calculated?"):
        text = answer(question, hits_of(FORMULA, "balance.md"))
        assert "```\nx_zmp = sum(m_i * (g * x_i - h_i * a_i)) / sum(m_i * g)\n```" in text, text


LAB = """# Robotics lab

## Research lab network

The research lab splits its network into a safety VLAN and a data VLAN so that a flood of camera
traffic never delays an emergency stop.

## Cameras

The camera network carries image traffic at a gigabit per robot.

## Inspections

An outside inspector signs off the safety systems once they are installed.

## Audit schedule

- **Quarterly**: A full audit of every safety system, with the results filed for the lab manager.
- **Daily**: A check that each emergency stop still cuts power within one second.
"""

HARDWARE_LOAD = """# Hardware

## Why a physical AI workstation

Physical AI is computationally demanding on the workstation, where simulation and training both run.
Physical AI is the field of systems that perceive and act in the physical world through a body.
"""


def test_the_lab_a_robot_lives_in_is_not_a_lab_exercise() -> None:
    text = answer("How is the robots' network split into VLANs?", hits_of(LAB, "lab.md"))
    assert text.startswith("The research lab splits its network"), text


def test_how_often_asks_for_the_schedule() -> None:
    text = answer("How often are the safety systems audited?", hits_of(LAB, "lab.md"))
    assert text.startswith("Audit schedule") and "Quarterly" in text, text


def test_x_is_an_adjective_is_not_a_definition() -> None:
    text = answer("What is physical AI?", hits_of(HARDWARE_LOAD, "hardware.md"))
    assert text.startswith("Physical AI is the field of systems"), text
