"""Span citations: offsets slice the chunk text to the quote exactly; text fragments are encoded per spec."""

from __future__ import annotations

from urllib.parse import unquote

import pytest

from bookrag.answering.answerers.spans import (
    encode_fragment_value,
    fragment_directive,
    fragment_url,
    make_quote,
    quotes_for,
)
from bookrag.domain.models import ChunkPayload, SearchHit
from bookrag.text.sentences import extract_units

CHUNK = """Costmaps

Planners use **costmaps**, grids in which every cell holds a cost. See [the docs](https://example.org).
A `local_costmap` follows the robot.

Each costmap is built from layers:

- **Static layer** — occupancy from the saved map.
- **Obstacle layer** — marks obstacles seen by LiDAR.

It must be initialised once per machine:

```bash
sudo rosdep init
rosdep update
```
"""
URL = "http://localhost:3000/docs/nav#costmaps"


def hit(text: str = CHUNK, url: str = URL) -> SearchHit:
    return SearchHit(chunk_id="c1", score=0.5, rank_score=0.5,
                     payload=ChunkPayload.from_dict({"content_text": text, "source_url": url,
                                                     "section_heading": "Costmaps"}))


def test_every_unit_span_slices_the_raw_text_it_reads() -> None:
    units = extract_units(CHUNK, {"Costmaps"})
    by_text = {u.text: CHUNK[u.start:u.end] for u in units}

    assert by_text["Planners use costmaps, grids in which every cell holds a cost."] == \
        "Planners use **costmaps**, grids in which every cell holds a cost."
    assert by_text["See the docs."] == "See [the docs](https://example.org)."
    assert by_text["Static layer — occupancy from the saved map."] == "**Static layer** — occupancy from the saved map."
    lead = next(u for u in units if u.text == "Each costmap is built from layers:")
    assert CHUNK[lead.start:lead.end].endswith("marks obstacles seen by LiDAR.")
    assert [CHUNK[a:b] for a, b in lead.item_spans] == ["**Static layer** — occupancy from the saved map.",
                                                        "**Obstacle layer** — marks obstacles seen by LiDAR."]
    commands = next(u for u in units if u.text == "It must be initialised once per machine:")
    assert commands.items == ("sudo rosdep init", "rosdep update")  # a short command block is its list


def test_quotes_carry_exact_offsets() -> None:
    h = hit()
    units = extract_units(CHUNK, {"Costmaps"})
    quotes = quotes_for(h, [(u.start, u.end) for u in units] + [(units[0].start, units[0].end)])

    assert len(quotes) == len({(u.start, u.end) for u in units})  # each span once, in reading order
    assert [q.start for q in quotes] == sorted(q.start for q in quotes)
    for q in quotes:
        assert CHUNK[q.start:q.end] == q.text
    assert make_quote(h, 5, 5) is None and make_quote(h, 0, len(CHUNK) + 1) is None


@pytest.mark.parametrize(("value", "encoded"), [
    ("best-effort", "best%2Deffort"),
    ("A & B, C", "A%20%26%20B%2C%20C"),
    ("Denavit–Hartenberg", "Denavit%E2%80%93Hartenberg"),
    ("50% off #1?", "50%25%20off%20%231%3F"),
    ("don't (really)", "don't%20(really)"),
])
def test_fragment_values_encode_dash_ampersand_comma_and_unsafe_characters(value: str, encoded: str) -> None:
    assert encode_fragment_value(value) == encoded
    assert unquote(encoded) == value


def test_short_quote_is_matched_whole_and_long_one_as_a_range() -> None:
    short = "A `local_costmap` follows the robot."
    assert fragment_directive(short) == "text=A%20local_costmap%20follows%20the%20robot."

    long = "Planners use **costmaps**, grids in which every cell holds a cost and more words here."
    assert fragment_directive(long) == "text=Planners%20use%20costmaps%2C%20grids,and%20more%20words%20here."

    listed = "Each costmap is built from layers:\n\n- **Static layer** — occupancy.\n- **Obstacle layer** — LiDAR."
    start, end = fragment_directive(listed).removeprefix("text=").split(",")
    assert unquote(start) == "Each costmap is built" and unquote(end) == "Obstacle layer — LiDAR."

    row = "| tiny | 39 M | Jetson, fastest |"
    assert fragment_directive(row) == "text=tiny,Jetson%2C%20fastest"


def test_fragment_url_keeps_the_section_anchor() -> None:
    assert fragment_url(URL, "Nav2 keeps two costmaps.") == URL + ":~:text=Nav2%20keeps%20two%20costmaps."
    assert fragment_url("http://x/docs/a", "Nav2 keeps two costmaps.") == \
        "http://x/docs/a#:~:text=Nav2%20keeps%20two%20costmaps."
    assert fragment_url(URL, "```") == URL  # nothing renders: no directive


# --- the start is unique on the page: the browser highlights the first match ---------------------------


