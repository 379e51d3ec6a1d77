"""A reader's own words (issue 37): typos respelt to the book's words, names told from English words, and the
page a request for a summary names. Pure functions, no store."""

from __future__ import annotations

from bookrag.answering.answerers.questions import respell, summary_subject
from bookrag.answering.answerers.summary import book_opening, names_the_book, page_named
from bookrag.text.lexicon import abbreviates, closest, english


def test_a_typo_is_the_book_word_it_misspells() -> None:
    book = {"reducer", "dispatching", "difference", "should", "normalized", "humanoid"}
    assert closest("reducr", book) == "reducer"
    assert closest("dispatchng", book) == "dispatching"
    assert closest("diffrence", book) == "difference"
    assert closest("shoud", book) == "should"
    assert closest("normalised", book) == "normalized"
    assert closest("humaniod", book) == "humanoid"


def test_a_name_is_never_respelt_into_another_word() -> None:
    # Typing errors keep the first letter: "preact" is not a typo of "react".
    assert closest("preact", {"react", "reactive"}) is None
    assert closest("svelte", {"selector", "state", "settle"}) is None
    assert closest("wat", {"what"}) is None  # too short to tell


def test_a_hyphenated_typo_is_respelt_part_by_part() -> None:
    book = frozenset({"co", "simulation", "digital", "twins", "readme", "topic"})
    assert respell("whats co-simulaton in digital twins", (), lambda: book) == "whats co-simulation in digital twins"
    # A prefixed English word is the reader's, not a typo of the book's nearest word.
    assert respell("how do I rename a topic", (), lambda: book) == "how do I rename a topic"
    # Another form of a book word is not a typo of it.
    assert respell("teleoperated demos", (), lambda: frozenset({"teleoperation"})) == "teleoperated demos"


def test_a_readers_short_form_is_the_long_word_the_passages_write() -> None:
    assert abbreviates("std", lambda: {"the", "standard", "json"})
    assert abbreviates("deps", lambda: {"optional", "dependencies"})
    # Not a word only twice as long ("ros" in "routes"), nor one whose first two letters differ, nor letters out of
    # the word's order;
    assert not abbreviates("ros", lambda: {"routes", "robots"})
    assert not abbreviates("grpc", lambda: {"graphics"})
    assert not abbreviates("mqtt", lambda: {"message", "queue"})
    assert not abbreviates("dsp", lambda: {"dependencies"})
    assert not abbreviates("svelte", lambda: {"sveltekit-components"})


def test_english_words_are_not_names() -> None:
    for word in ("really", "shrink", "workout", "drawbacks", "downsides", "cheapest", "human-shaped", "beginner",
                 "rename", "unmount", "preload"):
        assert english(word), word
    for name in ("svelte", "kalibr", "jotai", "pinia", "vuex", "valtio", "redux"):
        assert not english(name), name


def test_a_dictionary_word_is_english_and_two_glued_into_a_name_are_not() -> None:
    # WordPiece splits "lag", "flaky", "gist"; a dictionary lists them, and "beginner" and "configure" whole.
    for word in ("lag", "lags", "flaky", "gist", "validate", "toolkit", "beginner", "configure"):
        assert english(word), word
    # Two words glued into a name ("ether" + "cat", "pre" + "act") are not one English word.
    for name in ("ethercat", "raisim", "preact", "feetech", "replicator"):
        assert not english(name), name


def test_a_request_for_a_summary_names_its_subject() -> None:
    assert summary_subject("can you summarize module 3 for me") == "module 3 for me"
    assert summary_subject("tl;dr of the unity chapter pls") == "the unity chapter pls"
    assert summary_subject("what's the essentials tutorial part 6 about") == "the essentials tutorial part 6"
    assert summary_subject("give me the gist of the code splitting page") == "the code splitting page"
    assert summary_subject("what does a robot need to walk") == ""
    assert summary_subject("What is a reducer?") == ""


