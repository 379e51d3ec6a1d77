"""The questions a page answers (issue 36), on the sample book as `bookrag ingest` leaves it (the session's indexed
book, its questions found as the CLI finds them): every one of them is answered by POST /api/answer with a
citation to its page, and GET /api/pages/suggestions finds a page's questions by its address."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from bookrag.adapters.store.port import SUGGESTIONS_FIELD
from bookrag.services.container import current
from bookrag.web.app import create_app
from tests.support.stubs import Recorded, Reply, StubServer
from tests.support.upstreams import chat_reply

BASE = "http://localhost:3000/docs"


@pytest.fixture
def client(book_env: Any) -> TestClient:
    return TestClient(create_app("agent"))


def _stored() -> dict[str, list[str]]:
    """Each page's questions as the store holds them (every chunk of a page carries them)."""
    return {str(p["source_file"]): list(p.get(SUGGESTIONS_FIELD) or [])
            for p in current().store.scroll_payloads(["source_file", SUGGESTIONS_FIELD])}


def test_nearly_every_page_has_questions_and_each_is_answered_from_its_page(client: TestClient) -> None:
    pages = _stored()
    assert sum(bool(q) for q in pages.values()) >= 0.9 * len(pages)
    asked = 0
    for source_file, questions in pages.items():
        assert len(questions) <= 3
        for question in questions:
            body = client.post("/api/answer", json={"query": question}).json()
            cited = [s["source_file"] for s in body["sources"]]
            assert not body["is_refusal"] and source_file in cited, (question, source_file, cited)
            asked += 1
    assert asked >= len(pages)


def test_a_page_address_on_any_host_finds_its_questions(client: TestClient) -> None:
    page = "module-1-ros2/nodes-topics.md"
    stored = _stored()[page]
    title = next(str(p["doc_title"]) for p in current().store.scroll_payloads(["doc_title"], page))
    label = current().store.book_version().label  # type: ignore[union-attr]
    for url in (f"{BASE}/module-1-ros2/nodes-topics", "http://127.0.0.1:43117/docs/module-1-ros2/nodes-topics/",
                f"{BASE}/module-1-ros2/nodes-topics?tab=humble#topics"):
        response = client.get("/api/pages/suggestions", params={"url": url})
        assert response.status_code == 200, url
        assert response.json() == {"url": f"{BASE}/module-1-ros2/nodes-topics", "title": title,
                                   "suggestions": stored, "book_version": label}
    assert stored and response.headers["X-Book-Version"] == label
    assert response.headers["Cache-Control"] == "public, max-age=300"


def test_an_address_outside_the_book_has_none_and_a_bad_one_is_the_envelope(client: TestClient) -> None:
    outside = client.get("/api/pages/suggestions", params={"url": "http://localhost:3000/blog/2026/welcome"})
    assert outside.status_code == 200 and outside.json()["suggestions"] == [] and outside.json()["url"] is None
    for params in ({}, {"url": ""}, {"url": "x" * 2001}):
        response = client.get("/api/pages/suggestions", params=params)
        assert response.status_code == 400 and response.json()["code"] == "INVALID_REQUEST", params


def test_the_check_answers_as_the_agent_does_less_the_quotes(book_env: Any) -> None:
    # GIVEN the check's agent and the agent POST /api/answer runs, over the same retriever and answerer
    from bookrag.answering.agent import BookRAGAgent
    from bookrag.services.suggesting import _agent, _Remembering

    container = current()
    checking = _agent(book_env, _Remembering(container.embedder, True), container.store)
    agent = BookRAGAgent(book_env, checking.retriever, checking.answerer)
    asked = [q for questions in _stored().values() for q in questions]
    asked += ["What is the capital of France?", "How do I bake sourdough bread?", "What is a node?"]
    quoted = refused = 0
    for question in asked:
        # WHEN each is asked of both
        check, answer = checking.run(question), agent.run(question)
        # THEN the same answer, refusal and sources, only without the quotes (which the check never reads)
        without_quotes = {"sources": {"__all__": {"quotes"}}}
        assert check.model_dump(exclude=without_quotes) == answer.model_dump(exclude=without_quotes), question
        assert not any(source.quotes for source in check.sources)
        quoted += any(source.quotes for source in answer.sources)
        refused += answer.is_refusal
    assert quoted >= len(asked) - 3 and refused >= 1


def _small_book(root: Path) -> Path:
    book = root / "docs"
    (book / "robots").mkdir(parents=True)
    (book / "robots" / "balance.md").write_text(
        "# Balance\n\n## The support polygon\n\nThe **support polygon** is the convex hull of the feet's contact "
        "points with the ground. A standing robot stays balanced while its centre of mass projects inside it.\n",
        encoding="utf-8")
    (book / "robots" / "sensing.md").write_text(
        "# Sensing\n\n## Inertial sensing\n\nAn **inertial measurement unit** is a sensor that measures angular "
        "velocity with gyroscopes and linear acceleration with accelerometers.\n", encoding="utf-8")
    return book


