"""The answerable-or-refuse gate (issue 24): a short labelled section is answered, off-book stays refused.

A hand-made book lists physics engines as `### Simbody` followed by `- **Pros**: ...` / `- **Cons**: ...`
beside long prose sections. A heading and two bullets embed weakly: "What is bad about ODE?" finds
the ODE section first, yet below the agent's threshold (so the answerer was never asked), and "What
are the downsides of Simbody?" uses a word the book never does ("downsides"), which counted as
off-book. The section's heading names the question's subject: that is the evidence the gate weighs.
"""

from __future__ import annotations

import pytest

from bookrag.answering.agent import BookRAGAgent
from bookrag.answering.answerers import build_answerer
from bookrag.answering.gate import labels, weigh
from bookrag.config.settings import Settings
from bookrag.contracts.agent import REFUSAL
from bookrag.domain.models import ChunkPayload, SearchHit
from bookrag.retrieval.retriever import SearchOptions
from bookrag.services.container import container_for
from tests.support.books import ingest_pages

ENGINES = """---
title: Physics Engines for Robot Simulation
---

# Physics Engines for Robot Simulation

A simulator is only as trustworthy as the physics engine underneath it. The engine integrates the
equations of motion of every rigid body, detects contacts between shapes and resolves the forces at
those contacts, step after step. Choosing one is a trade between speed, stability and accuracy, and
the right choice depends on whether you are training a walking policy or validating a gripper.

## Choosing an engine

Gazebo can load several engines through a plugin interface, so the same world file runs on each of
them. Start with the default engine, measure how your robot behaves, and switch only when a concrete
problem appears, such as feet sliding on the ground or a stack of boxes that never settles.

### ODE

- **Pros**: Fast, stable for most wheeled robots, the long-standing default in Gazebo
- **Cons**: Contact handling is approximate, so feet can slide during walking

### Bullet

- **Pros**: Good collision detection, widely used in games and reinforcement learning
- **Cons**: Less accurate joint constraints for long kinematic chains

### Simbody

- **Pros**: Highly accurate, good for biomechanical simulation
- **Cons**: Complex setup, slower for simple scenarios

### DART

- **Pros**: Accurate contact dynamics, handles closed kinematic loops
- **Cons**: Fewer tutorials and a smaller community

## Time steps

The physics step size sets how far the simulation advances per update. A smaller step is more
stable for stiff contacts such as a foot striking the floor, but each simulated second then costs
more computation. A common starting point is one millisecond, with a real-time factor of one so
that simulated time keeps pace with the wall clock.
"""
SENSORS = """---
title: Simulated Sensors
---

# Simulated Sensors

Simulated sensors publish the same ROS 2 messages as real ones, which lets perception code run
unchanged on the robot. A camera plugin renders the scene from the sensor's pose, a depth camera
adds a range image, and an inertial measurement unit reports angular velocity and linear
acceleration from the simulated body's motion.

## Noise models

Real sensors are noisy, and a perception stack trained only on perfect data fails on hardware.
Gaussian noise on every reading, with a bias that drifts slowly, is the usual first model; the
noise parameters should be measured on the real sensor rather than guessed.
"""


@pytest.fixture(scope="module")
def engines_book(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    settings, report = ingest_pages(tmp_path_factory.mktemp("engines"),
                                    {"physics-engines.md": ENGINES, "sensors.md": SENSORS}, llm_provider="extractive")
    assert report.chunks_total > 0
    return settings


@pytest.fixture(scope="module")
def agent(engines_book: Settings) -> BookRAGAgent:
    retriever = container_for(engines_book).retriever
    return BookRAGAgent(engines_book, retriever, build_answerer(engines_book, retriever, None))


def test_a_short_section_below_the_threshold_is_answered(agent: BookRAGAgent) -> None:
    question = "What is bad about ODE?"
    nearest = agent.retriever.search(question, SearchOptions(top_k=6, min_score=0.0)).hits
    assert nearest[0].section_heading == "ODE" and nearest[0].score < 0.33  # first, but under the threshold

    response = agent.run(question)

    assert not response.is_refusal
    assert "feet can slide" in response.answer
    assert response.sources[0].section == "ODE"


def test_a_word_the_book_never_uses_does_not_make_a_labelled_subject_off_book(agent: BookRAGAgent) -> None:
    response = agent.run("What are the downsides of Simbody?")

    assert not response.is_refusal, response.refusal_reason
    assert "Complex setup" in response.answer
    assert {s.section for s in response.sources} == {"Simbody"}


@pytest.mark.parametrize("question", ["What are the downsides of MuJoCo?", "How do I bake sourdough bread?",
                                      "Write me a poem about robots"])
def test_off_book_questions_are_still_refused(agent: BookRAGAgent, question: str) -> None:
    response = agent.run(question)

    assert response.is_refusal and response.answer == REFUSAL


def _hit(text: str, heading_path: tuple[str, ...], title: str = "Guide") -> SearchHit:
    payload = ChunkPayload(chunk_id="c", content_text=text, source_file="guide.md", source_url="/guide",
                           module_name="", section_heading=heading_path[-1], heading_path=heading_path,
                           doc_title=title, chunk_index=0, total_chunks=1, token_count=len(text.split()),
                           page_number=1, created_at=0.0, content_hash="", file_hash="")
    return SearchHit(chunk_id="c", score=0.2, rank_score=0.0, payload=payload)


def test_labels_are_own_headings_list_labels_and_row_names_not_the_page_title() -> None:
    hit = _hit("- **Vendor Lock-in**: dependence on one vendor\n\n| Engine | Accuracy |\n|---|---|\n| Simbody | high |",
               ("Guide", "Costs"))

    assert labels(hit) == {"cost", "vendor", "lock-in", "engin", "simbodi"}
    evidence = weigh("What is vendor lock-in in the guide?", [hit])[0]
    assert evidence.labelled == ("vendor", "lock-in") and evidence.share == pytest.approx(2 / 3)
    assert evidence.score == pytest.approx(0.2 + 0.3 * 2 / 3)
