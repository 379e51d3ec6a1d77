from __future__ import annotations

from bookrag.text.bm25 import BM25Encoder, term_id, tokenize


def test_tokenize_stems_and_drops_stop_words() -> None:
    assert tokenize("The robots are running quickly") == ["robot", "run", "quick"]


def test_technical_tokens_survive() -> None:
    tokens = tokenize("Source setup.bash then run nav2_bringup on ROS2")
    assert "setup.bash" in tokens and "nav2_bringup" in tokens and "ros2" in tokens


def test_term_ids_are_stable() -> None:
    assert term_id("robot") == 3626729188  # CRC32: the same in every process and Python version
    assert term_id("robot") != term_id("robots")


def test_document_weights_saturate_with_term_frequency() -> None:
    enc = BM25Encoder()
    once = enc.encode_document("gazebo simulator")
    many = enc.encode_document("gazebo " * 20 + "simulator")
    w_once = dict(zip(once.indices, once.values, strict=True))[term_id("gazebo")]
    w_many = dict(zip(many.indices, many.values, strict=True))[term_id("gazebo")]
    assert w_once < w_many < enc.k1 + 1


def test_query_has_unit_weights_and_sorted_indices() -> None:
    q = BM25Encoder().encode_query("install install ROS 2 humble")
    assert q.values == [1.0] * len(q.indices)
    assert q.indices == sorted(q.indices)


def test_empty_text_gives_empty_vector() -> None:
    assert BM25Encoder().encode_document("the and of").indices == []
