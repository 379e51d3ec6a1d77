"""Which page "summarize part N" names (issue 37): a number belongs to the word before it, so the third
chapter of part 1 is not part 3, whatever the book's order."""

from __future__ import annotations

from bookrag.answering.answerers.summary import page_named

PAGES = [
    ("intro.md", "Welcome"),
    ("part-1-basics/chapter-3.md", "Chapter 3: Kneading by Hand"),
    ("part-3-baking/overview.md", "Part 3: Shaping and Baking"),
    ("part-3-baking/chapter-1.md", "Chapter 1: Shaping"),
]


def test_a_numbered_subject_names_the_page_with_that_number_on_that_word() -> None:
    assert page_named("module 3", [(s.replace("part", "module"), t) for s, t in PAGES]) == "module-3-baking/overview.md"
    assert page_named("part 3", PAGES) == "part-3-baking/overview.md"
    assert page_named("chapter 3", PAGES) == "part-1-basics/chapter-3.md"


def test_a_subject_naming_no_page_names_none() -> None:
    assert page_named("part 7", PAGES) is None
    assert page_named("the croissant recipes", PAGES) is None


def test_among_pages_naming_the_subject_alike_the_folders_own_page_sums_it_up() -> None:
    pages = [("module-3-sim/assignment.md", "Module 3: Assignment"), ("module-3-sim/chapter-1.md", "Chapter 1: Gazebo"),
             ("module-3-sim/overview.md", "Module 3: Simulation")]
    assert page_named("module 3", pages) == "module-3-sim/overview.md"
