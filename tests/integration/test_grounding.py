"""The grounding check on LLM drafts, with a scripted OpenAI-compatible model on 127.0.0.1.

Each stub model answers the same question about building a ROS 2 package: one invents facts, one
mixes an off-book claim into a faithful one, one cites the wrong chunk, one copies the book.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from bookrag.answering.agent import BookRAGAgent
from bookrag.config.settings import Settings
from bookrag.contracts.agent import REFUSAL
from bookrag.services.container import container_for
from tests.support.agents import llm_agent
from tests.support.stubs import Recorded, Reply, StubServer

PATH = "/v1/chat/completions"
QUESTION = "I edited a Python file in my ROS 2 package. How do I build so that my changes take effect?"
FAITHFUL = "Build with colcon build --symlink-install so that edits to Python files take effect without rebuilding"
INVENTED = "The build system compiles Python into WebAssembly bytecode and uploads it to a Kubernetes cluster"


def completion(content: str) -> dict[str, Any]:
    return {"id": "c", "object": "chat.completion", "model": "stub",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]}


def documents(req: Recorded) -> list[tuple[str, str]]:
    text = " ".join(str(m.get("content") or "") for m in req.json()["messages"])
    return re.findall(r'<document id="(S\d+)"[^>]*>(.*?)</document>', text, re.DOTALL)


def model(write: Callable[[dict[str, str]], str]) -> Callable[[Recorded], Reply]:
    """A model whose answer is computed from the documents it was shown (label -> text)."""

    def reply(req: Recorded) -> Reply:
        return Reply(200, completion(write(dict(documents(req)))))

    return reply


def supporting(docs: dict[str, str]) -> str:
    return next(label for label, body in docs.items() if "--symlink-install" in body)


def other(docs: dict[str, str]) -> str:
    return next(label for label, body in docs.items() if "--symlink-install" not in body and "colcon" not in body)


@pytest.fixture
def agent(book_env: Settings, stub: StubServer) -> BookRAGAgent:
    return llm_agent(book_env, llm_provider="openai", openai_api_key="llm-key-grounding",
                     openai_base_url=stub.url + "/v1", llm_timeout_s=1.0)


def test_faithful_answer_is_kept_with_the_span_it_rests_on(agent: BookRAGAgent, stub: StubServer) -> None:
    stub.on(PATH, model(lambda d: f"{FAITHFUL} [{supporting(d)}]."))

    response = agent.run(QUESTION)

    assert not response.is_refusal and "--symlink-install" in response.answer
    (source,) = response.sources
    assert source.quotes, "a grounded sentence carries the span that supports it"
    for quote in source.quotes:
        assert quote.fragment_url.startswith(source.source_url) and ":~:text=" in quote.fragment_url


def test_invented_facts_give_the_books_own_sentences_not_a_refusal(agent: BookRAGAgent, stub: StubServer) -> None:
    # GIVEN a model whose whole answer is invented, over chunks that do answer the question
    stub.on(PATH, model(lambda d: f"{INVENTED} [{supporting(d)}]. It also signs every package with GPG keys "
                                  f"stored on the robot [{supporting(d)}]."))

    # WHEN the agent checks it
    response = agent.run(QUESTION)

    # THEN the reader gets the extractive answer from the same chunks, quoted and marked so, not the refusal
    assert not response.is_refusal and response.answer != REFUSAL and response.answer_mode == "quoted"
    assert "WebAssembly" not in response.answer and "GPG" not in response.answer
    quotes = [q for s in response.sources for q in s.quotes]
    assert quotes and all(":~:text=" in q.fragment_url for q in quotes), "the book's sentences, highlighted"


def test_off_book_claim_mixed_into_a_faithful_answer_is_dropped(agent: BookRAGAgent, stub: StubServer) -> None:
    stub.on(PATH, model(lambda d: f"{FAITHFUL} [{supporting(d)}]. {INVENTED} [{supporting(d)}]."))

    response = agent.run(QUESTION)

    assert not response.is_refusal and "--symlink-install" in response.answer
    assert "WebAssembly" not in response.answer and "Kubernetes" not in response.answer


def test_a_claim_cited_to_the_wrong_chunk_is_dropped(agent: BookRAGAgent, stub: StubServer) -> None:
    # The faithful sentence cites a retrieved chunk that does not say it.
    stub.on(PATH, model(lambda d: f"{FAITHFUL} [{other(d)}]."))

    response = agent.run(QUESTION)

    assert not response.is_refusal and response.answer_mode == "quoted", "the book's own sentences stand in"


def test_a_changed_number_is_not_supported(agent: BookRAGAgent, stub: StubServer) -> None:
    # Same words as the book's setup page, a wrong release number: the number rule catches it.
    stub.on(PATH, model(lambda d: "ROS 2 Humble targets Ubuntu 19.10 "
                                  f"[{next(k for k, v in d.items() if '22.04' in v)}]."))

    response = agent.run("Which Ubuntu release should I install to use ROS 2 Humble?")

    assert "19.10" not in response.answer and response.answer_mode == "quoted"


@pytest.mark.parametrize("question", [
    "What GPU do I need for Isaac Sim?",  # the book answers it: the extractive answerer quotes it
    "How do ROS 2 nodes talk to a toaster over Bluetooth?",  # it does not: the extractive answerer refuses
])
def test_an_ungrounded_draft_is_refused_only_when_the_extractive_answerer_would_refuse(
        agent: BookRAGAgent, book_env: Settings, stub: StubServer, question: str) -> None:
    # GIVEN a model that invents its whole answer, citing the first document it was shown
    asked: list[str] = []

    def invent(docs: dict[str, str]) -> str:
        asked.append(question)
        return f"{INVENTED} [{next(iter(docs))}]."

    stub.on(PATH, model(invent))

    # WHEN the agent checks it, and the extractive agent answers the same question over the same book
    response = agent.run(question)
    extractive = container_for(book_env).agent.run(question)

    # THEN the draft was read and dropped, and the reader is refused exactly when the book's own sentences
    # would be: the refusal then says the model's answer was ungrounded, else the book's sentences stand in
    assert asked, "the model was asked (the retrieval gate let the question through)"
    assert "WebAssembly" not in response.answer
    assert response.is_refusal == extractive.is_refusal
    if response.is_refusal:
        assert response.refusal_reason == "ungrounded_answer"
    else:
        assert response.answer_mode == "quoted" and response.answer == extractive.answer
