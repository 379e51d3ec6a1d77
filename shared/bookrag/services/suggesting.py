"""Questions each page answers, found at ingest (issue 36): the widget offers them when a reader opens it on the page.

For every page of a store that has none yet (a new or re-embedded page; an unchanged page keeps its own), its
candidate questions (`text.page_questions`: its question headings, the terms it defines, its lists) are tried,
best first, against the extractive agent over that very store, as a reader's click would ask them. A candidate
is kept only when the agent answers it citing this page (`BookRAGAgent.run`, what POST /api/answer runs): the
chunks it retrieves may lead with the page while the answer's statements come from another page (a quiz's
question is answered from its chapter), and 23 of textbook-2's 138 questions were such when the check stopped
at the retrieval. The full answer is asked only of a candidate whose retrieval already clears the agent's
threshold and leads with the page (`BookRAGAgent.context`: one query embedding, one search), and no more once
a page has `PER_PAGE`.

What makes that affordable (`_Remembering`): the answerer embeds every statement of its eight chunks, and the
candidates of one page read much the same chunks, so each statement's vector is made once per ingest; the
statements every expected answer reads are embedded ahead, all pages' together in slices of similar length
(`_embed_ahead`: an answer's own call pads a few uneven texts to the longest), a slice per core, each on one BLAS
thread (`embed_apart`: the same calls, so the same vectors); the candidates' queries are embedded in rounds, every
page's next six in one batch (the local model's query vector is its document vector); and the check's agent
leaves out the quotes, which neither the refusal nor the pages cited depend on (`_agent`).

At most `PER_PAGE` are kept and `TRIES` tried per page. With a chat model configured, a kept question is
reworded by the model and the rewording kept only if it passes the same check. The questions are stored on the
page's chunks (`BookStore.set_page_suggestions`): they belong to the book version they were checked against,
and an atomic ingest stores them before readers switch to it.

Called by `bookrag ingest` (and the tests' indexed book) after the chunks are stored. Never imported on the
request path: `services.page_suggestions` reads what this wrote.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from bookrag.adapters.embedders import CachedEmbedder
from bookrag.adapters.store.port import SUGGESTIONS_FIELD
from bookrag.domain.models import ChunkPayload, SearchHit
from bookrag.errors import BookRAGError
from bookrag.observability import logger
from bookrag.text.page_questions import candidates

if TYPE_CHECKING:
    from bookrag.adapters.llm.port import ChatModel
    from bookrag.adapters.store.port import BookStore
    from bookrag.answering.agent import BookRAGAgent
    from bookrag.config.settings import Settings

PER_PAGE = 3
TRIES = 24  # each try is one query embedding and one search; the full answer only when those lead to the page
NEAR_TRIES = 3  # full answers for a page no candidate leads to
AHEAD_SLICE = 256  # statements embedded ahead per call (`_embed_ahead`)
QUERY_BATCH = 6  # a page's next candidates embedded together: most pages keep three of their first six
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
    answered: int = 0  # candidates whose retrieval led to their page, then answered in full
    embedded_ahead: int = 0  # statements embedded before the answers, in one call (`_embed_ahead`)
    seconds: float = 0.0
    per_page: dict[str, list[str]] = field(default_factory=dict)


class _Remembering(CachedEmbedder):
    """The container's model, remembering every vector it makes for one ingest's check."""

    def __init__(self, embedder: CachedEmbedder, local: bool) -> None:
        super().__init__(embedder.inner, 0)
        self._local = local
        self._queries: dict[str, np.ndarray] = {}
        self._documents: dict[str, np.ndarray] = {}

    def expect(self, questions: Sequence[str]) -> None:
        """Embed the questions about to be asked in one call (a local model only: a remote model embeds a query
        apart from a document, and is not paid for what is never asked)."""
        new = [q for q in dict.fromkeys(questions) if q not in self._queries]
        if self._local and new:
            self._queries.update(zip(new, self.inner.embed_documents(new), strict=True))

    def embed_apart(self, calls: list[list[str]]) -> None:
        """Embed each list of texts in a model call of its own, as `embed_documents` would, the calls spread
        over the cores, each on one BLAS thread.

        A call's vectors are the ones it gives in turn, whatever thread makes it, to float rounding: on some CPUs
        (an AMD EPYC) the BLAS thread count changes the order of a product's sums and so the last bits (about
        1e-8 of a unit vector's components), far below any margin the check decides on; only the time differs. OpenBLAS
        splits each product between its threads, and leaves a core idle through the element-wise passes (GELU,
        LayerNorm, softmax: a quarter of the forward pass), which a call on each core does not."""
        calls = [new for texts in calls if (new := [t for t in dict.fromkeys(texts) if t not in self._documents])]
        workers = min(len(calls), os.cpu_count() or 1)
        if workers < 2:
            for texts in calls:
                self.embed_documents(texts)
            return
        from threadpoolctl import threadpool_limits

        # The longest texts first (the calls come shortest first): the calls left for the end are short,
        # so the cores finish nearly together.
        calls.sort(key=lambda texts: -max(map(len, texts)))
        with threadpool_limits(1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
            for texts, vectors in zip(calls, pool.map(self.inner.embed_documents, calls), strict=True):
                self._documents.update(zip(texts, vectors, strict=True))

    def embed_query(self, text: str) -> np.ndarray:
        if text not in self._queries:
            self._queries[text] = self.inner.embed_query(text)
        return self._queries[text]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self._documents]
        if new:
            self._documents.update(zip(new, self.inner.embed_documents(new), strict=True))
        return np.asarray([self._documents[t] for t in texts], dtype=np.float32).reshape(len(texts), self.dimension)


def _agent(settings: Settings, embedder: _Remembering, store: BookStore) -> BookRAGAgent:
    """The extractive agent over `store`, whatever answerer the settings configure: the book's own sentences are
    the check, and a page's questions must not cost a model call each."""
    from bookrag.answering.agent import BookRAGAgent
    from bookrag.answering.answerers.extractive import ExtractiveAnswerer
    from bookrag.contracts.agent import Quote
    from bookrag.retrieval.retriever import Retriever

    class Checking(BookRAGAgent):
        """The agent as POST /api/answer runs it, less its quotes: the check reads only whether an answer
        refuses and which pages it cites, which a source's quotes (spans made into links, each with the
        page's text above it read from the store) never change. 1.3 of the step's 33 s, profiled."""

        def _quotes(self, hit: SearchHit, spans: list[tuple[int, int]],
                    support: dict[tuple[str, int, int], float]) -> list[Quote]:
            return []

    retriever = Retriever(settings, embedder, store)
    return Checking(settings, retriever, ExtractiveAnswerer(retriever))


