"""A reader asks for a thing's "downsides" or "drawbacks"; the book files them under "Disadvantages", "Cons"
or "Limitations" (issue 24). Each test fails on the answerer and the query encoder of db4e990, which
matched only the words as written (the "hard" facet and the list's owner: on c89b480)."""

from __future__ import annotations

from bookrag.text.bm25 import BM25Encoder, term_id
from bookrag.text.facets import facet_stems, facets, without_facet_words
from tests.support.answers import answer, hits_of

HOSTING = """# Where the robot's computer runs

## Remote servers

### Advantages

- **Capacity**: Many graphics cards can be rented for a training run and returned afterwards.
- **Reach**: Every team member can open the same machines from anywhere in the world.

### Disadvantages

- **Lag**: Every command crosses the internet, so a balance loop waits on the slowest packet.
- **Outages**: A lost connection leaves the robot without its planner until the link returns.

## Machines in the lab

### Advantages

- **Speed**: A cable of two metres keeps the control loop's delay under a millisecond.

## Splitting the work between both

### Challenges

- **Two setups**: Every library is installed and patched in two places instead of one.
- **Drift**: Logs and maps recorded in the lab must be copied to the servers before each run.
"""

OVERVIEW = """# Training in simulation

## Why train in simulation

Simulators made for training neural policies let a robot practise for years of simulated time in one night.
"""

SIMULATORS = """# Simulators

## Learning-oriented simulators

These simulators are built to train neural policies at scale:

- **Examples**: Gym-style worlds and photoreal engines with learning plugins.
- **Strengths**: Thousands of parallel worlds and labelled images for free.
- **Limitations**: Demand a large graphics card and a long setup before the first run.

"""


def test_a_verdict_word_is_its_facet() -> None:
    assert facets("What are the downsides of remote servers?") == {"~cons"}
    assert facets("Disadvantages") == facets("- **Limitations**: slow") == facets("Cons") == {"~cons"}
    assert facets("Benefits of a hybrid setup") == facets("Pros") == {"~pros"}
    assert facets("What makes mixing both hard?") == facets("Challenges") == {"~hard"}
    # Its comparative too: "why is controlling a humanoid so much harder ..." asks for "Challenges in Humanoid Control".
    assert facets("why is a humanoid so much harder to control") == facets("the hardest part") == {"~hard"}
    assert facets("hardware") == set()


def test_a_facet_word_without_governs_is_not_asked_for() -> None:
    # "without writing my own .srv file" asks for the built-in types; its "my own" lifted "Custom Service Types".
    assert facets("which built-in service types can i use without writing my own .srv file") == set()
    assert facets("there are no downsides to it") == set()
    # A negative question still asks for the side.
    assert facets("aren't there any downsides?") == {"~cons"}
    assert facets("isn't it hard to tune?") == {"~hard"}
    # Whole words only: "constant" is not "cons", "limits" not "limitations".
    assert facets("a constant limit on the prose") == set()
    assert without_facet_words("the downsides of servers").split() == ["the", "of", "servers"]


def test_the_query_finds_the_books_word_for_the_readers() -> None:
    wanted = BM25Encoder().encode_query("What are the downsides of cloud computing?", facet_stems("downsides"))
    assert term_id("disadvantag") in wanted.indices
    # A stem that ordinary words share ("limits", "weak") is not added: it would match them too.
    assert "limit" not in facet_stems("drawbacks") and "weak" not in facet_stems("drawbacks")


def test_downsides_lead_with_the_disadvantages_section() -> None:
    text = answer("What are the downsides of running the robot's computer on remote servers?",
                  hits_of(HOSTING, "hosting.md"))
    # The list is named by whose side it gives, not only "Disadvantages".
    assert text.split("\n")[0].startswith("Remote servers — Disadvantages:"), text
    assert "Lag" in text.split("\n\n")[1] and "Capacity" not in text, text


def test_drawbacks_lead_with_the_list_that_holds_the_limitations() -> None:
    text = answer("What are the drawbacks of simulators made for training neural policies?",
                  [*hits_of(OVERVIEW, "overview.md", 0.62), *hits_of(SIMULATORS, "simulators.md", 0.6)])
    assert text.startswith("Learning-oriented simulators — These simulators are built to train"), text
    assert "Limitations: Demand a large graphics card" in text, text


def test_what_makes_it_hard_leads_with_its_challenges() -> None:
    text = answer("What makes splitting the robot's computing between lab and servers hard?",
                  hits_of(HOSTING, "hosting.md"))
    assert text.startswith("Splitting the work between both — Challenges:"), text


ONSITE = """# Lab computing

## Keeping computers on site

### Advantages

- **Short cables**: The control loop never leaves the building, so its delay stays under a millisecond.

## Exercise: measure your loop

Record the loop's delay for ten minutes and plot it against the time of day in the robot's building.
"""


def test_why_would_someone_keep_x_asks_for_its_advantages() -> None:
    assert facets("Why would a lab keep its computers on site?") == {"~pros"}
    assert facets("Why would a robot fall over?") == set()
    text = answer("Why would a lab keep its robot's computers in the building?", hits_of(ONSITE, "onsite.md"))
    assert text.startswith("Keeping computers on site — Advantages:"), text


STANDARD = """# Messages

## Standard message types

The middleware ships standard message types for points, poses and images in its common packages.
"""

CUSTOM = """# Message definitions

## Custom message types

Custom messages are declared in a `.msg` file, one typed field per line, and built with the package.
"""


def test_my_own_is_the_books_custom() -> None:
    assert facets("How do I define my own message type?") == facets("Custom message types") == {"~custom"}
    assert facets("The robot runs on its own battery") == set()
    text = answer("How do I declare my own message type?",
                  [*hits_of(STANDARD, "standard.md", 0.62), *hits_of(CUSTOM, "custom.md", 0.6)])
    assert text.startswith("Custom messages are declared"), text


SIMULATOR = """# The simulator

## Key features

- **Physics engine**: Based on a physics library, offering several backends with accurate contact simulation.
- **Sensor simulation**: Cameras, LIDAR and IMUs with realistic noise on the simulated robot.

## Architecture overview

The simulator has a modular architecture consisting of:

- **Server**: Core simulation engine that handles physics, sensors and plugins.
- **Client**: User interface for visualization and interaction with the simulated world.
"""


def test_made_of_is_the_books_consisting_of() -> None:
    # Textbook-2's "What is Gazebo Harmonic made of, ...?" (issue 24, on d1c8a97) opened with its Key
    # Features: nothing told the reader's "made of" from the book's "consisting of".
    assert facets("What is the simulator made of?") == facets("a modular architecture consisting of:") == {"~parts"}

    text = answer("What is the simulator made of?", hits_of(SIMULATOR, "sim.md"))

    assert text.startswith("The simulator has a modular architecture consisting of:"), text
