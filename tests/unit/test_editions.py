"""Which edition of a site a request reads (issue 35): the locale and version it names, else the site's
default, with what it fell back from; and words of any script as search and grounding terms."""

from __future__ import annotations

from bookrag.domain.edition import BookEditions, Wanted, resolve
from bookrag.text.bm25 import tokenize
from bookrag.text.claims import claim_terms
from bookrag.text.sentence_splitter import SentenceSplitter

SITE = BookEditions(frozenset({"en", "ur"}), frozenset({"current", "2.0"}), "en", "current")


def test_a_named_locale_and_version_are_read_a_language_tag_by_its_language() -> None:
    found = resolve(SITE, Wanted("ur-PK", "2.0"))
    assert (found.locale, found.version, found.fallbacks, found.note) == ("ur", "2.0", (), None)
    assert resolve(SITE, Wanted("EN", "next")).version == "current"  # `next`: the current version's URL
    assert (resolve(SITE, Wanted()).locale, resolve(SITE, Wanted()).version) == ("en", "current")


def test_a_locale_or_version_the_book_lacks_falls_back_and_says_so() -> None:
    found = resolve(SITE, Wanted("fr", "9.9"))
    assert (found.locale, found.version, found.fallbacks) == ("en", "current", ("locale", "version"))
    assert found.note is not None and "'fr'" in found.note and "'9.9'" in found.note


def test_urdu_words_are_search_and_grounding_terms_english_is_read_as_before() -> None:
    urdu = "پوری چارج شدہ بیٹری کیسٹرل کو 35 منٹ تک ہوا میں رکھتی ہے۔"
    assert {"بیٹری", "کیسٹرل", "منٹ"} <= set(tokenize(urdu)) and {"بیٹری", "منٹ"} <= set(claim_terms(urdu))
    # Optional vowel marks are folded away: a reader who writes them finds the page that does not.
    assert tokenize("بَیٹری") == tokenize("بیٹری")
    assert tokenize("How do I source setup.bash?") == ["sourc", "setup.bash"]
    sentences = SentenceSplitter().split("پہلا جملہ ہے۔ دوسرا جملہ ہے؟ Third.")
    assert sentences == ["پہلا جملہ ہے۔", "دوسرا جملہ ہے؟", "Third."]