def test_a_start_that_occurs_earlier_on_the_page_grows_until_it_does_not() -> None:
    raw = "Verification: all components work together and the robot stands on its own."
    before = "Quiz\n\n- Verification: all components work together in simulation"

    directive = unquote(fragment_directive(raw, before))

    # The quiz option above shares its first six words: the start takes the seventh too.
    assert directive.removeprefix("text=").split(",")[0] == "Verification: all components work together and"
    assert unquote(fragment_directive(raw, "")).split(",")[0] == "text=Verification: all components work"


def test_a_line_that_occurs_earlier_whole_gets_the_words_before_it_as_prefix() -> None:
    raw = "Run the launch file."
    before = "Lab 1\n\nRun the launch file.\n\nLab 2\n\nThen, when the map is saved:"

    directive = fragment_directive(raw, before)

    prefix, start = directive.removeprefix("text=").split(",")
    assert unquote(prefix) == "map is saved:-"
    assert unquote(start) == "Run the launch file."


def test_a_quote_never_starts_with_its_heading_s_text() -> None:
    heading_line = fragment_directive("### Instructions\n\nCreate a simple robot model in URDF with two links.",
                                      "", "Instructions")
    label = fragment_directive("Instructions: Create a simple robot model in URDF with two links.", "",
                               "Instructions")

    for directive in (heading_line, label):
        assert unquote(directive).startswith("text=Create a simple robot model"), directive


def test_a_unique_start_is_unchanged() -> None:
    raw = "Planners use costmaps, grids in which every cell holds a cost and the robot avoids the high ones."
    assert fragment_directive(raw, "Navigation\n\nSomething else entirely.") == fragment_directive(raw)


def test_a_heading_kept_as_a_plain_line_in_the_chunk_is_not_the_start() -> None:
    raw = "Technical Support\n\n- Direct manufacturer support for specialized components\n- Community support"

    directive = unquote(fragment_directive(raw, "", "Maintenance and Upgrades"))

    assert directive.startswith("text=Direct manufacturer support"), directive


def test_a_prefix_never_spans_more_than_the_block_above() -> None:
    before = "| Platform | Traditional Approaches |\n|---|---|\n| Execution Time | Short |"
    directive = unquote(fragment_directive("| Execution Time | Long |", before))

    prefix = directive.removeprefix("text=").split(",")[0]
    assert prefix == "Short-", directive  # one table cell: a match cannot cross cells


def test_a_list_item_under_a_heading_that_the_sidebar_also_lists_links_to_its_section_only() -> None:
    before = "Chapter 1: Introduction to ROS 2 Architecture\nChapter 2: Topics\n\nModule Structure\n\n- "

    assert fragment_directive("Chapter 1: Introduction to ROS 2 Architecture", before) == ""
    assert fragment_url(URL, "Chapter 1: Introduction to ROS 2 Architecture", before) == URL


QUOTED = """The ZMP criterion states:

> As long as the ZMP stays strictly inside the support polygon, the foot will not
> tip over its edge.

- Give every link a realistic `<inertial>` block, never <b>bare</b> ones.
"""


def test_a_blockquote_reads_as_the_words_the_page_shows_and_inline_code_keeps_its_tags() -> None:
    # The '>' marker stayed in the quoted statement, and `<inertial>` became "` `" (issue 24, on 600b9fa):
    # neither is what the page shows, so a reader saw it and the fragment link matched nothing.
    units = extract_units(QUOTED)
    texts = [u.text for u in units]

    assert texts == ["The ZMP criterion states: As long as the ZMP stays strictly inside the support polygon, "
                     "the foot will not tip over its edge.",
                     "Give every link a realistic `<inertial>` block, never bare ones."]
    assert QUOTED[units[0].start:units[0].end] == QUOTED[:QUOTED.index("\n\n-")]
    start, end = fragment_directive(QUOTED[units[0].start:units[0].end]).removeprefix("text=").split(",")
    assert unquote(start) == "The ZMP criterion states:" and unquote(end) == "tip over its edge."
    assert unquote(fragment_directive(QUOTED[units[1].start:units[1].end])) == \
        "text=Give every link a realistic <inertial> block, never bare ones."


REFERENCED = """Introduction

Starlette is a lightweight [ASGI][asgi] framework/toolkit, which is ideal for building async web services.

Read the value with `response.extensions["http.response.debug"]["rows"]` or `rows[0][1]`.
"""


def test_a_reference_link_reads_as_its_text_and_an_index_in_code_stays() -> None:
    # Starlette's docs (MkDocs) write links by reference: the answer quoted "a lightweight [ASGI][asgi] framework",
    # which the page does not show, so its fragment link matched nothing.
    units = extract_units(REFERENCED)

    assert [u.text for u in units] == [
        "Starlette is a lightweight ASGI framework/toolkit, which is ideal for building async web services.",
        'Read the value with `response.extensions["http.response.debug"]["rows"]` or `rows[0][1]`.']
    directive = unquote(fragment_directive(REFERENCED[units[0].start:units[0].end]))
    assert directive == "text=Starlette is a lightweight,building async web services."
