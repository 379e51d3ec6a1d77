"""Issue 24's composition shapes on small hand-made pages, through the real chunker and the extractive
answerer (a retriever that does not embed: each unit takes its chunk's score, as with a remote embedder).

Each test fails on the answerer before issue 24: an item quoted without its label, a lab checklist
leading an answer about the chapter's subject, a vague opening before the book's definition, and a code
block flattened into a sentence."""

from __future__ import annotations

import re
from dataclasses import replace

from tests.support.answers import answer, hits_of

ENGINES = """# Physics engines

Gazebo can run several physics engines, each with its own strengths.

#### Simbody

- **Pros**: Highly accurate, good for biomechanical simulation
- **Cons**: Complex setup, slower for simple scenarios

#### Bullet

- **Pros**: Fast and robust for games and simple robots
- **Cons**: Less accurate contact dynamics for precise work
"""

CHAPTER = """# Chapter 3: Embodied Cognition

## Learning Objectives

By the end of this chapter, you will be able to:
- Explain what embodied cognition is and why it matters for robots
- Describe how the body shapes the cognitive processes of a robot

## 3.1 Embodied Cognition

Many researchers have studied how robots think for several decades now.
Embodied cognition is the view that cognitive processes are shaped by the body's interactions with the environment.
It contrasts with classical cognitive science, which treats thinking as symbol manipulation.

## Lab: Embodied Cognition Demo

Demonstration of embodied cognition principles in a simple robot.
Verification: All components of the embodied cognition demo work together effectively.
"""

WORLD = """# Gazebo setup

## Physics configuration

Gazebo reads its physics settings from the world file, which sets the time step and the solver:

```xml
<physics type="dart">
  <max_step_size>0.001</max_step_size>
  <real_time_factor>1.0</real_time_factor>
</physics>
```

A smaller time step makes the physics simulation more accurate but slower to run.
"""


def test_an_item_names_the_heading_it_belongs_to() -> None:
    text = answer("Which physics engine is the most accurate?", hits_of(ENGINES))

    # Quoted alone, the item names its engine; quoted with its list, the list stands under the engine's name.
    labelled = re.search(r"Simbody(?: — |: \[S\d\]\n\n- )Pros: Highly accurate", text)
    assert labelled, text
    assert "Pros: Highly accurate" not in text.replace(labelled.group(), "")


def test_scaffolding_does_not_lead() -> None:
    # The lab's checklist shares every word of the question and its chunk ranks first.
    hits = [replace(h, score=0.7, rank_score=0.7) if "Lab" in h.section_heading else h
            for h in hits_of(CHAPTER, "ch3.md")]
    text = answer("How do embodied cognition principles work together in a robot?", hits)

    assert text.startswith(("Many researchers", "Embodied cognition is the view")), text
    assert not answer("What does the embodied cognition lab verify?", hits).startswith("Embodied cognition is")


def test_what_is_x_leads_with_the_definition() -> None:
    text = answer("What is embodied cognition?", hits_of(CHAPTER, "ch3.md"))

    assert text.startswith("Embodied cognition is the view that cognitive processes are shaped by the body")


def test_code_stays_out_of_prose_unless_asked_for() -> None:
    told = answer("What time step does the Gazebo physics simulation use?", hits_of(WORLD, "gz.md"))
    asked = answer("How do I configure the physics time step in the Gazebo world file?", hits_of(WORLD, "gz.md"))

    assert "<physics" not in told and "max_step_size" not in told
    assert "time step and the solver. [S1]" in told
    # Asked for configuration: the block as the book writes it, fenced, never inline in a sentence.
    assert "[S1]\n\n```xml\n<physics type=\"dart\">\n  <max_step_size>0.001</max_step_size>\n" in asked
    assert "\n```\n\nA smaller time step" in asked
    assert "solver: <physics" not in asked


STATIC = """# Static files

## Serving a folder

Mount the StaticFiles application on a path of your routes to serve a folder of files:

```python
routes = [
    Mount("/static", app=StaticFiles(directory="static"), name="static"),
]
app = Starlette(routes=routes)
```

Responses for files that do not exist are 404 responses.
"""


def test_a_how_to_gets_the_block_that_names_what_it_asks_about() -> None:
    # "How do I mount ...": any how-to's verb, not a list of them; the block writes the question's own words.
    mounted = answer("how do i mount a folder of static assets", hits_of(STATIC, "static.md"))
    # A how-to about something the block does not write keeps the block out of the prose.
    missing = answer("how do i get a 404 response for a missing page", hits_of(STATIC, "static.md"))

    assert '```python\nroutes = [\n    Mount("/static", app=StaticFiles(directory="static")' in mounted, mounted
    assert "Mount(" not in missing, missing


EXAMPLE = """# Static files

## Serving a folder

You can combine the StaticFiles application with the routing to serve a folder of assets.

```python
routes = [
    Mount("/static", app=StaticFiles(directory="static"), name="static"),
]
app = Starlette(routes=routes)
```

Responses for missing assets are 404 responses.
"""