def _hits(agent: BookRAGAgent, question: str) -> list[SearchHit]:
    """The chunks the agent would answer `question` from (those that clear its threshold)."""
    try:
        return agent.context(question)
    except BookRAGError:
        return []


def _retrieved(agent: BookRAGAgent, question: str) -> list[str]:
    """The pages of the chunks the agent would answer `question` from."""
    return [hit.payload.source_file for hit in _hits(agent, question)]


def leads_to(agent: BookRAGAgent, question: str, source_file: str) -> bool:
    """Whether the agent would answer `question` from chunks that clear its threshold, `source_file` first."""
    return _retrieved(agent, question)[:1] == [source_file]


def answers_from(agent: BookRAGAgent, question: str, source_file: str, *, first: bool = False) -> bool:
    """Whether the agent answers `question` citing `source_file` (`first`: before any other page), as POST
    /api/answer would. Its retrieval is searched again: a search costs a few milliseconds, and the statements'
    vectors are remembered."""
    try:
        response = agent.run(question)
    except BookRAGError:
        return False
    cited = [s.source_file for s in response.sources]
    return not response.is_refusal and source_file in (cited[:1] if first else cited)


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


@dataclass
class _Tries:
    """A page's candidates, retrieved in order as far as they have been needed."""

    source: str
    questions: list[str]
    scanned: int = 0
    leading: list[tuple[str, list[SearchHit]]] = field(default_factory=list)  # led to the page, not yet answered
    near: list[tuple[str, list[SearchHit]]] = field(default_factory=list)  # retrieved with the page, another first

    def scan(self, agent: BookRAGAgent, embedder: _Remembering, report: SuggestReport, until: int,
             batch: bool = False) -> None:
        """Retrieve the next candidates until `until` of them lead with the page, or none is left (`batch`: or
        the next `QUERY_BATCH` are retrieved)."""
        stop = self.scanned + QUERY_BATCH if batch else len(self.questions)
        while len(self.leading) < until and self.scanned < min(stop, len(self.questions)):
            n, question = self.scanned, self.questions[self.scanned]
            if n % QUERY_BATCH == 0:
                embedder.expect(self.questions[n:n + QUERY_BATCH])
            self.scanned += 1
            report.asked += 1
            hits = _hits(agent, question)
            retrieved = [hit.payload.source_file for hit in hits]
            if retrieved[:1] == [self.source]:
                self.leading.append((question, hits))
            elif self.source in retrieved:
                self.near.append((question, hits))

    @property
    def scanning(self) -> bool:
        """Whether the first pass has more to retrieve: fewer than `PER_PAGE` lead with the page so far."""
        return len(self.leading) < PER_PAGE and self.scanned < len(self.questions)

    def next_leading(self, agent: BookRAGAgent, embedder: _Remembering, report: SuggestReport) -> str | None:
        self.scan(agent, embedder, report, 1)
        return self.leading.pop(0)[0] if self.leading else None

    def expected(self) -> list[tuple[str, list[SearchHit]]]:
        """The candidates whose full answers will be asked unless one of them fails (`suggest_pages`)."""
        return self.leading[:PER_PAGE] or self.near[:NEAR_TRIES]


