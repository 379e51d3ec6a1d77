"""Healthy and faulty Cohere, Qdrant and chat-completions (OpenAI wire format) replies for
`tests.support.stubs.StubServer`.

The Qdrant replies follow the REST API that qdrant-client 1.20 calls (captured from the client):
`GET /collections/{name}/exists`, `GET /collections/{name}` and `POST /collections/{name}/points/query`,
each answered in Qdrant's `{"result": ..., "status": "ok", "time": ...}` envelope. A fault replaces
the reply of one path or of all of them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.support.stubs import Recorded, Reply, ReplySpec, StreamPiece, StubServer

COHERE_MODEL = "embed-english-v3.0"
COHERE_EMBEDDER = f"cohere/{COHERE_MODEL}"
COHERE_DIM = 1024
COLLECTION = "book_chunks"
# Upstream error bodies carry this marker: it must never reach one of our responses or logs.
UPSTREAM_DETAIL = "upstream-internal-detail-7d1e"


def unit_vector(dim: int = COHERE_DIM) -> list[float]:
    return [1.0] + [0.0] * (dim - 1)


def cohere_embed(req: Recorded) -> Reply:
    """A Cohere /v2/embed answer: one unit vector per text."""
    texts = req.json()["texts"]
    return Reply(200, {"id": "e1", "response_type": "embeddings_by_type",
                       "embeddings": {"float": [unit_vector() for _ in texts]}, "texts": texts, "meta": {}})


def embed_reply(dim: int = 1024) -> ReplySpec:
    """A Cohere /v2/embed answer of `dim` dimensions: [i + 1, 0, 0, ...] for the i-th text."""

    def reply(req: Recorded) -> Reply:
        texts = req.json()["texts"]
        vectors = [[float(i + 1)] + [0.0] * (dim - 1) for i in range(len(texts))]
        return Reply(200, {"id": "e1", "response_type": "embeddings_by_type",
                           "embeddings": {"float": vectors}, "texts": texts, "meta": {}})

    return reply


def qdrant_ok(result: Any) -> Reply:
    """Qdrant's REST envelope around `result`."""
    return Reply(200, {"result": result, "status": "ok", "time": 0.0001})


def qdrant_exists(exists: bool = True) -> Reply:
    return qdrant_ok({"exists": exists})


def qdrant_collection_info(embedder: str = COHERE_EMBEDDER, dim: int = COHERE_DIM, points: int = 1) -> Reply:
    return qdrant_ok({
        "status": "green", "optimizer_status": "ok", "indexed_vectors_count": 0, "points_count": points,
        "segments_count": 1,
        "config": {
            "params": {"vectors": {"dense": {"size": dim, "distance": "Cosine"}},
                       "sparse_vectors": {"bm25": {"modifier": "idf"}}},
            "hnsw_config": {"m": 16, "ef_construct": 100, "full_scan_threshold": 10000},
            "optimizer_config": {"deleted_threshold": 0.2, "vacuum_min_vector_number": 1000,
                                 "default_segment_number": 0, "flush_interval_sec": 5},
            "metadata": {"embedder": embedder, "dimension": dim},
        },
        "payload_schema": {},
    })


def chunk_payload(source_file: str = "module-1-ros2/installation.md", index: int = 0) -> dict[str, Any]:
    module = source_file.split("/", 1)[0]
    return {
        "chunk_id": "5b0f3f0e-7a57-4b8e-9d2c-1f6f0c9a2b11", "content_text": "Install ROS 2 Humble with apt.",
        "source_file": source_file, "source_url": "http://localhost:3000/docs/module-1-ros2/installation",
        "module_name": module, "section_heading": "Installing ROS 2", "heading_path": ["Installing ROS 2"],
        "chunk_index": index, "total_chunks": 1, "token_count": 7, "page_number": 1, "created_at": 1.7e9,
        "content_hash": "0" * 64, "file_hash": "1" * 64, "doc_title": "Installation",
    }


def qdrant_query(dim: int = COHERE_DIM) -> Reply:
    """One point whose dense vector equals the stub embedder's: cosine 1.0, above every threshold."""
    payload = chunk_payload()
    return qdrant_ok({"points": [{"id": payload["chunk_id"], "version": 0, "score": 0.9, "payload": payload,
                            "vector": {"dense": unit_vector(dim)}}]})


def serve_qdrant(stub: StubServer, *, exists: ReplySpec | None = None, info: ReplySpec | None = None,
                 query: ReplySpec | None = None, collection: str = COLLECTION) -> StubServer:
    """Answer the paths a search uses (the alias lookup, then the collection's three); each defaults to a
    healthy reply. No alias: the collection is read by its own name."""
    base = f"/collections/{collection}"
    stub.on("/aliases", qdrant_ok({"aliases": []}))
    stub.on(f"{base}/exists", exists or qdrant_exists())
    stub.on(f"{base}/points/query", query or qdrant_query())
    stub.on(base, info or qdrant_collection_info())
    return stub