def test_an_atomic_ingest_publishes_a_version_with_its_questions(use_env: Any, tmp_path: Path) -> None:
    # GIVEN a small book, ingested as a new version by the CLI
    from typer.testing import CliRunner

    from bookrag.devtools.cli import app

    book = _small_book(tmp_path)
    use_env(QDRANT_PATH=str(tmp_path / "qdrant"), EMBEDDING_PROVIDER="local", QUESTION_LOG="off")
    result = CliRunner().invoke(app, ["ingest", str(book), "--atomic"])
    assert result.exit_code == 0, result.output
    # THEN the live version readers switched to holds each page's questions
    response = TestClient(create_app("agent")).get("/api/pages/suggestions",
                                                   params={"url": f"{BASE}/robots/balance"})
    assert response.json()["suggestions"] == ["What is the support polygon?"]
    assert "page questions: " in result.output


def _rewording_model(req: Recorded) -> Reply:
    asked = req.json()["messages"][-1]["content"]
    # One rewording the book answers from the same page, one that drifts off the book.
    return chat_reply(req, "How is a robot's support polygon defined?" if "support polygon" in asked
                      else "What is the capital of France?")


def test_a_configured_model_words_a_question_kept_only_if_it_still_leads_to_its_page(stub: StubServer,
                                                                                     tmp_path: Path) -> None:
    # GIVEN a book and a chat model configured, whose rewordings are checked like any candidate
    from bookrag.config.settings import load_settings
    from bookrag.ingestion.ingestor import Ingestor
    from bookrag.services.container import container_for
    from bookrag.services.suggesting import suggest_pages

    stub.on("/v1/chat/completions", _rewording_model)
    settings = load_settings(qdrant_path=str(tmp_path / "qdrant"), embedding_provider="local", llm_provider="openai",
                             openai_api_key="sk-test-key-0123456789", openai_base_url=stub.url + "/v1")
    container = container_for(settings)
    Ingestor(settings, container.embedder, container.store).run(_small_book(tmp_path))
    # WHEN the pages' questions are found
    report = suggest_pages(settings, container.embedder, container.store, container.chat_model)
    # THEN the model's wording is kept where it still leads to the page, the page's own question elsewhere
    assert report.per_page == {"robots/balance.md": ["How is a robot's support polygon defined?"],
                               "robots/sensing.md": ["What is an inertial measurement unit?",
                                                     "What is inertial sensing?"]}
    assert len(stub.calls("/v1/chat/completions")) == 3  # one per question kept


def test_a_question_its_page_leads_retrieval_to_but_the_answer_quotes_elsewhere_is_not_kept(tmp_path: Path) -> None:
    # GIVEN a chapter and the quiz that asks about it: the quiz's question is the quiz's own text, so retrieval
    # leads with the quiz, while the answer quotes the chapter (a quiz page never leads an answer)
    from bookrag.config.settings import load_settings
    from bookrag.ingestion.ingestor import Ingestor
    from bookrag.services.container import container_for
    from bookrag.services.suggesting import _agent, _Remembering, leads_to, suggest_pages

    book = _small_book(tmp_path)
    asked = "How does a standing robot stay balanced over its support polygon?"
    (book / "robots" / "quiz.md").write_text(f"# Quiz: Balance\n\n## Review Questions\n\n- {asked}\n",
                                             encoding="utf-8")
    settings = load_settings(qdrant_path=str(tmp_path / "qdrant"), embedding_provider="local")
    container = container_for(settings)
    Ingestor(settings, container.embedder, container.store).run(book)
    agent = _agent(settings, _Remembering(container.embedder, True), container.store)
    assert leads_to(agent, asked, "robots/quiz.md")
    assert "robots/balance.md" in [s.source_file for s in agent.run(asked).sources]
    # WHEN the pages' questions are found
    report = suggest_pages(settings, container.embedder, container.store)
    # THEN the quiz keeps no question the answer does not cite it for, and each kept question cites its page
    assert asked not in report.per_page["robots/quiz.md"]
    for page, questions in report.per_page.items():
        for question in questions:
            assert page in [s.source_file for s in agent.run(question).sources], (page, question)
    assert report.per_page["robots/balance.md"]


