"""Property-based tests of the request edge: the HTTP request models and the Python contract's checks.

Whatever arrives, validation either yields a request that satisfies the contract (a normalised query
within its length, top_k and thresholds in range) or refuses it with the validation error the error
mapper turns into a 400; it never raises anything else. Unknown fields are ignored, the same way on
every model. Limits apply to the query as sent (JSON Schema's minLength/maxLength and the `pattern`
that asks for one visible character); the accepted query is then normalised.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from bookrag.contracts.agent import AnswerRequest
from bookrag.contracts.rest import RetrieveRequest
from bookrag.contracts.tools import BookContentRequest, BookContextRequest, PerformRetrievalRequest
from bookrag.domain.query import has_visible_character, normalize_query
from bookrag.errors import InvalidInputError
from bookrag.services.python_api import MAX_QUERY_CHARS, MAX_TOP_K, _check, retrieve_chunks

EXAMPLES = settings(max_examples=100, deadline=None, derandomize=True, database=None)

# Text that exercises normalisation: controls, zero-width and bidi characters, combining marks, spaces.
TRICKY = st.sampled_from(["\x00", "\x07", "\x1b", "\x7f", "\x85", "\u200b", "\u200f", "\u202e", "\u2060", "\ufeff",
                          "\t", "\n", "\r", " ", "\u00a0", "e\u0301", "\u212b", "ﬁ", "ROS 2", "é"])
QUERY_TEXT = st.lists(st.one_of(st.text(max_size=20), TRICKY), max_size=12).map("".join) | st.text(
    min_size=480, max_size=1100, alphabet=st.sampled_from("ab \u200b\x00"))
JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6)
NUMBER = st.integers(-5, 20) | st.floats() | st.booleans() | st.sampled_from(["5", "0.5", "", "1e3"])
FILTER = st.none() | st.text(max_size=210) | JSON_VALUE

# model -> (max query length, optional numeric fields)
MODELS: dict[type[BaseModel], tuple[int, tuple[str, ...]]] = {
    RetrieveRequest: (1000, ("top_k", "score_threshold")),
    BookContentRequest: (1000, ("top_k", "min_score")),
    PerformRetrievalRequest: (500, ("top_k",)),
    BookContextRequest: (1000, ()),
}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")


def bodies() -> st.SearchStrategy[dict[str, Any]]:
    known = st.fixed_dictionaries({}, optional={
        "query": QUERY_TEXT | JSON_VALUE, "top_k": NUMBER, "score_threshold": NUMBER, "min_score": NUMBER,
        "module_name": FILTER, "source_file": FILTER, "query_type": FILTER})
    extra = st.dictionaries(st.text(max_size=8).filter(lambda k: k not in _ALL_FIELDS), JSON_VALUE, max_size=3)
    return st.tuples(known, extra).map(lambda pair: {**pair[1], **pair[0]})


# Every field any request model declares (by name and alias): an "unknown" field must be unknown to all of them.
# Read from the models, so a field added later (the editions' locale and version) is never drawn as unknown.
_ALL_FIELDS = {key for model in MODELS for name, field in model.model_fields.items()
               for key in (name, field.alias) if key}


# --- normalisation ----------------------------------------------------------------------------------


@EXAMPLES
@given(QUERY_TEXT)
def test_normalisation_is_idempotent_and_leaves_no_controls(text: str) -> None:
    once = normalize_query(text)

    assert normalize_query(once) == once
    assert not _CONTROL.search(once)
    assert unicodedata.is_normalized("NFC", once)
    assert once == once.strip() and "  " not in once


# --- HTTP request models ----------------------------------------------------------------------------


@pytest.mark.parametrize("model", list(MODELS), ids=lambda m: m.__name__)
@EXAMPLES
@given(body=bodies())
def test_a_model_accepts_only_what_the_contract_allows(model: type[BaseModel], body: dict[str, Any]) -> None:
    max_len, numeric = MODELS[model]
    try:
        request = model.model_validate(body)
    except ValidationError as exc:
        assert exc.errors()  # refused, with something for the error mapper to name
        return

    query = request.query  # type: ignore[attr-defined]
    sent = body["query"]
    assert isinstance(sent, str) and 1 <= len(sent) <= max_len and has_visible_character(sent)
    assert query == normalize_query(sent) and query
    if "top_k" in numeric:
        top_k = request.top_k  # type: ignore[attr-defined]
        sent_top_k = body.get("top_k", 5)
        assert not isinstance(sent_top_k, bool) and isinstance(sent_top_k, int | float) and 1 <= top_k <= 10
        if model is not BookContentRequest:  # its contract declares top_k a number: fractions are allowed
            assert top_k == int(top_k) and isinstance(top_k, int)
    for name in ("score_threshold", "min_score"):
        if name in numeric:
            value = getattr(request, name)
            assert value is None or (math.isfinite(value) and 0.0 <= value <= 1.0)
            assert not isinstance(body.get(name), bool | str)
    for name in ("module_name", "source_file"):
        value = getattr(request, name, None)
        assert value is None or (isinstance(value, str) and 1 <= len(value) <= 200)


@pytest.mark.parametrize("model", list(MODELS), ids=lambda m: m.__name__)
@EXAMPLES
@given(extra=st.dictionaries(st.text(max_size=12).filter(lambda k: k not in _ALL_FIELDS), JSON_VALUE, max_size=5))
def test_unknown_fields_are_ignored_on_every_model(model: type[BaseModel], extra: dict[str, Any]) -> None:
    plain = model.model_validate({"query": "How do I install ROS 2?"})

    with_extra = model.model_validate({**extra, "query": "How do I install ROS 2?"})

    assert with_extra == plain
    assert set(with_extra.model_dump()) == set(model.model_fields)


@pytest.mark.parametrize("model", list(MODELS), ids=lambda m: m.__name__)
@EXAMPLES
@given(text=QUERY_TEXT)
def test_limits_apply_to_the_query_as_sent(model: type[BaseModel], text: str) -> None:
    max_len, _ = MODELS[model]
    normalised = normalize_query(text)
    try:
        request = model.model_validate({"query": text})
    except ValidationError:
        assert not (1 <= len(text) <= max_len and normalised)
    else:
        assert 1 <= len(text) <= max_len and normalised
        assert request.query == normalised  # type: ignore[attr-defined]


def test_a_query_of_invisible_characters_is_empty() -> None:
    with pytest.raises(ValidationError):
        RetrieveRequest.model_validate({"query": "\u200b\x00\u202e \t\ufeff"})


# --- the Python contract: retrieve_chunks / validate_retrieval ---------------------------------------


@EXAMPLES
@given(query=QUERY_TEXT | JSON_VALUE, top_k=NUMBER | JSON_VALUE, min_score=NUMBER | JSON_VALUE)
def test_the_python_contract_checks(query: Any, top_k: Any, min_score: Any) -> None:
    try:
        checked = _check(query, top_k, min_score)
    except InvalidInputError as exc:
        assert isinstance(exc, ValueError)  # the contract's ValueError
        assert exc.code in {"INVALID_QUERY", "MISSING_QUERY", "INVALID_QUERY_LENGTH", "INVALID_TOP_K",
                            "INVALID_SCORE_THRESHOLD"}
        assert exc.details["field"] in {"query_text", "top_k", "min_score"}
        return
    assert checked == normalize_query(query) and checked and 1 <= len(query) <= MAX_QUERY_CHARS
    assert isinstance(top_k, int) and not isinstance(top_k, bool) and 1 <= top_k <= MAX_TOP_K
    assert isinstance(min_score, int | float) and not isinstance(min_score, bool)
    assert math.isfinite(min_score) and 0.0 <= min_score <= 1.0


@pytest.mark.parametrize(("args", "code"), [
    (("",), "MISSING_QUERY"),
    (("\u200b \x00",), "MISSING_QUERY"),
    (("x" * 1001,), "INVALID_QUERY_LENGTH"),
    ((None,), "INVALID_QUERY"),
    (("q", 0), "INVALID_TOP_K"),
    (("q", True), "INVALID_TOP_K"),
    (("q", 5, float("nan")), "INVALID_SCORE_THRESHOLD"),
    (("q", 5, 1.5), "INVALID_SCORE_THRESHOLD"),
])
def test_retrieve_chunks_refuses_bad_input_before_touching_the_index(args: tuple[Any, ...], code: str) -> None:
    # No index is configured here: a ValueError (not a store error) proves validation ran first.
    with pytest.raises(ValueError) as caught:
        retrieve_chunks(*args)

    assert isinstance(caught.value, InvalidInputError) and caught.value.code == code


# --- /api/answer: what its schema allows is what it accepts (issue 38) -----------------------------------


@EXAMPLES
@given(text=QUERY_TEXT, where=st.sampled_from(["selected_text", "history"]))
def test_an_answer_request_is_accepted_exactly_when_its_schema_allows_it(text: str, where: str) -> None:
    body: dict[str, Any] = {"query": "What does this say?"}
    body |= {"selected_text": text} if where == "selected_text" else {"history": [{"question": text}]}
    schema = AnswerRequest.model_json_schema()
    allowed = jsonschema.Draft202012Validator(schema).is_valid(body)
    try:
        AnswerRequest.model_validate(body)
        accepted = True
    except ValidationError:
        accepted = False
    assert accepted == allowed, (where, text)
