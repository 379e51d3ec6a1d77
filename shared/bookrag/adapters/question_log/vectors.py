"""The gap questions' embeddings kept between two reports, so a report embeds only the questions that are
new since the last one (the local model embeds a few hundred questions a second; a log holds thousands).

One `.npz` file beside the local log: each row keyed by a hash of the embedder's name and the text. It is
rewritten with exactly the rows the last report used, so it never holds a question that report did not
read: it ages out with the log. A missing, torn or foreign file is an empty cache; a failed write only
costs the next report time.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from bookrag.domain.books import DEFAULT_BOOK, collection_of

FILE = "report-vectors.npz"


def _key(embedder: str, text: str) -> bytes:
    return hashlib.sha256(f"{embedder}\0{text}".encode()).hexdigest()[:32].encode()


class QuestionVectors:
    def __init__(self, folder: Path, embedder: str, dimension: int, book: str = DEFAULT_BOOK) -> None:
        # A file per book: each report keeps only the rows it used, so two books sharing one would wipe each other's.
        self.path = folder / f"{collection_of(FILE.removesuffix('.npz'), book)}.npz"
        self.embedder = embedder
        self.dimension = dimension
        self.embedded = 0  # rows the last call had to embed (the rest came from the file)

    def embed(self, texts: Sequence[str], embed: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        keys = [_key(self.embedder, t) for t in texts]
        known = self._load()
        missing = [i for i, k in enumerate(keys) if k not in known]
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if missing:
            fresh = np.asarray(embed([texts[i] for i in missing]), dtype=np.float32)
            for row, i in enumerate(missing):
                known[keys[i]] = fresh[row]
        for i, k in enumerate(keys):
            out[i] = known[k]
        self.embedded = len(missing)
        self._save(keys, out)
        return out

    def _load(self) -> dict[bytes, np.ndarray]:
        try:
            with np.load(self.path, allow_pickle=False) as data:
                keys, vectors = data["keys"], data["vectors"]
        except (OSError, ValueError, KeyError):
            return {}
        if vectors.ndim != 2 or vectors.shape[1] != self.dimension or len(keys) != len(vectors):
            return {}
        return {bytes(k): v for k, v in zip(keys, vectors, strict=True)}

    def _save(self, keys: list[bytes], vectors: np.ndarray) -> None:
        tmp = self.path.with_suffix(".tmp.npz")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Owner-only, as the log itself: vectors of readers' questions.
            with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as handle:
                np.savez(handle, keys=np.asarray(keys, dtype="S32"), vectors=vectors)
            os.replace(tmp, self.path)
        except OSError:
            tmp.unlink(missing_ok=True)
