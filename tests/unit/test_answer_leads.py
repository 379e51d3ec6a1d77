"""What leads an extractive answer (issue 24, second part), on small hand-made pages through the real
chunker: each test fails on the answerer of a816281.

- "What is X in Y?" and "What's X?" still ask for X's definition;
- a definition that its next sentence completes ("... a critical concept. It's the point where ...")
  is quoted with it;
- one sentence that answers is not outvoted by a section of middling bullets;
- a configuration block longer than six lines is shown to a question that asks for configuration;
- a short heading ("Materials") introduces its list, which is quoted whole under it;
- an assessment rubric never leads, nor joins an answer the book's teaching gives;
- a page's introduction does not lead a how-question a section of the page answers;
- a name inside an identifier (GZ_GUI_...) is not unknown to the book;
- a definition in apposition ("costmaps, grids in which ...") leads a "What is X?" answer, and an "is"
  after a semicolon does not make its sentence a definition of the sentence's first noun;
- a page that never says a name the question gives ("Isaac") does not lead, though it shares the rest;
- "What does the book say about X?" is about X: the book and its saying are not words it must know;
- a numbered name the question gives ("module 3") picks its page among pages that say the rest alike."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bookrag.answering.answerers.candidates import candidates
from bookrag.answering.answerers.questions import QuestionShape, defined_term, defines
from bookrag.answering.gate import asked_about
from tests.support.answers import answer, hits_of

BALANCE = """# Balance

## Walking

Bipedal walking keeps the ZMP inside the support polygon at every step.

## Balance criteria

The ZMP is the point on the ground where the net moment of the contact forces is zero.
"""


def test_what_is_x_in_a_setting_asks_for_x() -> None:
    assert defined_term("What is the ZMP in bipedal walking?") == "ZMP"
    assert defined_term("what's a digital twin in robotics?") == "digital twin"
    assert defined_term("So what exactly is physical AI?") == "physical AI"
    assert defined_term("What is an LQR and what control law does it give?") == "LQR"
    # X ends at its first function word: "the role of DDS" asks about "role", which no sentence of a book
    # defines as the subject of its question (issue 37: the hand-written list of relation words is gone).
    assert defined_term("What is the role of DDS?") == "role"

    text = answer("What is the ZMP in bipedal walking?", hits_of(BALANCE, "balance.md"))
    assert text.startswith("The ZMP is the point on the ground"), text


CONTINUED = """# Stability

## Balance criteria

The ZMP is a critical concept for bipedal locomotion stability. It's the point on the ground where the net
moment of the contact forces is zero.

Engineers plan footsteps so that the ZMP stays inside the foot.
"""


def test_a_definition_keeps_the_sentence_that_completes_it() -> None:
    text = answer("What is the ZMP?", hits_of(CONTINUED, "stability.md"))

    assert text.startswith("The ZMP is a critical concept for bipedal locomotion stability. It's the point on the "
                           "ground where the net moment"), text


GAP = """# Simulation

## The reality gap

Simulation results differ from reality because of the differences between simulated and real-world physics.
"""

SENSORS = """# Sensors in simulation

## Sensor modeling

- **Noise**: Simplified noise models in the simulation
- **Latency**: Simulated delays that differ from real ones
- **Range**: Sensor range that differs between simulators
"""


def test_one_answering_sentence_is_not_outvoted_by_a_list() -> None:
    hits = [*hits_of(GAP, "gap.md", score=0.7), *hits_of(SENSORS, "sensors.md", score=0.55)]

    text = answer("Why do simulation results differ from reality?", hits)

    assert text.startswith("Simulation results differ from reality because"), text


WORLD = """# Gazebo worlds

## Physics parameters

The physics engine can be configured with parameters to balance accuracy and performance:

```xml
<physics type="ode">
  <max_step_size>0.001</max_step_size>
  <real_time_factor>1.0</real_time_factor>
  <real_time_update_rate>1000</real_time_update_rate>
  <ode>
    <solver>
      <iters>10</iters>
    </solver>
  </ode>
</physics>
```
"""


def test_a_configuration_block_longer_than_six_lines_is_shown_when_asked_for() -> None:
    text = answer("How do I set the time step and real-time factor in a Gazebo world file?", hits_of(WORLD, "w.md"))

    assert "```xml\n<physics type=\"ode\">\n  <max_step_size>0.001</max_step_size>\n" in text, text
    assert "<real_time_factor>1.0</real_time_factor>" in text


HARDWARE = """# Hardware