def test_a_summary_asked_with_a_clause_after_about_still_names_its_subject() -> None:
    assert summary_subject("what is the capstone project about, short version") == "the capstone project"
    assert summary_subject("whats module 2 about? quick overview pls") == "module 2"
    assert summary_subject("what does module 3 cover - in a nutshell") == "module 3"
    # "about" that does not end its clause asks about something, not for a summary.
    assert summary_subject("what is special about gazebo, briefly?") == ""
    assert summary_subject("what is the chapter about robots") == ""


PAGES = [("intro.md", "Welcome"),
         ("guide/part-1-tools.md", "Part 1: Tools"),
         ("guide/part-3-baking.md", "Part 3: Shaping and Baking"),
         ("guide/part-3-troubleshooting.md", "Part 3 appendix: Troubleshooting"),
         ("style/style-guide.md", "Style Guide")]


def test_the_page_a_summary_names_has_its_numbers_and_most_of_its_words() -> None:
    assert page_named("part 3", PAGES) == "guide/part-3-baking.md"  # the first of the part's pages
    assert page_named("the style guide", PAGES) == "style/style-guide.md"
    assert page_named("part 6", PAGES) is None  # "part 3" is not "part 6"
    assert page_named("the bread oven chapter", PAGES) is None


# A number belongs to the word before it: the third chapter of part 1 is not part 3, whatever the book's order.
NUMBERED = [
    ("intro.md", "Welcome"),
    ("part-1-basics/chapter-3.md", "Chapter 3: Kneading by Hand"),
    ("part-3-baking/overview.md", "Part 3: Shaping and Baking"),
    ("part-3-baking/chapter-1.md", "Chapter 1: Shaping"),
]


def test_a_numbered_subject_names_the_page_with_that_number_on_that_word() -> None:
    modules = [(source.replace("part", "module"), title) for source, title in NUMBERED]
    assert page_named("module 3", modules) == "module-3-baking/overview.md"
    assert page_named("part 3", NUMBERED) == "part-3-baking/overview.md"
    assert page_named("chapter 3", NUMBERED) == "part-1-basics/chapter-3.md"


def test_a_numbered_subject_naming_no_page_names_none() -> None:
    assert page_named("part 7", NUMBERED) is None
    assert page_named("the croissant recipes", NUMBERED) is None


def test_among_pages_naming_the_subject_alike_the_folders_own_page_sums_it_up() -> None:
    pages = [("module-3-sim/assignment.md", "Module 3: Assignment"), ("module-3-sim/chapter-1.md", "Chapter 1: Gazebo"),
             ("module-3-sim/overview.md", "Module 3: Simulation")]
    assert page_named("module 3", pages) == "module-3-sim/overview.md"


def test_a_summary_of_the_book_itself_names_the_book() -> None:
    for subject in ("this whole course", "the docs pls", "this book", "the entire textbook", "the documentation"):
        assert names_the_book(subject, PAGES), subject
    # A subject that names a page's words besides the book is that page's, whatever it calls the book.
    pages = [*PAGES, ("course/schedule.md", "Course Schedule")]
    for subject in ("module 3", "the style guide", "the course schedule", "the docs on baking", ""):
        assert not names_the_book(subject, pages), subject


def test_the_book_opens_with_its_docs_folders_own_page() -> None:
    pages = [("appendix/glossary.md", "Glossary"), ("intro.md", "Welcome"), ("guide/overview.md", "Guide Overview")]
    assert book_opening(pages)[0] == "intro.md"  # not the first in order, nor a folder's overview


def test_without_an_own_page_the_book_opens_with_its_introduction_folder() -> None:
    # A site without sidebar positions: pages in name order, the FAQ first, the introduction's link list and
    # pages after the API reference.
    pages = [("FAQ.md", "FAQ Index"), ("api/overview.md", "API Overview"), ("introduction/Basics.md", "Basics"),
             ("introduction/README.md", "Introduction"), ("usage/index.md", "Usage Guides")]
    assert book_opening(pages) == ["introduction/README.md", "introduction/Basics.md", "FAQ.md"]
