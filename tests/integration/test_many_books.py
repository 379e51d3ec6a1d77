"""Two books in one embedded store, one app (issue 38): the sample book (the default book) and a tiny book about
bees (`tests/fixtures/second-book`, book id `bees`). A key of one book never reads a chunk of the other, on any
interface: REST retrieve, the tool routes, MCP, answers, sessions, selections, feedback and the report."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from bookrag.auth.keys import mint_key
from bookrag.config.settings import get_settings, load_settings
from bookrag.domain.book_version import REFERENCE_BOOK
from bookrag.services.container import container_for, flush_question_log
from bookrag.web.app import create_app
from tests.support.mcp import copy_index
from tests.support.paths import ROOT

BEES_DOCS = ROOT / "tests" / "fixtures" / "second-book" / "docs"
BEES_TITLE = "Keeping Bees"
BEES_CHAPTERS = ("Keeping Bees", "Harvesting Honey")
_BEES_WORDS = re.compile(r"\b(bees?|honey|hives?|beekeeper|colony)\b", re.IGNORECASE)


def bees(text: str) -> bool:
    """Whether `text` is the bees book's (the sample book, on robots, never names these)."""
    return bool(_BEES_WORDS.search(text))


@pytest.fixture(scope="module")
def two_books(indexed_book: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the session's sample book (the default book) with the bees book ingested beside it."""
    from bookrag.ingestion.ingestor import Ingestor

    path = copy_index(indexed_book["QDRANT_PATH"], tmp_path_factory.mktemp("two-books") / "qdrant")
    container = container_for(load_settings(qdrant_path=path, embedding_provider="local")).book("bees")
    report = Ingestor(container.settings, container.embedder, container.store, title=BEES_TITLE).run(BEES_DOCS)
    assert report.chunks_total == 4 and not report.skipped
    return path


@pytest.fixture
def keys(two_books: Path, use_env: Callable[..., None], tmp_path: Path) -> dict[str, str]:
    """Keys of the default book (minted before books: no book named), of bees, and of both."""
    minted = {"robots": mint_key("robots"), "bees": mint_key("bees", books=["bees"]),
              "both": mint_key("both", books=["default", "bees"])}
    use_env(QDRANT_PATH=str(two_books), EMBEDDING_PROVIDER="local", AUTH_ENABLED="true",
            QUESTION_LOG_PATH=str(tmp_path / "log"), RATE_LIMIT_PER_MINUTE="1000",
            API_KEY_HASHES=",".join(record.setting_entry() for _, record in minted.values()))
    return {name: plaintext for name, (plaintext, _) in minted.items()}


@pytest.fixture
def client() -> TestClient:
    return TestClient(create_app("all"))


def post(client: TestClient, key: str, path: str, body: dict[str, Any], **headers: str) -> Any:
    return client.post(path, json=body, headers={"X-API-Key": key, **headers})


ROBOT_QUESTION = "How do ROS 2 nodes communicate over topics?"
BEES_QUESTION = "How is honey extracted from the frames of a hive?"


def test_rest_retrieve_reads_only_the_keys_book(keys: dict[str, str], client: TestClient) -> None:
    for question in (ROBOT_QUESTION, BEES_QUESTION):
        body = {"query": question, "top_k": 10, "score_threshold": 0.0}  # whatever is nearest, however far
        bees_hits = post(client, keys["bees"], "/api/retrieve", body)
        robot_hits = post(client, keys["robots"], "/api/retrieve", body)
        assert bees_hits.status_code == robot_hits.status_code == 200
        bees_texts = [c["content_text"] for c in bees_hits.json()["retrieved_chunks"]]
        robot_texts = [c["content_text"] for c in robot_hits.json()["retrieved_chunks"]]
        assert bees_texts and all(bees(t) for t in bees_texts), question
        assert robot_texts and not any(bees(t) for t in robot_texts), question
        assert bees_hits.headers["X-Book-Version"] != robot_hits.headers["X-Book-Version"]


def test_every_tool_route_reads_only_the_keys_book(keys: dict[str, str], client: TestClient) -> None:
    for tool, extra in (("retrieve_book_content", {"min_score": 0.0}), ("perform_retrieval", {})):
        for key, mine, question in (("bees", True, BEES_QUESTION), ("bees", True, ROBOT_QUESTION),
                                    ("robots", False, BEES_QUESTION), ("robots", False, ROBOT_QUESTION)):
            response = post(client, keys[key], f"/api/tools/{tool}", {"query": question, "top_k": 10, **extra})
            assert response.status_code == 200, response.text
            texts = [r["content"] for r in response.json()["results"]]
            assert all(bees(t) == mine for t in texts), (tool, key, question)
            assert texts or question != (BEES_QUESTION if mine else ROBOT_QUESTION), (tool, key)
    context = post(client, keys["bees"], "/api/tools/retrieve_book_context", {"query": ROBOT_QUESTION})
    assert context.status_code == 200
    assert "ROS" not in json.dumps(context.json())


def test_a_key_of_several_books_names_one_by_header_or_body_field(keys: dict[str, str], client: TestClient) -> None:
    # No threshold: its first book's nearest chunks come back, so that none of them being the bees' tells.
    by_default = post(client, keys["both"], "/api/retrieve", {"query": BEES_QUESTION, "top_k": 10,
                                                              "score_threshold": 0.0})
    by_header = post(client, keys["both"], "/api/retrieve", {"query": BEES_QUESTION, "top_k": 10}, **{"X-Book": "bees"})
    by_field = post(client, keys["both"], "/api/retrieve", {"query": BEES_QUESTION, "top_k": 10, "book": "bees"})

    assert by_default.status_code == 200 and by_default.json()["retrieved_chunks"], by_default.text
    assert not any(bees(c["content_text"]) for c in by_default.json()["retrieved_chunks"])  # its first book
    for response in (by_header, by_field):
        assert response.status_code == 200, response.text
        chunks = response.json()["retrieved_chunks"]
        assert chunks and all(bees(c["content_text"]) for c in chunks)
    assert set(by_field.json()) == set(by_default.json())  # the contract's body, nothing added


def test_an_unknown_book_is_404_and_a_book_the_key_does_not_hold_403(keys: dict[str, str],
                                                                     client: TestClient) -> None:
    body = {"query": BEES_QUESTION}
    cases = [(keys["bees"], {"X-Book": "default"}, {}, 403, "BOOK_NOT_ALLOWED"),
             (keys["robots"], {"X-Book": "bees"}, {}, 403, "BOOK_NOT_ALLOWED"),
             (keys["robots"], {}, {"book": "bees"}, 403, "BOOK_NOT_ALLOWED"),
             (keys["both"], {"X-Book": "redux"}, {}, 404, "BOOK_NOT_FOUND"),
             (keys["both"], {}, {"book": "Not A Book"}, 404, "BOOK_NOT_FOUND"),
             (keys["both"], {}, {"book": 7}, 404, "BOOK_NOT_FOUND")]
    for key, headers, extra, status, code in cases:
        for path in ("/api/retrieve", "/api/answer", "/api/tools/perform_retrieval"):
            response = post(client, key, path, {**body, **extra}, **headers)
            assert response.status_code == status, (path, headers, extra, response.text)
            assert response.json()["code"] == code and response.json()["recoverable"] is False
    assert client.get("/api/tools", headers={"X-API-Key": keys["bees"], "X-Book": "default"}).status_code == 403


def test_answers_cite_only_the_keys_book(keys: dict[str, str], client: TestClient) -> None:
    mine = post(client, keys["bees"], "/api/answer", {"query": BEES_QUESTION})
    other = post(client, keys["robots"], "/api/answer", {"query": BEES_QUESTION})
    off = post(client, keys["bees"], "/api/answer", {"query": ROBOT_QUESTION})

    assert mine.status_code == other.status_code == off.status_code == 200
    assert mine.json()["sources"] and all(s["chapter"] in BEES_CHAPTERS for s in mine.json()["sources"])
    assert "centrifugal" in mine.json()["answer"]
    assert "centrifugal" not in other.json()["answer"]  # its own book's nearest sections, never the other's
    assert "ROS" not in off.json()["answer"]
    assert not any(s["chapter"] in BEES_CHAPTERS for s in other.json()["sources"])
    assert all(s["chapter"] in BEES_CHAPTERS for s in off.json()["sources"])


def test_a_session_stays_in_its_book(keys: dict[str, str], client: TestClient) -> None:
    started = post(client, keys["both"], "/api/answer", {"query": BEES_QUESTION, "start_session": True},
                   **{"X-Book": "bees"})
    session_id = started.json()["session_id"]
    same_book = post(client, keys["both"], "/api/answer", {"query": "And how is the hive smoked?",
                                                            "session_id": session_id}, **{"X-Book": "bees"})
    other_book = post(client, keys["both"], "/api/answer", {"query": "And how is it smoked?",
                                                             "session_id": session_id})

    assert same_book.status_code == 200 and same_book.json()["session_id"] == session_id
    assert other_book.status_code == 404 and other_book.json()["code"] == "SESSION_NOT_FOUND"


def test_a_selection_from_another_book_is_never_a_source(keys: dict[str, str], client: TestClient) -> None:
    selected = "Uncap the frames with a hot knife, spin them in a centrifugal extractor"
    in_book = post(client, keys["bees"], "/api/answer", {"query": "What does this mean?", "selected_text": selected})
    elsewhere = post(client, keys["robots"], "/api/answer", {"query": "What does this mean?",
                                                             "selected_text": selected})

    assert in_book.status_code == elsewhere.status_code == 200
    assert any(s["chapter"] == "Harvesting Honey" for s in in_book.json()["sources"])
    assert not any(s["chapter"] in BEES_CHAPTERS for s in elsewhere.json()["sources"])


def mcp_call(client: TestClient, key: str, method: str, params: dict[str, Any], **headers: str) -> Any:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "bookrag-tests", "version": "1.0"}}
    response = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": method,
                                         "params": {**params, "_meta": meta}},
                           headers={"X-API-Key": key, "Accept": "application/json, text/event-stream",
                                    "MCP-Protocol-Version": "2026-07-28", "Host": "127.0.0.1", "Mcp-Method": method,
                                    **({"Mcp-Name": params["name"]} if "name" in params else {}), **headers})
    assert response.status_code == 200, response.text
    return response.json()["result"]


