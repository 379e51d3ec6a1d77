"""Unit tests for bookrag.text.sentence_splitter: one splitter, each caller's rules as options."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bookrag.text.sentence_splitter import SentenceSplitter, split_sentences

ALL_OPTIONS = [
    SentenceSplitter(closers=c, line_breaks=lb, sentence_start=s, abbreviations=a)
    for c, lb, s, a in itertools.product([False, True], repeat=4)
]


def test_default_breaks_after_a_stop_and_whitespace_only() -> None:
    plain = SentenceSplitter()
    assert plain.split("One. two!  Three?\nFour") == ["One.", "two!", "Three?", "Four"]
    assert plain.split("Pi is 3.14 today") == ["Pi is 3.14 today"]  # no whitespace after the dot
    assert plain.split('He said "stop." Then left.') == ['He said "stop." Then left.']
    assert plain.split("  \n ") == []


def test_closers_let_a_stop_sit_inside_a_quote_or_bracket() -> None:
    splitter = SentenceSplitter(closers=True)
    assert splitter.split('He said "stop." Then (it ended.) Done.') == [
        'He said "stop."', "Then (it ended.)", "Done."
    ]


def test_sentence_start_needs_a_word_that_can_open_a_sentence() -> None:
    splitter = SentenceSplitter(sentence_start=True)
    assert splitter.split("Lower. then Upper. `code` next. 2 more") == ["Lower. then Upper.", "`code` next.", "2 more"]


def test_abbreviations_and_initials_do_not_end_a_sentence() -> None:
    splitter = SentenceSplitter(sentence_start=True, abbreviations=True)
    assert splitter.split("Ask Dr. Smith and J. Doe. Use e.g. Gazebo. Done.") == [
        "Ask Dr. Smith and J. Doe.", "Use e.g. Gazebo.", "Done."
    ]
    # Read as one sentence, so the skipped break becomes one space; segments keep it as written.
    text = "See Dr.\n  Smith. Next"
    assert splitter.split(text) == ["See Dr. Smith.", "Next"]
    assert splitter.segments(text) == [("See Dr.\n  Smith.", " "), ("Next", "")]


def test_line_breaks_end_a_claim_and_keep_every_character() -> None:
    splitter = SentenceSplitter(line_breaks=True)
    text = "First claim [S1]\n\n- second. Third\tfour.  "
    assert splitter.segments(text) == [
        ("First claim [S1]", "\n\n"), ("- second.", " "), ("Third\tfour.", "  "), ("", "")
    ]
    assert splitter.split(text) == ["First claim [S1]", "- second.", "Third\tfour."]
    # Without the option a newline is only a break after a stop.
    assert SentenceSplitter().split("no stop\nhere. Next") == ["no stop\nhere.", "Next"]


def test_split_sentences_is_the_prose_reading() -> None:
    text = "Use a tool, e.g. Gazebo. It runs at 1.5 kHz. Then stop! Done?"
    assert split_sentences(text) == SentenceSplitter(sentence_start=True, abbreviations=True).split(text)


@pytest.mark.parametrize("splitter", ALL_OPTIONS, ids=repr)
def test_empty_text_is_one_empty_segment(splitter: SentenceSplitter) -> None:
    assert splitter.segments("") == [("", "")]
    assert splitter.split("") == []


@settings(max_examples=200, deadline=None)
@given(text=st.lists(st.sampled_from([*"aB1. !?\n\t\"')]", "e.g.", "Dr.", "J."]), max_size=40).map("".join),
       index=st.integers(0, len(ALL_OPTIONS) - 1))
def test_segments_rejoin_to_the_text_and_agree_with_split(text: str, index: int) -> None:
    splitter = ALL_OPTIONS[index]
    segments = splitter.segments(text)
    assert "".join(s + b for s, b in segments) == text
    assert all(b for _, b in segments[:-1]) and segments[-1][1] == ""
    if not splitter.abbreviations:
        assert splitter.split(text) == [s.strip() for s, _ in segments if s.strip()]
    else:
        assert [" ".join(s.split()) for s in splitter.split(text)] == [
            " ".join(s.split()) for s, _ in segments if s.strip()
        ]
