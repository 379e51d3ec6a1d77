"""The habits real models have when they cite (issue 34), on a small book of our own with the real embedded
Qdrant, the local embedder and a scripted OpenAI-compatible model on 127.0.0.1: an overview section cited for
what its subsections say, a count in words of a cited list, and the bounds of both (a sibling section's fact,
a wrong count)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from bookrag.answering.agent import BookRAGAgent
from bookrag.config.settings import Settings, load_settings
from bookrag.services.container import container_for
from tests.support.agents import llm_agent
from tests.support.stubs import Recorded, Reply, StubServer
from tests.support.upstreams import chat_reply

PATH = "/v1/chat/completions"
DOCS = Path(__file__).resolve().parents[1] / "fixtures" / "grounding-book" / "docs"
OVERVIEW = "The tool supports several storage engines, each with its own strengths"
RECORDS = "Each record has the following fields"
QUESTION = "Which storage engines does the tool support and what does a record hold?"


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def model(*sentences: tuple[str, str]) -> Callable[[Recorded], Reply]:
    """A model that writes each (claim, passage), citing the document it was shown that holds the passage."""

    def reply(req: Recorded) -> Reply:
        body = req.json()
        text = " ".join(str(m.get("content") or "") for m in body["messages"])
        docs = re.findall(r'<document id="(S\d+)"[^>]*>(.*?)</document>', text, re.DOTALL)
        missing = [p for _, p in sentences if not any(_words(p) in _words(d) for _, d in docs)]
        if missing and body.get("tools"):
            return chat_reply(req, None, [{"id": f"c{i}", "type": "function", "function": {
                "name": "retrieve_book_context", "arguments": json.dumps({"query": p})}}
                for i, p in enumerate(missing)])
        out = [claim.rstrip(".") + f" [{next(label for label, d in docs if _words(p) in _words(d))}]."
               for claim, p in sentences]
        return chat_reply(req, " ".join(out))

    return reply


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    from bookrag.ingestion.ingestor import Ingestor

    settings = load_settings(qdrant_path=tmp_path_factory.mktemp("habits") / "qdrant", embedding_provider="local")
    Ingestor(settings, container_for(settings).embedder, container_for(settings).store).run(DOCS)
    return settings


@pytest.fixture
def agent(store: Settings, stub: StubServer) -> BookRAGAgent:
    return llm_agent(store, llm_provider="openai", openai_api_key="llm-key-habits",
                     openai_base_url=stub.url + "/v1", llm_timeout_s=5.0)


def plain(answer: str) -> str:
    return _words(re.sub(r"\[\d+\]", " ", answer))


def test_an_overview_cited_for_its_subsections_facts_is_kept_and_a_siblings_is_not(agent: BookRAGAgent,
                                                                                  stub: StubServer) -> None:
    # GIVEN a sentence citing the overview for what its two subsections say, and a backup fact (the sibling
    # section after them) cited to the same overview
    claim = ("The tool offers a ledger engine, which appends each write to an immutable journal for auditing, "
             "and a cache engine, which keeps hot records in memory and evicts the least recently used.")
    sibling = "Backups are kept for thirty days in cold storage and then deleted."
    stub.on(PATH, model((claim, OVERVIEW), (sibling, OVERVIEW)))

    # WHEN the agent checks the answer
    response = agent.run(QUESTION)

    # THEN the first stands as the model wrote it; the second is true elsewhere, not under the overview
    assert _words(claim) in plain(response.answer), response.answer
    assert "cold storage" not in response.answer and response.answer_mode == "generated"


def test_a_count_in_words_of_the_cited_list_is_kept_and_a_wrong_count_is_not(agent: BookRAGAgent,
                                                                             stub: StubServer) -> None:
    claim = "Each record has three fields: a key chosen by the writer, the payload bytes, and a stamp."
    wrong = "Records have five fields in all, the key among them."
    stub.on(PATH, model((claim, RECORDS), (wrong, RECORDS)))

    response = agent.run("What fields does a record have?")

    assert _words(claim) in plain(response.answer), response.answer
    assert "five" not in response.answer and response.answer_mode == "generated"
