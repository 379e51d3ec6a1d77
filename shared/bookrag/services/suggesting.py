"""Questions each page answers, found at ingest (issue 36): the widget offers them when a reader opens it on the page.

For every page of a store that has none yet (a new or re-embedded page; an unchanged page keeps its own), its
candidate questions (`text.page_questions`: its question headings, the terms it defines, its lists) are tried,
best first, against the agent over that very store, as a reader's click would ask them: a candidate is kept
when the chunks the agent would answer it from clear the agent's threshold and lead with this page
(`BookRAGAgent.context`). That is the retrieval the answer is built on, without writing the answer: the
answerer's statement scores embed every sentence of its eight chunks, which for every candidate of every page
tripled textbook-2's ingest time (282 s against 130 s, all 178 candidates answered in full), while this check
costs one query embedding. The full answer is what the tests ask of every question of the sample book, and
what `benchmarks/suggestions_bench.py` measures on textbook-2 (POST /api/answer, a citation to its page).

At most `PER_PAGE` are kept and `TRIES` tried per page. With a chat model configured, a kept question is
reworded by the model and the rewording kept only if it passes the same check. The questions are stored on the
page's chunks (`BookStore.set_page_suggestions`): they belong to the book version they were checked against,
and an atomic ingest stores them before readers switch to it.

Called by `bookrag ingest` (and the tests' indexed book) after the chunks are stored. Never imported on the
request path: `services.page_suggestions` reads what this wrote.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bookrag.adapters.store.port import SUGGESTIONS_FIELD
from bookrag.domain.models import ChunkPayload
from bookrag.errors import BookRAGError
from bookrag.observability import logger
from bookrag.text.page_questions import candidates

if TYPE_CHECKING:
    from bookrag.adapters.embedders import CachedEmbedder
    from bookrag.adapters.llm.port import ChatModel
    from bookrag.adapters.store.port import BookStore
    from bookrag.answering.agent import BookRAGAgent
    from bookrag.config.settings import Settings

PER_PAGE = 3
TRIES = 24  # each try is one query embedding and one search
_FIELDS = ("source_file", "chunk_index", "heading_path", "section_heading", "doc_title", "content_text",
           SUGGESTIONS_FIELD)
_REWORD = ("Reword this question as a reader of the book would ask it, in one short sentence, keeping its "
           "meaning and every name in it. Reply with the question only.\n\nQuestion: {question}")


@dataclass
class SuggestReport:
    pages: int = 0  # pages given questions now (the others kept theirs)
    with_questions: int = 0
    questions: int = 0
    asked: int = 0
    seconds: float = 0.0
    per_page: dict[str, list[str]] = field(default_factory=dict)


def _agent(settings: Settings, embedder: CachedEmbedder, store: BookStore) -> BookRAGAgent:
    """The extractive agent over `store`, whatever answerer the settings configure: the book's own sentences are
    the check, and a page's questions must not cost a model call each."""
    from bookrag.answering.agent import BookRAGAgent
    from bookrag.answering.answerers.extractive import ExtractiveAnswerer
    from bookrag.retrieval.retriever import Retriever

    # The container's embedder as it is: a batch of a page's candidates at once measured slower than one at a
    # time (the local model pads a batch to its longest text: 51 s of CPU against 15 s on textbook-2).
    retriever = Retriever(settings, embedder, store)
    return BookRAGAgent(settings, retriever, ExtractiveAnswerer(retriever))


def leads_to(agent: BookRAGAgent, question: str, source_file: str) -> bool:
    """Whether the agent would answer `question` from chunks that clear its threshold, `source_file` first."""
    try:
        hits = agent.context(question)
    except BookRAGError:
        return False
    return bool(hits) and hits[0].payload.source_file == source_file


def _reworded(chat: ChatModel, question: str) -> str | None:
    from bookrag.adapters.llm.port import ChatRequest, Message
    from bookrag.domain.deadline import Deadline

    request = ChatRequest(messages=(Message(role="user", content=_REWORD.format(question=question)),),
                          max_tokens=60, attempts=1)
    try:
        text = chat.complete(request, Deadline(10.0)).text.strip().strip('"')
    except BookRAGError:
        return None
    return text if text.endswith("?") and 3 <= len(text.split()) <= 25 and "\n" not in text else None


def suggest_pages(settings: Settings, embedder: CachedEmbedder, store: BookStore,
                  chat: ChatModel | None = None) -> SuggestReport:
    """Find and store the questions of every page that has none yet. Raises `StoreError`s."""
    started = time.perf_counter()
    report = SuggestReport()
    pages: dict[str, list[ChunkPayload]] = defaultdict(list)
    done: set[str] = set()
    for raw in store.scroll_payloads(_FIELDS):
        source = str(raw.get("source_file") or "")
        pages[source].append(ChunkPayload.from_dict(raw))
        if raw.get(SUGGESTIONS_FIELD) is not None:
            done.add(source)
    todo = sorted(set(pages) - done)
    if not todo:
        return report
    agent = _agent(settings, embedder, store)
    for source in todo:
        kept: list[str] = []
        for question in candidates(pages[source])[:TRIES]:
            report.asked += 1
            if not leads_to(agent, question, source):
                continue
            if chat is not None and (better := _reworded(chat, question)) and leads_to(agent, better, source):
                question = better
            kept.append(question)
            if len(kept) == PER_PAGE:
                break
        store.set_page_suggestions(source, kept)
        report.per_page[source] = kept
        report.pages += 1
        report.with_questions += bool(kept)
        report.questions += len(kept)
    store.finish_ingest()
    report.seconds = time.perf_counter() - started
    # Debug, not info: the logger writes to stdout, which `bookrag ingest --json` keeps for its one JSON document.
    logger.debug("page questions", extra={"pages": report.pages, "with_questions": report.with_questions,
                                         "asked": report.asked, "seconds": round(report.seconds, 2)})
    return report