def _embed_ahead(agent: BookRAGAgent, embedder: _Remembering, tries: list[_Tries]) -> int:
    """Embed together the statements the pages' expected answers will read; returns how many texts.

    An answer embeds the statements of its eight chunks in a call of its own: some twenty new texts of 6 to
    200 tokens, padded to the longest in batches too small to sort well. The same 2,475 statements of
    textbook-2's answers took 45.7 s of CPU in those 130 calls and 17.7 s in one call (same load). A failed
    answer's further candidates are embedded as they come."""
    from bookrag.answering.answerers.extractive import ExtractiveAnswerer

    answerer = agent.answerer
    if not isinstance(answerer, ExtractiveAnswerer) or not answerer.retriever.embeds_locally:
        return 0  # a remote model embeds only what it is asked (each text is paid for)
    texts = sorted(dict.fromkeys(text for page in tries for question, hits in page.expected()
                                 for text in answerer.statements(question, hits)), key=len)
    # In slices of similar lengths: one call tokenizes and pads all of them at once (96 MiB more at its peak
    # for textbook-2's 2,406, against 44 MiB in slices of 256, for the same CPU).
    embedder.embed_apart([texts[start:start + AHEAD_SLICE] for start in range(0, len(texts), AHEAD_SLICE)])
    return len(texts)


def suggest_pages(settings: Settings, embedder: CachedEmbedder, store: BookStore,
                  chat: ChatModel | None = None) -> SuggestReport:
    """Find and store the questions of every page that has none yet. Raises `StoreError`s.

    In two passes: first every page's candidates are retrieved until `PER_PAGE` lead with the page, and the
    statements their answers read embedded together (`_embed_ahead`); then each page's candidates are answered
    in order, further ones retrieved when an answer fails, exactly as one pass would decide."""
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
    remembering = _Remembering(embedder, settings.resolved_embedding_provider == "local")
    agent = _agent(settings, remembering, store)
    tries = [_Tries(source, candidates(pages[source])[:TRIES]) for source in todo]
    # The first pass in rounds: every page's next candidates' queries in one call (77 calls of six questions
    # for textbook-2's 322 queries before, four now).
    scanning = tries
    while scanning:
        remembering.expect([q for page in scanning for q in page.questions[page.scanned:page.scanned + QUERY_BATCH]])
        for page in scanning:
            page.scan(agent, remembering, report, PER_PAGE, batch=True)
        scanning = [page for page in scanning if page.scanning]
    report.embedded_ahead = _embed_ahead(agent, remembering, tries)
    for page in tries:
        source = page.source
        kept: list[str] = []
        while len(kept) < PER_PAGE and (question := page.next_leading(agent, remembering, report)) is not None:
            report.answered += 1
            if not answers_from(agent, question, source):
                continue
            if chat is not None and (better := _reworded(chat, question)) and leads_to(agent, better, source) \
                    and answers_from(agent, better, source):
                question = better
            kept.append(question)
        # A page that near-duplicate pages outrank in retrieval ("Module 3 overview" among four overviews) may
        # still be what the answer quotes first: one such question then, rather than none.
        for question, _ in page.near[:0 if kept else NEAR_TRIES]:
            report.answered += 1
            if answers_from(agent, question, source, first=True):
                kept.append(question)
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
                                         "asked": report.asked, "answered": report.answered,
                                         "embedded_ahead": report.embedded_ahead,
                                         "seconds": round(report.seconds, 2)})
    return report