class _Recording:
    """The real local model, recording the texts of each call: what the check asks of it."""

    def __init__(self, model: Any) -> None:
        self.model, self.name, self.dimension = model, model.name, model.dimension
        self.calls: list[list[str]] = []

    def embed_documents(self, texts: Any) -> Any:
        self.calls.append(list(texts))
        return self.model.embed_documents(texts)

    def embed_query(self, text: str) -> Any:
        self.calls.append([text])
        return self.model.embed_query(text)


def test_the_statements_every_answer_reads_and_the_questions_are_embedded_together(local_embedder: Any,
                                                                                   tmp_path: Path) -> None:
    # GIVEN two pages whose questions' answers read different chunks
    from bookrag.adapters.embedders import CachedEmbedder
    from bookrag.config.settings import load_settings
    from bookrag.ingestion.ingestor import Ingestor
    from bookrag.services.container import container_for
    from bookrag.services.suggesting import suggest_pages

    settings = load_settings(qdrant_path=str(tmp_path / "qdrant"), embedding_provider="local")
    container = container_for(settings)
    Ingestor(settings, container.embedder, container.store).run(_small_book(tmp_path))
    model = _Recording(local_embedder.inner)
    # WHEN the pages' questions are found
    report = suggest_pages(settings, CachedEmbedder(model, 0), container.store)
    # THEN the book's statements (the texts that are not the candidate questions) went to the model together (one
    # call for a book this small):
    # an answer's own call is a few short texts of uneven length, padded to the longest (textbook-2: 45.7 s of
    # CPU in 130 such calls, 17.7 s in one); and both pages' candidate questions in one call before them
    assert report.questions == report.answered == 3
    statements = [call for call in model.calls if any(not text.endswith("?") for text in call)]
    assert len(statements) == 1, statements
    assert report.embedded_ahead == len(statements[0])
    questions = [call for call in model.calls if all(text.endswith("?") for text in call)]
    assert len(questions) == 1 and model.calls[0] == questions[0], model.calls
    assert {"What is the support polygon?", "What is an inertial measurement unit?"} <= set(questions[0])


class _Threads(_Recording):
    """The real local model, recording each call's texts, thread and BLAS threads in effect. Its first `together`
    calls wait for each other (a barrier, not a sleep): they pass only if that many run at once."""

    def __init__(self, model: Any, together: int) -> None:
        import threading

        super().__init__(model)
        self.made: list[tuple[list[str], int, int]] = []
        self._lock = threading.Lock()
        self._together = threading.Barrier(together)

    def embed_documents(self, texts: Any) -> Any:
        import threading

        from threadpoolctl import threadpool_info

        blas = min(int(pool["num_threads"]) for pool in threadpool_info() if pool["user_api"] == "blas")
        with self._lock:
            self.made.append((list(texts), threading.get_ident(), blas))
            waits = len(self.made) <= self._together.parties
        if waits:
            self._together.wait(timeout=120)  # BrokenBarrierError when the calls ran one after another
        return super().embed_documents(texts)


def test_the_statements_embedded_ahead_are_the_same_calls_spread_over_the_cores(local_embedder: Any,
                                                                               monkeypatch: Any) -> None:
    # GIVEN the statements ahead in three calls of uneven lengths (shortest first, as `_embed_ahead` makes them)
    import threading

    from bookrag.adapters.embedders import CachedEmbedder
    from bookrag.services import suggesting
    from bookrag.services.suggesting import _Remembering

    calls = [[f"A robot number {i} balances." for i in range(5)],
             [f"The support polygon of robot {i} is the convex hull of its feet's contacts." for i in range(4)],
             ["An inertial measurement unit " + "measures angular velocity and linear acceleration, " * 6]]
    monkeypatch.setattr(suggesting.os, "cpu_count", lambda: 2)
    model = _Threads(local_embedder.inner, together=2)
    # WHEN they are embedded ahead
    remembering = _Remembering(CachedEmbedder(model, 0), True)
    remembering.embed_apart(calls)
    # THEN each call is made as given, two at once (the model's barrier let them through), off the calling
    # thread with one BLAS thread. Which of two threads records first is the scheduler's: not checked.
    assert sorted(texts for texts, _, _ in model.made) == sorted(calls)
    assert {blas for _, _, blas in model.made} == {1}
    threads = {thread for _, thread, _ in model.made}
    assert threading.get_ident() not in threads and len(threads) == 2
    # and the vectors are the ones the same calls give in turn, to float rounding: one BLAS thread against several
    # sums in another order on some CPUs (bit for bit on an Intel Xeon, within 1e-7 on an AMD EPYC)
    for texts in calls:
        np.testing.assert_allclose(remembering.embed_documents(texts), local_embedder.inner.embed_documents(texts),
                                   rtol=0, atol=1e-6)
    assert len(model.made) == 3  # all remembered