## Enhanced humanoid robot

The enhanced platform is a full-size humanoid robot for research labs:

- **Processing unit**: an on-board computer such as a Jetson Orin
- **Structural frame**: carbon fiber composite materials for a light robot frame
- **Actuators**: 24 to 32 smart servo motors with feedback

## Materials

- **Carbon fiber**: for lightweight, strong structural elements
- **Aluminum**: for joints and mounting points requiring precision
- **PLA/ABS**: 3D printed parts for prototypes
"""


def test_a_short_heading_carries_its_list() -> None:
    # "Materials" (9 characters) used to be too short to introduce its list: the bullets stood alone,
    # each weaker than the other section's list, whose long inventory shares the question's words.
    text = answer("What materials does the robot use?", hits_of(HARDWARE, "hw.md", step=0.02))

    assert "Materials: [S2]\n\n- Carbon fiber: for lightweight, strong structural elements.\n- Aluminum:" in text, text


COURSE = """# ROS 2 communication

## Assessment criteria

- Understanding of ROS 2 communication patterns and when a call blocks (30%)

## Services

A service call blocks the caller until the server sends its response.
"""


def test_an_assessment_rubric_never_leads() -> None:
    text = answer("Which ROS 2 communication pattern blocks the caller?", hits_of(COURSE, "ros.md", step=0.02))

    assert text.startswith("A service call blocks the caller"), text
    assert "Assessment" not in text and "30%" not in text, text  # nor does it join the answer


INTRODUCTION = """# Bipedal Locomotion and Balance

Walking on two legs looks effortless for people, yet keeping balance while walking is one of the hardest
control problems a humanoid robot faces. A biped has a small base of support, it repeatedly lifts one of its
two contacts off the ground, and it must absorb an impact at every step of its walking.
"""

ZMP = """# Bipedal Locomotion and Balance

## The zero moment point

A walking robot keeps its balance while the zero moment point stays inside the support polygon of its feet.
"""


def test_a_page_introduction_does_not_lead_a_how_question() -> None:
    # Two chunks of one page (a long introduction is a chunk of its own): the introduction shares more of
    # the question's words; the section below it answers.
    intro = hits_of(INTRODUCTION, "walk.md")
    below = [replace(h, chunk_id="walk.md-1", payload=replace(h.payload, chunk_id="walk.md-1", chunk_index=1))
             for h in hits_of(ZMP, "walk.md")]

    text = answer("How does a humanoid robot keep its balance while walking?", [*intro, *below])

    assert text.startswith("A walking robot keeps its balance while the zero moment point"), text


HEADLESS = """# Gazebo performance

## Visualization settings

Optimize rendering for performance:

```bash
# Disable rendering for headless operation
gazebo --headless my_world.sdf
export GZ_GUI_PLUGIN_CAMERA_TRACKER_ENABLED=false
```
"""


def test_a_name_inside_an_identifier_is_a_word_the_book_uses() -> None:
    # "GUI" appears only inside GZ_GUI_PLUGIN_...: the book is not silent about it (the book-wide term
    # lookup, which finds whole tokens only, says no).
    text = answer("How can I run Gazebo without the GUI rendering?", hits_of(HEADLESS, "perf.md"),
                  uses_term=lambda term: term != "gui")

    assert "gazebo --headless my_world.sdf" in text


COSTMAPS = """# Navigation

## Costmaps

The global costmap covers the whole map and is used for long-range planning; the local costmap is a small
rolling window around the robot, updated quickly from live sensor data. Planners do not work directly on
the map. They use **costmaps**, grids in which every cell holds a cost from 0 to 255.
"""

DYNAMIC = """# Locomotion

## Dynamic walking