def test_a_code_block_after_a_sentence_is_that_sentences_example() -> None:
    # No colon introduces the block: the sentence right before it is what it shows.
    mounted = answer("how do i mount a folder of static assets", hits_of(EXAMPLE, "static.md"))
    told = answer("what does the StaticFiles application combine with", hits_of(EXAMPLE, "static.md"))

    assert 'assets. [S1]\n\n```python\nroutes = [\n    Mount("/static"' in mounted, mounted
    # Not asked for code: the sentence as the book writes it, without its example.
    assert "You can combine the StaticFiles application with the routing to serve a folder of assets. [S1]" in told
    assert "Mount(" not in told, told


KINEMATICS = """# Kinematics

## Velocity kinematics

The Jacobian relates joint velocities to end-effector velocities:

```
ẋ = J(θ) * θ̇
```

Where J(θ) is the Jacobian matrix and θ̇ is the vector of joint velocities.
"""


def test_a_formula_of_one_or_two_lines_is_shown_to_any_question() -> None:
    # A block of a line or two is a formula (or one command) the prose goes on about ("Where J(θ) is ..."); the
    # question need not ask for code. The longer configuration above stays out of prose (the test before).
    text = answer("what does the jacobian do in robot kinematics", hits_of(KINEMATICS, "kin.md"))

    assert "velocities: [S1]\n\n```\nẋ = J(θ) * θ̇\n```\n\nWhere J(θ) is the Jacobian matrix" in text, text


PACKAGES = """# Isaac ROS

## Packages

Isaac ROS includes several specialized packages for perception:

- **Isaac ROS Apriltag**: GPU-accelerated AprilTag detection and pose estimation
- **Isaac ROS Visual SLAM**: GPU-accelerated visual localization and mapping
- **Isaac ROS DNN Inference**: TensorRT-accelerated deep learning inference
"""


def test_a_list_quoted_whole_stays_a_list() -> None:
    text = answer("Which packages does Isaac ROS include?", hits_of(PACKAGES, "ros.md"))

    assert text.startswith("Isaac ROS includes several specialized packages for perception: [S1]\n\n"
                           "- Isaac ROS Apriltag: GPU-accelerated AprilTag detection and pose estimation.\n"
                           "- Isaac ROS Visual SLAM: ")


ACTIONS = """# Actions

## ROS 2 Tools for Development

ROS 2 includes many tools for development and debugging of nodes, topics and actions:
- ros2 action: list the actions of a running system and send goals to actions
- ros2 topic: list, inspect and publish to the topics of a running system

## When to Use Actions

Actions are appropriate when:
- The operation takes a significant amount of time to complete
- You need to monitor progress during the execution of the task
"""


def test_a_heading_phrased_as_the_question_leads() -> None:
    # "When is ... the right tool?" and "When to Use Actions": the question word a stop list drops is the
    # match; the lead-in sits under that heading though it reads as a heading of its own.
    text = answer("When is a ROS 2 action the right tool?", hits_of(ACTIONS, "actions.md"))

    assert text.startswith("Actions are appropriate when:")


COMPONENTS = """# Digital twins

## Key components

A comprehensive robotics digital twin typically includes a physical model, sensor simulation and actuator
simulation of the robot.
"""

EVOLUTION = """# History of simulation

## Evolution of digital twin concepts

Twins grew out of earlier ideas: hardware-in-the-loop simulation and software-in-the-loop simulation.
"""


def test_a_multi_part_answer_follows_the_question_s_order() -> None:
    # Textbook-2's "What goes into a robotics digital twin, and what earlier ideas did it grow out of?"
    # (issue 24, on d6bc91b) answered the earlier ideas first: they scored best for the whole question.
    hits = [*hits_of(EVOLUTION, "history.md", 0.6), *hits_of(COMPONENTS, "twin.md", 0.6)]

    text = answer("What goes into a robotics digital twin, and what earlier ideas did it grow out of?", hits)

    assert text.index("A comprehensive robotics digital twin") < text.index("grew out of earlier ideas"), text


AI_SIMULATORS = """# Simulators

## AI-Optimized Simulation

These simulators are designed specifically for AI and machine learning applications:

- **Examples**: Isaac Sim, AirSim, Gazebo with AI plugins.
- **Limitations**: May require specialized hardware and a complex setup.
"""


def test_a_section_opening_that_says_these_names_its_heading() -> None:
    # Textbook-2's "What are the drawbacks of simulators made for AI training ...?" (issue 24, on 5d7ae96)
    # opened with "These simulators are designed ..." and never said which ones: "AI-Optimized".
    text = answer("What are the drawbacks of simulators made for AI training?", hits_of(AI_SIMULATORS, "sims.md"))

    assert text.startswith("AI-Optimized Simulation — These simulators are designed specifically"), text
