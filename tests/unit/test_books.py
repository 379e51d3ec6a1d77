"""Book ids, the names books live under, the books a key holds, and how a request's book is chosen (issue 38)."""

from __future__ import annotations

import pytest

from bookrag.adapters.dynamodb import _record, record_item
from bookrag.auth.guard import Guard
from bookrag.auth.keys import mint_key
from bookrag.auth.memory import InMemoryCounter, InMemoryKeyStore
from bookrag.config.settings import load_settings
from bookrag.domain.books import DEFAULT_BOOK, book_of, books_among, collection_of, current_book, reading_book
from bookrag.errors import BookNotAllowedError, BookNotFoundError, ConfigError
from bookrag.web.middleware.book import _named_in_body, choose_book
from tests.support.aws import FakeClock


def test_the_default_book_keeps_the_collection_and_another_book_its_own_name() -> None:
    assert collection_of("book_chunks", DEFAULT_BOOK) == "book_chunks"
    assert collection_of("book_chunks", "redux") == "book_chunks--redux"
    assert [book_of("book_chunks", n) for n in ("book_chunks", "book_chunks--redux", "other--redux",
                                                "book_chunks--Bad", "book_chunks--default")] == \
        [DEFAULT_BOOK, "redux", None, None, None]
    names = ["book_chunks--redux", "book_chunks", "book_chunks--bees", "unrelated", "book_chunks--a--b"]
    assert books_among("book_chunks", names) == [DEFAULT_BOOK, "bees", "redux"]


def test_a_request_reads_the_default_book_unless_a_book_is_set() -> None:
    assert current_book() == DEFAULT_BOOK
    with reading_book("bees"):
        assert current_book() == "bees"
    assert current_book() == DEFAULT_BOOK


def test_a_key_holds_its_books_in_memory_in_dynamodb_and_in_its_setting_entry() -> None:
    _, record = mint_key("publisher", books=["bees", "redux", "bees"])
    assert record.books == ("bees", "redux")
    assert record.setting_entry().endswith("#bees|redux")
    assert InMemoryKeyStore.from_setting(record.setting_entry()).get(record.key_id).books == ("bees", "redux")  # type: ignore[union-attr]
    assert _record(record_item(record)) == record
    load_settings(api_key_hashes=record.setting_entry())  # a valid entry

    _, before_books = mint_key("old")
    assert before_books.books == () and "#" not in before_books.setting_entry()
    assert "books" not in record_item(before_books)


@pytest.mark.parametrize("books", [["Bees"], ["a--b"], ["-bees"], [""]])
def test_a_malformed_book_id_is_refused_at_minting(books: list[str]) -> None:
    with pytest.raises(ValueError, match="book id"):
        mint_key("x", books=books)


def test_a_publishable_key_holds_exactly_one_book() -> None:
    with pytest.raises(ValueError, match="exactly one book"):
        mint_key("site", origins=["https://book.example"], books=["bees", "redux"])
    plaintext, record = mint_key("site", origins=["https://book.example"], books=["bees"])
    guard = Guard(InMemoryKeyStore([record]), InMemoryCounter(), rate_limit_per_minute=10,
                  failure_limit_per_minute=5, clock=FakeClock())
    assert guard.admit(plaintext, "203.0.113.7", origin="https://book.example", path="/api/answer").books == ("bees",)


def test_a_setting_entry_with_a_malformed_book_is_a_config_error() -> None:
    _, record = mint_key("x")
    with pytest.raises(ConfigError):
        load_settings(api_key_hashes=record.setting_entry() + "#Not_A_Book")


def test_choosing_a_book() -> None:
    known = lambda: ["default", "bees", "redux"]  # noqa: E731

    assert choose_book(("bees",), None, known) == "bees"  # the key's first book
    assert choose_book(("bees", "redux"), "redux", known) == "redux"
    assert choose_book(None, None, known) == DEFAULT_BOOK  # keys off
    assert choose_book(None, "redux", known) == "redux"
    assert choose_book(("default",), None, lambda: []) == DEFAULT_BOOK  # the store is not asked for it
    with pytest.raises(BookNotAllowedError):
        choose_book(("bees",), "redux", known)
    for unknown in ("nope", "Bees", "", "bees/../redux"):
        with pytest.raises(BookNotFoundError):
            choose_book(("bees",), unknown, known)


def test_the_body_field_is_taken_out_and_nothing_else_is_touched() -> None:
    assert _named_in_body(b'{"query": "q", "book": "bees"}') == ("bees", b'{"query": "q"}')
    for body in (b'{"query": "q"}', b'not json "book"', b'["book"]', b'{"query": "book"}'):
        assert _named_in_body(body) == (None, body)
    with pytest.raises(BookNotFoundError):
        _named_in_body(b'{"query": "q", "book": ["bees"]}')