Dynamic walking allows the centre of mass to leave the support polygon. The key quantity is the zero moment
point (ZMP), introduced by Miomir Vukobratovic in the late 1960s: the point on the ground where the
horizontal moment of the ground reaction forces is zero.
"""


def test_a_definition_in_apposition_leads() -> None:
    # The sample book's costmap and ZMP answers (issue 24, on 600b9fa) opened with the global costmap
    # and with dynamic walking: only "X is a ..." counted as a definition.
    costmap = answer("What is a costmap in Nav2?", hits_of(COSTMAPS, "nav.md"))
    zmp = answer("What is the zero moment point?", hits_of(DYNAMIC, "walk.md"))

    assert costmap.startswith("Planners do not work directly on the map. They use costmaps, grids in which"), costmap
    assert zmp.startswith("The key quantity is the zero moment point (ZMP), introduced by"), zmp
    assert not defines("Robots need sensors, actuators and controllers that work together.", "sensors")


THEORIES = """# Embodiment

## Extended Embodiment Framework

**The Affordance Theory:** The environment offers action possibilities (affordances) that are perceived by the
embodied agent. These affordances depend on both the properties of the environment and the capabilities of the
agent.

**Enactivism:** Intelligence emerges from the dynamic interaction between the agent and the environment, rather
than being an internal property of the agent alone.
"""


def test_a_definition_line_that_names_the_term_leads() -> None:
    # "What is enactivism" (textbook-2) opened with "These affordances depend on ...", the runner-up the book
    # puts first: only a defining verb or an appositive counted as a definition, not "**Term:** ...".
    enactivism = answer("what is enactivism", hits_of(THEORIES, "deep-dive.md"))

    assert enactivism.startswith("Enactivism: Intelligence emerges from the dynamic interaction"), enactivism
    assert defines("Latched topics: store the last published message.", "latched topic")
    assert not defines("Enactivism and affordances: two theories of embodiment.", "enactivism")


ROS_INSTALL = """# ROS 2 Basics

## Installation

The recommended approach is installing ROS 2 via packages: set up the sources, then install the packages.
"""

ISAAC_INSTALL = """# Isaac ROS

## Installation methods

Docker is the recommended way to get Isaac ROS running: pull the isaac-ros-dev image and start it.
"""


def test_a_page_that_never_says_a_name_of_the_question_does_not_lead() -> None:
    # Set C's "What is the recommended way to install Isaac ROS?" (issue 24, on 39e8891) opened with ROS 2's
    # own installation, ranked first; the Isaac ROS page answered second.
    hits = [*hits_of(ROS_INSTALL, "ros2/basics.md", 0.6), *hits_of(ISAAC_INSTALL, "isaac/ros.md", 0.55)]

    text = answer("What is the recommended way to install Isaac ROS?", hits)

    assert text.startswith("Docker is the recommended way to get Isaac ROS running"), text


POWER = """# Hardware

## Power requirements

- **Battery capacity**: Calculate it from the maximum current draw and the required runtime.
- **Voltage regulation**: Multiple rails (5V, 12V, 24V) for the different components.
"""


def test_talk_of_the_book_is_not_what_the_question_is_about() -> None:
    # Textbook-2's "What does the book say about powering the robot?" (issue 24, on dfadba8) was refused:
    # the book never says "book" or "say", two of its four words, so it read as off-book.
    def book_words(term: str) -> bool:
        return term not in {"book", "say", "textbook", "qiskit"}

    text = answer("What does the book say about powering the robot?", hits_of(POWER, "hw.md"), book_words)

    assert "Battery capacity" in text, text
    assert asked_about("According to the textbook, what does the book say about X?").split() == \
        [",", "what", "does", "about", "X?"]
    with pytest.raises(AssertionError):  # a name the book never uses, lower case too, makes it off-book
        answer("What does the book say about qiskit robots?", hits_of(POWER, "hw.md"), book_words)


WALKING = """# Bipedal locomotion and balance

Walking on two legs looks effortless for people, yet a walking humanoid robot must keep its balance at every step.

## The zero moment point

A walking robot keeps its balance as long as the zero moment point stays inside the support polygon of its feet.
"""

KNEES = """# Kinematics

## Singularities

Humanoid robot walking controllers usually keep the knees slightly bent so that the leg Jacobian stays
well-conditioned.
"""


def test_neither_another_page_off_the_question_nor_the_page_introduction_joins() -> None:
    # The demo's "How does a humanoid robot keep its balance while walking?" (issue 24, on 5755794) went on
    # with a knee-Jacobian aside from the kinematics page's "Singularities" and the locomotion page's
    # opening, "Walking on two legs looks effortless ...": neither says how balance is kept.
    hits = [*hits_of(WALKING, "walk.md", 0.6), *hits_of(KNEES, "kin.md", 0.6)]

    text = answer("How does a humanoid robot keep its balance while walking?", hits)

    assert text.startswith("A walking robot keeps its balance as long as the zero moment point"), text
    assert "knees" not in text and "effortless" not in text, text


HIVE = """# Hive

