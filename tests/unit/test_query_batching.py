"""Concurrent query embeddings share one worker's batches and still get their own vector, or their own error."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

from bookrag.adapters.embedders.batching import BatchedQueries
from bookrag.errors import EmbeddingError

QUESTIONS = [f"What does chapter {i} say about {topic}?" for i, topic in
             enumerate(["balance", "torque control", "ROS 2 topics", "lidar", "grasping", "SLAM", "URDF", "Nav2"] * 3)]


def test_concurrent_queries_each_get_their_own_vector(local_embedder: Any) -> None:
    # GIVEN the local model behind the batcher, and as many threads as the questions, released together
    model = local_embedder.inner
    batched = BatchedQueries(model)
    start = threading.Barrier(len(QUESTIONS))

    def ask(question: str) -> np.ndarray:
        start.wait()
        return batched.embed_query(question)

    # WHEN they all embed at once
    with ThreadPoolExecutor(len(QUESTIONS)) as pool:
        vectors = list(pool.map(ask, QUESTIONS))

    # THEN each has the vector the model gives that question alone (batching pads, the mask ignores it)
    for question, vector in zip(QUESTIONS, vectors, strict=True):
        assert vector.shape == (model.dimension,)
        assert float(np.dot(vector, model.embed_query(question))) > 0.99999


def test_a_bad_query_fails_alone(local_embedder: Any) -> None:
    batched = BatchedQueries(local_embedder.inner)
    start = threading.Barrier(4)

    def ask(question: Any) -> Any:
        start.wait()
        try:
            return batched.embed_query(question)
        except EmbeddingError as exc:
            return exc

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(ask, [QUESTIONS[0], 42, QUESTIONS[1], QUESTIONS[2]]))

    assert isinstance(results[1], EmbeddingError)
    assert all(isinstance(r, np.ndarray) for i, r in enumerate(results) if i != 1)
    with pytest.raises(EmbeddingError):
        batched.embed_query(42)  # type: ignore[arg-type]


class _Recording:
    """The real model, noting which thread runs each forward pass and how many run at once."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name, self.dimension = model.name, model.dimension
        self.threads: list[str] = []
        self.running = 0
        self.most_at_once = 0
        self._lock = threading.Lock()

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            self.threads.append(threading.current_thread().name)
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
        try:
            return np.asarray(self.model.embed_documents(texts))
        finally:
            with self._lock:
                self.running -= 1


def test_concurrent_queries_never_run_two_forward_passes_at_once(local_embedder: Any) -> None:
    model = _Recording(local_embedder.inner)
    batched = BatchedQueries(model)  # type: ignore[arg-type]
    start = threading.Barrier(len(QUESTIONS))

    def ask(question: str) -> np.ndarray:
        start.wait()
        return batched.embed_query(question)

    with ThreadPoolExecutor(len(QUESTIONS)) as pool:
        list(pool.map(ask, QUESTIONS))

    assert model.most_at_once == 1  # one set of activations and BLAS buffers, whatever the concurrency
    assert len(model.threads) < len(QUESTIONS)  # and the waiting queries were batched