def test_mcp_serves_the_keys_book_and_names_it(keys: dict[str, str], client: TestClient) -> None:
    call = {"name": "retrieve_book_content", "arguments": {"query": BEES_QUESTION, "top_k": 10}}
    mine = mcp_call(client, keys["bees"], "tools/call", call)
    other = mcp_call(client, keys["robots"], "tools/call", call)
    listed = {t["name"]: t["description"] for t in mcp_call(client, keys["bees"], "tools/list", {})["tools"]}
    contract = {t["name"]: t["description"] for t in mcp_call(client, keys["robots"], "tools/list", {})["tools"]}

    answered = mcp_call(client, keys["bees"], "tools/call", {"name": "answer_question",
                                                            "arguments": {"query": BEES_QUESTION}})
    refused = mcp_call(client, keys["robots"], "tools/call", {"name": "answer_question",
                                                              "arguments": {"query": BEES_QUESTION}})
    assert "centrifugal" in answered["structuredContent"]["answer"]
    assert "centrifugal" not in refused["structuredContent"]["answer"]
    assert not any(s["chapter"] in BEES_CHAPTERS for s in refused["structuredContent"]["sources"])

    texts = [r["content"] for r in mine["structuredContent"]["results"]]
    assert texts and all(bees(t) for t in texts)
    assert not any(bees(r["content"]) for r in other["structuredContent"]["results"])
    assert f'the book "{BEES_TITLE}"' in listed["retrieve_book_context"]
    assert REFERENCE_BOOK not in json.dumps(listed) and REFERENCE_BOOK in contract["retrieve_book_context"]
    assert {k: v for k, v in listed.items() if k != "retrieve_book_context"} == \
        {k: v for k, v in contract.items() if k != "retrieve_book_context"}


