"""Hostile documents and an embedder failing part-way never corrupt what is stored.

A good book is ingested (Cohere embeddings from a stub on 127.0.0.1, embedded Qdrant). Then it is
re-ingested with hostile files added (binary, invalid UTF-8, oversized, deep nesting, a giant line, a
symlink loop, a dangling symlink, a symlink out of the docs folder, a FIFO) while the real Cohere
adapter starts getting 500s part-way through: every file stays at its old version or moves whole to its
new one, and everything stored before is still there and searchable. A final healthy run names every
skipped file's reason.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bookrag import errors
from bookrag.adapters.store.edge.shards import close_shard
from bookrag.adapters.store.edge.store import EdgeStore
from bookrag.config.settings import Settings
from bookrag.ingestion.ingestor import Ingestor
from bookrag.retrieval.retriever import Retriever, SearchOptions
from bookrag.services.container import container_for
from tests.support.stubs import Recorded, Reply, StubServer

DIM = 384  # embed-english-light-v3.0: smaller vectors, a faster embedded store
FAIL_MARKER = "failmarker"


def bag_of_words(text: str) -> list[float]:
    """A deterministic embedding in which texts sharing words are close: search stays meaningful."""
    vector = [0.0] * DIM
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[zlib.crc32(word.encode()) % DIM] += 1.0
    if not any(vector):
        vector[0] = 1.0
    return vector


def embed(req: Recorded) -> Reply:
    texts = req.json()["texts"]
    return Reply(200, {"id": "e", "response_type": "embeddings_by_type", "texts": texts, "meta": {},
                       "embeddings": {"float": [bag_of_words(t) for t in texts]}})


def embed_failing_on_marker(req: Recorded) -> Reply:
    """Cohere answering 500 to any batch that holds the marked file: a failure part-way through."""
    if any(FAIL_MARKER in t.lower() for t in req.json()["texts"]):
        return Reply(500, {"message": "internal error"})
    return embed(req)


def paragraphs(word: str, count: int) -> str:
    body = " ".join(["The humanoid robot uses", word, "while walking and grasping objects"] * 4)
    return "\n\n".join(f"## Section {i}\n\n{body} number {i}." for i in range(count))


def write(root: Path, rel: str, content: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


@pytest.fixture
def cohere() -> Any:
    with StubServer() as server:
        yield server


@pytest.fixture
def settings(make_settings: Any, cohere: StubServer) -> Settings:
    built: Settings = make_settings(embedding_provider="cohere", cohere_api_key="co-test", cohere_base_url=cohere.url,
                         cohere_embed_model="embed-english-light-v3.0",
                         cohere_ingest_timeout_s=2.0, cohere_ingest_retries=1, chunk_max_tokens=64,
                         chunk_overlap_tokens=8, max_document_bytes=200_000, retrieval_mode="dense")
    return built


@pytest.fixture
def store(settings: Settings) -> Iterator[EdgeStore]:
    """The embedded store (Qdrant Edge) in this test's folder."""
    yield EdgeStore(settings)
    close_shard(settings)


def ingest(settings: Settings, store: EdgeStore, root: Path) -> Any:
    return Ingestor(settings, container_for(settings).embedder, store).run(root)


def stored(store: EdgeStore) -> dict[str, dict[str, Any]]:
    """Per file: the stored chunks' ids and hashes, and whether the file is whole (all chunks, one version)."""
    files: dict[str, dict[str, Any]] = {}
    for p in store.scroll_payloads(("source_file", "chunk_id", "content_hash", "file_hash",
                                                  "chunk_index", "total_chunks", "content_text")):
        entry = files.setdefault(p["source_file"], {"chunks": {}, "file_hashes": set(), "totals": set()})
        entry["chunks"][p["chunk_index"]] = (p["chunk_id"], p["content_hash"])
        entry["file_hashes"].add(p["file_hash"])
        entry["totals"].add(p["total_chunks"])
        entry.setdefault("text", []).append(p["content_text"])
    return files


def assert_every_file_whole(files: dict[str, dict[str, Any]]) -> None:
    for name, entry in files.items():
        (total,) = entry["totals"]
        assert len(entry["file_hashes"]) == 1, f"{name} mixes versions"
        assert sorted(entry["chunks"]) == list(range(total)), f"{name} is missing chunks"


def top_file(settings: Settings, store: EdgeStore, query: str) -> str:
    hits = Retriever(settings, container_for(settings).embedder, store).search(query, SearchOptions(top_k=3)).hits
    assert hits, query
    return hits[0].source_file


