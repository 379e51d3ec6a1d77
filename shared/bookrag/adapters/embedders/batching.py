"""Concurrent query embeddings, batched onto one worker thread.

Under concurrency (`bookrag serve`: each request on its own thread of a 40-thread pool) every request
used to run the numpy model on its own thread. Measured at 40 clients on a 2,131-chunk book, that is
where time and memory went: 40 threads interleaving small GEMMs and GIL-bound numpy element-wise passes
on 2 cores, each with its own activations, OpenBLAS buffer and malloc arena (peak RSS 4.3 GB, 2.0 GB
held afterwards). Here one worker thread embeds whatever queries are waiting in one padded batch: one
set of buffers whatever the concurrency, larger GEMMs, and requests wait on a future instead of on the
GIL. One request at a time (Lambda) pays a thread hand-off, tens of microseconds.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

import numpy as np

from bookrag.adapters.embedders.base import Embedder

# Queries are short (10-40 tokens), so a batch of 16 pads little and stays in cache.
MAX_BATCH = 16


class BatchedQueries:
    """An `Embedder` whose `embed_query` calls, from any number of threads, run batched on one worker."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self._queue: queue.SimpleQueue[tuple[str, Future[np.ndarray]]] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        # `count_tokens`, `max_seq_length`, ...: whatever else the model offers, unchanged.
        return getattr(self.inner, name)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        if self._worker is None:
            self._start()
        done: Future[np.ndarray] = Future()
        self._queue.put((text, done))
        return done.result()

    def _start(self) -> None:
        with self._lock:
            if self._worker is None:
                self._worker = threading.Thread(target=self._run, name="bookrag-embed-queries", daemon=True)
                self._worker.start()

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            while len(batch) < MAX_BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                vectors = self.inner.embed_documents([text for text, _ in batch])
            except BaseException:
                # One caller's bad input must not fail the others: each is embedded alone, and gets its
                # own result or its own error, as if it had called the model itself.
                for text, done in batch:
                    self._one(text, done)
                continue
            for row, (_, done) in enumerate(batch):
                done.set_result(np.array(vectors[row], copy=True))

    def _one(self, text: str, done: Future[np.ndarray]) -> None:
        try:
            done.set_result(self.inner.embed_documents([text])[0])
        except BaseException as exc:
            done.set_exception(exc)