def test_the_tool_list_names_the_keys_book(keys: dict[str, str], client: TestClient) -> None:
    def descriptions(key: str) -> str:
        response = client.get("/api/tools", headers={"X-API-Key": key})
        assert response.status_code == 200
        return json.dumps([t["function"]["description"] for t in response.json()["tools"]])

    served = descriptions(keys["bees"])
    assert f'the book \\"{BEES_TITLE}\\"' in served and REFERENCE_BOOK not in served
    assert REFERENCE_BOOK in descriptions(keys["robots"])


def test_the_log_feedback_and_report_are_per_book(keys: dict[str, str], client: TestClient) -> None:
    from bookrag.services.insights.report import build_report

    bees_answer = post(client, keys["bees"], "/api/answer", {"query": BEES_QUESTION})
    robot_answer = post(client, keys["robots"], "/api/answer", {"query": ROBOT_QUESTION})
    assert flush_question_log(5.0)
    bees_id, robot_id = bees_answer.headers["X-Query-Id"], robot_answer.headers["X-Query-Id"]

    # A vote names a query of its own book only: another book's query is unknown to it.
    crossed = post(client, keys["robots"], "/api/feedback", {"query_id": bees_id, "rating": "up"})
    assert crossed.status_code == 404 and crossed.json()["code"] == "QUERY_NOT_FOUND"
    assert post(client, keys["bees"], "/api/feedback", {"query_id": bees_id, "rating": "down"}).status_code == 201

    root = container_for(get_settings())
    since = time.time() - 600
    bees_report, robot_report = build_report(root.book("bees"), since), build_report(root, since)
    assert bees_report.questions == 1 and bees_report.votes_down == 1
    assert (bees_report.as_dict()["book"], robot_report.as_dict()["book"]) == ("bees", "default")
    assert robot_report.questions == 1 and robot_report.votes_down == 0
    records = {r.query_id: r.book for r in root.question_log.records(since)}  # type: ignore[union-attr]
    assert records == {bees_id: "bees", robot_id: "default"}


def test_health_lists_the_books_served(keys: dict[str, str], client: TestClient) -> None:
    post(client, keys["bees"], "/api/retrieve", {"query": BEES_QUESTION})
    post(client, keys["robots"], "/api/retrieve", {"query": BEES_QUESTION})

    books = client.get("/api/health").json()["books"]

    assert set(books) == {"default", "bees"} and all(books.values()) and books["default"] != books["bees"]
    assert container_for(get_settings()).books() == ["default", "bees"]