# --- chat completions (Gemini's OpenAI-compatible endpoint, OpenAI, ...) --------------------------------


def completion(content: str | None = None, tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A whole chat completion, as a request without `stream` gets it."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {"id": "cmpl-1", "object": "chat.completion", "model": "stub",
            "choices": [{"index": 0, "finish_reason": "tool_calls" if tool_calls else "stop", "message": message}]}


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    """One Server-Sent Event of a streamed completion: `data: {chat.completion.chunk}`."""
    body = {"id": "cmpl-1", "object": "chat.completion.chunk", "model": "stub",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"


def completion_chunks(*pieces: str | StreamPiece, tool_calls: list[dict[str, Any]] | None = None,
                      end: bool = True) -> list[StreamPiece]:
    """A streamed completion as the OpenAI wire format sends it: the role first, one chunk per text
    piece (bytes and `Hold`/`CUT` pass through as they are), each tool call with its arguments in two
    fragments, then the finish reason and `[DONE]` (`end=False`: the stream stops before them)."""
    out: list[StreamPiece] = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": p}) if isinstance(p, str) else p for p in pieces]
    for i, call in enumerate(tool_calls or []):
        arguments = call["function"]["arguments"]
        half = len(arguments) // 2
        # The first fragment brings the call's id and every other field it has (a provider's own, such as
        # Gemini's `extra_content` signature), as providers stream them.
        out.append(chunk({"tool_calls": [{**call, "index": i, "type": "function",
                                          "function": {"name": call["function"]["name"],
                                                       "arguments": arguments[:half]}}]}))
        out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": arguments[half:]}}]}))
    if end:
        out += [chunk({}, "tool_calls" if tool_calls else "stop"), DONE]
    return out


def words(text: str) -> list[str]:
    """`text` in word-sized pieces (each with its trailing space), as a model streams it."""
    return re.findall(r"\S+\s*", text)


def chat_reply(req: Recorded, content: str | None = None,
               tool_calls: list[dict[str, Any]] | None = None) -> Reply:
    """The same model output in the form the request asked for: a whole completion, or (`stream: true`)
    a completion streamed word by word."""
    if req.json().get("stream"):
        return Reply(200, stream=completion_chunks(*words(content or ""), tool_calls=tool_calls))
    return Reply(200, completion(content, tool_calls))


def model_says(content: str | None = None,
               tool_calls: list[dict[str, Any]] | None = None) -> Callable[[Recorded], Reply]:
    """A model that answers `content` (and/or calls tools), streamed or not as the request asks."""
    return lambda req: chat_reply(req, content, tool_calls)


# --- faults -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fault:
    """What an upstream does wrong. `reply` is None for a refused connection (nothing listening)."""

    name: str
    reply: Reply | None


def _error(status: int, headers: dict[str, str] | None = None) -> Reply:
    # Both Cohere's ({"message"}) and Qdrant's ({"status": {"error"}}) error shapes, with a marker.
    return Reply(status, {"message": UPSTREAM_DETAIL, "status": {"error": UPSTREAM_DETAIL}}, headers or {})


FAULTS: dict[str, Fault] = {f.name: f for f in [
    Fault("401", _error(401)),
    Fault("403", _error(403)),
    Fault("404", _error(404)),
    Fault("429-retry-after-30", _error(429, {"Retry-After": "30"})),
    Fault("429-retry-after-0", _error(429, {"Retry-After": "0"})),
    Fault("500", _error(500)),
    Fault("503", _error(503)),
    Fault("hang", Reply(hang=True)),
    Fault("reset", Reply(reset=True)),
    Fault("refused", None),
    Fault("malformed-json", Reply(200, b'{"result": {"points": [' + UPSTREAM_DETAIL.encode())),
]}


def stub_env(cohere_url: str, qdrant_url: str, *, cohere_key: str, qdrant_key: str) -> dict[str, str]:
    """Settings that point the service at the stubs: remote Qdrant, Cohere embeddings, short timeouts."""
    return {"QDRANT_URL": qdrant_url, "QDRANT_API_KEY": qdrant_key, "QDRANT_TIMEOUT_S": "0.5",
            "EMBEDDING_PROVIDER": "cohere", "COHERE_API_KEY": cohere_key, "COHERE_BASE_URL": cohere_url,
            "COHERE_TIMEOUT_S": "0.5"}