## Inspections

A keeper opens the hive once a week in summer to look for eggs and queen cells.

## Smoke

It masks the alarm scent of the guards, so the colony stays calm while the hive is open.
"""


def test_a_sentence_pointing_back_across_a_heading_names_its_section_not_the_sentence_before() -> None:
    # One chunk may hold two short sections: "It masks ..." was quoted as "A keeper opens the hive ... It masks
    # the alarm scent ...", the "it" read as the inspection of the section before.
    hits = hits_of(HIVE, "hive.md")
    assert len(hits) == 1
    smoke = [(c.label, c.text) for c in candidates(hits, QuestionShape.of("what does smoke do"))
             if "alarm scent" in c.text]

    assert smoke == [("Smoke", "It masks the alarm scent of the guards, so the colony stays calm while the hive is "
                               "open.")]


LAB = """# Practical Lab: Actions

## Long-running motions

### Analysis

- Measure how well the ROS 2 pattern reports progress on long-running tasks.
- Evaluate which pattern to use for long-running tasks that report progress.
"""

ACTIONS = """# Actions

## Understanding actions

Actions in ROS 2 provide a communication pattern for long-running tasks that require feedback and the ability
to be preempted.
"""


def test_an_exercise_part_under_a_bare_heading_never_leads() -> None:
    # Textbook-2's set C (cc01): "Which ROS 2 pattern should I use ...?" opened with a lab's "Analysis:" list when
    # a bare exercise heading was no longer read as scaffolding, and its follow-up lost "Actions".
    hits = [*hits_of(LAB, "lab.md", 0.7), *hits_of(ACTIONS, "actions.md", 0.5)]

    text = answer("Which ROS 2 pattern should I use for long-running tasks that report progress?", hits)

    assert text.startswith("Actions in ROS 2 provide a communication pattern"), text


SERVICE_TIPS = """# Services

## Performance considerations

Services block their caller, so the way a service is written decides how responsive the whole system stays.

- Keep service operations short (under a few seconds)
- For longer operations, consider using actions instead
- Use appropriate QoS settings for service communication
- Implement timeouts in clients to prevent hanging
"""


def test_the_item_that_answers_leads_its_list_s_other_items() -> None:
    # Textbook-2-blind: "how do i stop my service client from hanging forever ..." quoted two items of one list in
    # the book's order, the answer second; a list's items are parallel, their order says nothing about which answers.
    text = answer("how do i stop my service client from hanging forever when the server is slow",
                  hits_of(SERVICE_TIPS, "services.md"))

    assert text.startswith("Performance considerations — Implement timeouts in clients to prevent hanging."), text


def test_a_section_label_is_said_once_for_the_items_that_follow_it() -> None:
    # "Debugging Strategies — Check topic availability ... [1]. Debugging Strategies — Monitor message flow ... [1].
    # Debugging Strategies — Verify node connections ...": the heading once, then its items.
    text = answer("how do i stop my service client from hanging forever when the server is slow",
                  hits_of(SERVICE_TIPS, "services.md"))

    said = "Performance considerations — Keep service operations short (under a few seconds). [S1] For longer"
    assert said in text, text


def _lab(module: int, hours: str) -> str:
    return f"""---
title: "Module {module}: Practical Lab"
---

# Module {module}: Practical Lab

## Lab Duration

This lab is designed for {hours} hours of work, typically spread over three to four weeks.
"""


def test_a_numbered_name_the_question_gives_picks_its_own_page() -> None:
    # Every module's lab says the same sentence; "module 3" is the one asked about, though module 4's page
    # was retrieved first. A bare "3" is no name (nor a word the overlap counts): "module 3" is.
    hits = [*hits_of(_lab(4, "18-20"), "module-4/practical-lab.md", score=0.70),
            *hits_of(_lab(3, "18-22"), "module-3/practical-lab.md", score=0.66)]

    text = answer("how long is the module 3 practical lab?", hits)

    assert text.startswith("This lab is designed for 18-22 hours"), text