def add_hostile_files(root: Path, outside: Path) -> None:
    write(root, "module-c/binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4)
    write(root, "module-c/latin1.md", "# Café\n\nRobots à la française".encode("latin-1") + b"\xff\xfe")
    write(root, "module-c/nul.md", "# Nul\n\nText with a NUL\x00 byte in it.")
    write(root, "module-c/huge.md", "# Huge\n\n" + "word " * 50_000)  # 250 KB > MAX_DOCUMENT_BYTES
    write(root, "module-c/deep.md", "# Deep\n\n" + "".join("  " * i + "- level\n" for i in range(400))
          + ">" * 3_000 + " quoted\n")
    write(root, "module-c/giant-line.md", "# Giant\n\n" + "robot " * 3_000)  # one 18 KB line
    os.symlink("loop.md", root / "module-c/loop.md")
    os.symlink("nowhere.md", root / "module-c/dangling.md")
    os.symlink(outside, root / "module-c/outside.md")
    os.mkfifo(root / "module-c/pipe.md")


def test_hostile_files_and_a_failing_embedder_never_corrupt_the_index(settings: Settings, store: EdgeStore,
                                                                      cohere: StubServer, tmp_path: Path) -> None:
    # GIVEN a good book, ingested
    root = tmp_path / "docs"
    write(root, "module-a/alpha.md", "# Alpha\n\n" + paragraphs("aardvark", 4))
    write(root, "module-a/bravo.md", "# Bravo\n\n" + paragraphs("bumblebee", 4))
    write(root, "module-b/charlie.md", "# Charlie\n\n" + paragraphs("chinchilla", 4))
    cohere.on("/v2/embed", embed)
    first = ingest(settings, store, root)
    assert not first.skipped and first.files_changed == 3
    before = stored(store)

    # WHEN it is re-ingested with changed, new and hostile files, and Cohere fails part-way through
    outside = tmp_path / "elsewhere.md"
    outside.write_text("# Private\n\nzebracanary credentials that live outside the docs folder")
    write(root, "module-a/alpha.md", "# Alpha\n\n" + paragraphs("axolotl", 4))  # changed, first group
    write(root, "module-a/big.md", "# Big\n\n" + paragraphs("bigfoot", 260))  # new, fills the first group
    write(root, "module-a/bravo.md", b"# Bravo\n\n\xff\xfe\xfa not UTF-8 any more")  # now unreadable
    write(root, "module-b/charlie.md", f"# Charlie\n\n{FAIL_MARKER}\n\n" + paragraphs("dromedary", 4))
    write(root, "module-b/zulu.md", "# Zulu\n\n" + paragraphs("zucchini", 2))
    add_hostile_files(root, outside)
    cohere.on("/v2/embed", embed_failing_on_marker)
    with pytest.raises(errors.EmbeddingError) as caught:
        ingest(settings, store, root)

    # THEN the failure is the adapter's typed, recoverable error, after its bounded retries
    assert caught.value.recoverable
    assert sum(1 for c in cohere.calls("/v2/embed") if FAIL_MARKER in c.body.decode().lower()) == 2
    # ... every stored file is whole: at its old version, or wholly at its new one
    after = stored(store)
    assert_every_file_whole(after)
    assert after["module-a/bravo.md"]["chunks"] == before["module-a/bravo.md"]["chunks"]  # unreadable: kept
    assert after["module-b/charlie.md"]["chunks"] == before["module-b/charlie.md"]["chunks"]  # failed: kept
    assert after["module-a/alpha.md"]["file_hashes"] != before["module-a/alpha.md"]["file_hashes"]  # moved whole
    assert "module-b/zulu.md" not in after and not any(name.startswith("module-c/") for name in after)
    # ... and what was there is still found
    assert top_file(settings, store, "bumblebee") == "module-a/bravo.md"
    assert top_file(settings, store, "chinchilla") == "module-b/charlie.md"
    assert top_file(settings, store, "axolotl") == "module-a/alpha.md"

    # WHEN Cohere recovers and the ingest is run again
    cohere.on("/v2/embed", embed)
    report = ingest(settings, store, root)

    # THEN every hostile file was skipped with a named reason, and nothing else
    reasons = dict(report.skipped)
    assert reasons == {
        "module-a/bravo.md": "not valid UTF-8 text",
        "module-c/binary.md": "binary file (contains NUL bytes)",
        "module-c/latin1.md": "not valid UTF-8 text",
        "module-c/nul.md": "binary file (contains NUL bytes)",
        "module-c/huge.md": "too large (over 200000 bytes)",
        "module-c/loop.md": "symlink loop",
        "module-c/dangling.md": "broken symlink",
        "module-c/outside.md": "symlink to outside the docs folder",
        "module-c/pipe.md": "not a regular file",
    }
    final = stored(store)
    assert_every_file_whole(final)
    assert final["module-a/bravo.md"]["chunks"] == before["module-a/bravo.md"]["chunks"]
    assert top_file(settings, store, "dromedary") == "module-b/charlie.md"
    assert top_file(settings, store, "zucchini") == "module-b/zulu.md"
    # ... the hostile but readable Markdown was indexed in bounded chunks
    assert {"module-c/deep.md", "module-c/giant-line.md"} <= set(final)
    assert all(len(text) < 5_000 for entry in final.values() for text in entry["text"])
    # ... and nothing from outside the docs folder was ever read
    assert not any("zebracanary" in text for entry in final.values() for text in entry["text"])


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_skipped_with_its_reason(settings: Settings, store: EdgeStore,
                                                       cohere: StubServer, tmp_path: Path) -> None:
    root = tmp_path / "docs"
    write(root, "a.md", "# A\n\n" + paragraphs("aardvark", 1))
    write(root, "secret.md", "# Secret\n\nno")
    (root / "secret.md").chmod(0)
    cohere.on("/v2/embed", embed)

    report = ingest(settings, store, root)

    assert dict(report.skipped) == {"secret.md": "unreadable: Permission denied"}

