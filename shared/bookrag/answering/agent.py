"""BookRAGAgent: answers a question only from the book, with verified citations, or refuses.

One request:
1. The query is normalised and validated (`InvalidInputError`: INVALID_QUERY, INVALID_QUERY_LENGTH).
2. The agent calls the `retrieve_book_context` tool itself (`answering.context.book_context`, the agent's
   default threshold) with the question's typos respelt (`searchable`): retrieval always comes first. When no
   chunk clears the threshold, the gate (`answering.gate`) weighs the nearest chunks: one whose own heading or list
   labels carry the question's words (a short labelled section, which embeds weakly) is answerable
   evidence; with none, the agent refuses (`no_relevant_context`).
3. The configured answerer drafts an answer with `[S1]`-style markers (`bookrag.answering.answerers`); an LLM
   may retrieve again through the same tool, within the request's deadline.
4. Code, not the model, checks the draft: every cited chunk must be one this request retrieved; a
   sentence whose markers all point elsewhere is dropped; an answer left citing nothing becomes a
   refusal. An LLM's sentences must also be supported by the text they cite (`answerers.grounding`,
   with the retriever's embedder and the cited chunks' neighbours): unsupported, changed-figure and
   reversed ones are dropped (counted by reason), and an answer whose core is dropped is refused
   (`ungrounded_answer`) only when the extractive answerer, over the same retrieved chunks, refuses too:
   otherwise the reader gets its answer, the book's own sentences (`Response.answer_mode` "quoted").
   Each cited source carries the quoted spans (`Source.quotes`, `answerers.spans`), with their support
   score for a grounded answer. The answer must not contain a configured secret or a system prompt passage.
5. A refusal is exactly `REFUSAL`, with `refusal_reason` and the nearest sections as `sources`.

Time: `AGENT_DEADLINE_S` (20 s) runs from the start of the request. The first retrieval is bounded
by the retrieval path's own policy (a few hundred ms normally; about 21 s in its documented worst
case: a hang plus a retry on each upstream). Everything after it is bounded by the deadline: each
LLM call's timeout is capped by what is left (one retry at most, never waiting more than 1 s; a
streamed call is retried only before its first text, and its deadline is checked between chunks); a
model-requested search gets what is left minus 5 s for the final answer and is abandoned past it;
the extractive answerer's term lookups are abandoned at the deadline. A request therefore ends
within about max(first retrieval, 20 s) + 1 s, under the function's 25 s timeout and API Gateway's
30 s, whatever the upstreams do.

Errors are raised as our typed errors (`bookrag.errors`); the web layer maps them, and
`error_response(exc)` gives Python callers the contract's `ErrorResponse`.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import TYPE_CHECKING

from bookrag import errors
from bookrag.answering.agent_events import AgentEvent, deltas
from bookrag.answering.answerers import build_answerer
from bookrag.answering.answerers.base import SYSTEM_PROMPT, Answerer, Draft, Retrieve
from bookrag.answering.answerers.grounding import Grounder, ground, section_window
from bookrag.answering.answerers.questions import defined_term, searchable
from bookrag.answering.answerers.spans import quotes_for
from bookrag.answering.answerers.summary import page_hits
from bookrag.answering.citations import Ledger, verify_citations
from bookrag.answering.context import book_context
from bookrag.answering.deobfuscation import LeakGuard, secret_values
from bookrag.answering.gate import vouched
from bookrag.answering.rewriters import OfflineRewriter, Rewriter
from bookrag.answering.selection import Section, about_selection, in_section, passage_context, with_selection
from bookrag.answering.streaming import streamed
from bookrag.contracts.agent import MESSAGES, REFUSAL, Quote, Response, Source
from bookrag.domain.conversation import Conversation
from bookrag.domain.deadline import Deadline
from bookrag.domain.models import Filters, SearchHit
from bookrag.domain.query import POLICIES, has_visible_character, normalize_query
from bookrag.observability import logger, record_grounding, record_quoted
from bookrag.retrieval.retriever import DIVERSITY_MAX_PER_FILE, Retriever, SearchOptions, default_threshold

if TYPE_CHECKING:
    from bookrag.config.settings import Settings

__all__ = ["AgentEvent", "BookRAGAgent", "validate_query"]

AGENT_DEADLINE_S = 20.0
MAX_QUERY_CHARS = POLICIES["agent"].max_query_chars
NEAREST_SECTIONS = 3
CONTEXT_SIZE = 5  # chunks per retrieval for an answerer that does not say (`Answerer.context_size`)
# Left out of the prompt's fingerprint: legitimate answers contain the refusal sentence and the book's title.
_NOT_SECRET = (REFUSAL, "Physical AI & Humanoid Robotics textbook")


def validate_query(query: object) -> str:
    """Normalised query; raises `InvalidInputError` (INVALID_QUERY or INVALID_QUERY_LENGTH)."""
    # The one length rule (bookrag.domain.query): characters as sent, then normalised.
    if not isinstance(query, str) or not has_visible_character(query):
        raise errors.InvalidInputError(MESSAGES["InvalidQueryError"], code="INVALID_QUERY", field="query")
    if len(query) > MAX_QUERY_CHARS:
        raise errors.InvalidInputError(f"Query must be at most {MAX_QUERY_CHARS} characters",
                                       code="INVALID_QUERY_LENGTH", field="query")
    return normalize_query(query)


class BookRAGAgent:
    """Thread-safe: per-request state lives in `run`; the retriever and answerer are shared."""

    def __init__(self, settings: Settings, retriever: Retriever, answerer: Answerer,
                 rewriter: Rewriter | None = None) -> None:
        self.settings = settings
        self.retriever = retriever
        self.answerer = answerer
        self.rewriter: Rewriter = rewriter or OfflineRewriter()
        self._threshold = default_threshold(settings, "agent")
        # Chunks per retrieval: an answerer may choose from more than a model is shown (`Answerer.context_size`).
        self._context_size = int(getattr(answerer, "context_size", CONTEXT_SIZE))
        # Grounding reads the cited chunks' surroundings (their section, their subsections) from the store
        # and embeds with the embedder in use.
        self._grounder = Grounder(retriever.embed_passages, section_window(retriever.store.fetch_chunks))
        prompt = SYSTEM_PROMPT
        for phrase in _NOT_SECRET:
            prompt = prompt.replace(phrase, " | ")
        self._guard = LeakGuard(secret_values(settings), prompt)

    def run(self, query: str, conversation: Conversation | None = None) -> Response:
        """Raises `InvalidInputError`, `EmbeddingError`, store errors and `AnswerError` subclasses.

        With a `conversation`, a follow-up is first resolved into a standalone question (the response's
        `standalone_question`), and a selection scopes retrieval to its passage when it is the book's
        text (`selection_in_book`); without one, the agent contract's `Response`, unchanged."""
        for event in self.events(query, conversation, stream=False):
            if event.kind == "final":
                return event.response
        raise AssertionError("the agent's events always end with the final response")  # pragma: no cover

    def context(self, query: str) -> list[SearchHit]:
        """The chunks `run(query)` reads before its answerer writes, without a conversation (`services.suggesting`)."""
        question = validate_query(query)
        return book_context(self.retriever, question, top_k=self._context_size, per_file=self._per_file(question))[1]

    def _vocabulary(self) -> frozenset[str]:
        # Offline, the book's words come from the local store in ms; a deployment's is remote (a scroll of every
        # chunk on a cold container) and its embedder reads a typo as the word meant.
        return self.retriever.vocabulary() if self.retriever.embeds_locally else frozenset()

    def _per_file(self, text: str, page: str | None = None) -> int:
        """How many of a retrieval's chunks one file may fill: all within a named page; half the context for
        "What is X?" (the page about X: its sections outrank the opening that defines X); else the cap."""
        per_file = self._context_size if page else DIVERSITY_MAX_PER_FILE
        return max(per_file, self._context_size // 2) if defined_term(text) else per_file

    def events(self, query: str, conversation: Conversation | None = None, *,
               stream: bool = True) -> Iterator[AgentEvent]:
        """The same request as `run`, step by step: the retrieved sections (`sources`), the answer's
        text as the answerer produces it (`delta`: the final answer so far, or a leak-checked preview
        when the markers come only at the end; see `answering.streaming`), then `final` with exactly the
        `Response` that `run` returns (citations verified, or the refusal). `stream=False` skips the
        first two (what `run` does). Raises as `run` does."""
        question = validate_query(query)
        deadline = Deadline(AGENT_DEADLINE_S)
        ledger = Ledger()

        within: Section | None = None  # a question about a selected passage: the answerer stays in its section

        searched: dict[tuple[str, str | None, int], list[SearchHit]] = {}  # a summary searches its title twice

        def retrieve(text: str, page: str | None = None, opening: int = 0) -> list[SearchHit]:
            if (text, page, opening) not in searched:  # a page's opening is read in its order, not searched
                searched[text, page, opening] = self.retriever.opening(page, opening) if page and opening else \
                    book_context(self.retriever, text, top_k=self._context_size, per_file=self._per_file(text, page),
                                 filters=Filters(source_file=page) if page else None)[1]
            return ledger.record([h for h in searched[text, page, opening] if within is None or in_section(h, within)])

        extra: dict[str, object] = {}
        if conversation is None:
            standalone, asked, hits = question, question, retrieve(searchable(question, self._vocabulary))
        else:
            standalone, asked, hits, extra, within = self._converse(question, conversation, deadline, ledger,
                                                                    retrieve)
        if not hits:  # "summarize part 3 for me": its words find little, the page it names does
            hits = page_hits(standalone, self.retriever.pages(), retrieve)
        nearest: list[SearchHit] = []
        if not hits:  # nothing clears the threshold: the gate weighs the nearest chunks' headings and labels
            nearest = self._nearest(standalone)
            hits = ledger.record(vouched(standalone, nearest, self._threshold, self.retriever.reranker is not None))
        if not hits:
            response = self._refusal("no_relevant_context", nearest).model_copy(update=extra)
        elif not stream:
            draft = self.answerer.answer(asked, hits, retrieve, deadline)
            response = self._final(draft, asked, deadline, ledger).model_copy(update=extra)
        else:
            yield AgentEvent("sources", sources=_sections(hits, NEAREST_SECTIONS * 2))
            # A fallback to the book's sentences is decided on the first two claims, which `streamed` sends
            # only once one of them is grounded: when it falls back, nothing was sent.
            draft, sent = yield from streamed(self.answerer, asked, hits, retrieve, deadline,
                                              lambda d: self._check(d, ledger, final=False), self.leaks)
            response = self._final(draft, asked, deadline, ledger).model_copy(update=extra)
            if sent is not None and not response.is_refusal and response.answer.startswith(sent):
                yield from deltas(response.answer[len(sent):])
        logger.debug("answered", extra={"answerer": self.answerer.name, "refused": response.is_refusal,
                                       "refusal_reason": response.refusal_reason,
                                       "sources": len(response.sources)})
        yield AgentEvent("final", response=response)

    def _converse(self, question: str, conversation: Conversation, deadline: Deadline, ledger: Ledger,
                  retrieve: Retrieve
                  ) -> tuple[str, str, list[SearchHit], dict[str, object], Section | None]:
        """(standalone question, question as put to the answerer, hits, the response's conversation fields,
        the section the answer stays in).

        With a selection, the question is about the passage: the earlier turns count only when it refers
        back to them ("... what you said before?"; `about_selection`), and the answer comes from the
        passage's section unless the question reaches beyond it ("Where else ...?"; `reaches_beyond`)."""
        standalone = question
        selection = conversation.selection
        if conversation.history and selection is not None:
            standalone = about_selection(question, conversation.history)
        elif conversation.history:
            standalone = self.rewriter.standalone(question, conversation.history, deadline)
            if standalone != question and self.leaks(standalone):  # it is returned to the caller
                standalone = OfflineRewriter().standalone(question, conversation.history, deadline)
        in_book: bool | None = None
        within: Section | None = None
        asked = standalone
        if selection is None:
            hits = retrieve(searchable(standalone, self._vocabulary))
        else:
            hits, in_book, within = passage_context(self.retriever, selection, standalone, retrieve, ledger.record)
            asked = with_selection(standalone, selection)
        extra: dict[str, object] = {"standalone_question": standalone if conversation.history else None,
                                    "selection_in_book": in_book}
        return standalone, asked, hits, extra, within

    def _final(self, draft: Draft, question: str, deadline: Deadline, ledger: Ledger) -> Response:
        """The draft checked; when a model's draft loses its core to grounding, the extractive answer from
        the chunks this request retrieved (cited spans of the book, never worse than its own words)."""
        response = self._check(draft, ledger)
        if response.refusal_reason != "ungrounded_answer":
            return response
        # The same passages, and no other: the chunks this request retrieved (and showed the model); the
        # extractive answerer's own lookups for a question's parts find nothing more.
        hits = sorted(ledger.hits.values(), key=lambda h: h.score, reverse=True)
        quoted = self._check(self._quoting.answer(question, hits, _nothing_more, deadline), ledger)
        record_quoted(quoted.is_refusal)
        return response if quoted.is_refusal else quoted.quoted()

    @cached_property
    def _quoting(self) -> Answerer:
        # Built on first use: an answer that holds never loads the extractive answerer's code.
        return build_answerer(self.settings, self.retriever, None)

    def _check(self, draft: Draft, ledger: Ledger, *, final: bool = True) -> Response:
        """The draft checked (leaks, grounding, citations) as the `Response`; `final`: the answer's last
        check, whose dropped sentences are counted (a stream checks its growing text first)."""
        nearest = sorted(ledger.hits.values(), key=lambda h: h.score, reverse=True)
        if self.leaks(draft.text):  # first: a leaking draft may also contain the refusal sentence
            return self._refusal("unsafe_output", nearest)
        if draft.refused:
            return self._refusal(draft.reason or "model_refused", nearest)
        if not draft.spans:  # an LLM's draft: keep only sentences the chunk they cite supports
            draft, verdicts = ground(draft, ledger.hits, ledger.grounding, self._grounder)
            if final:
                record_grounding([v.reason for v in verdicts if v.judged])
            if draft.refused:
                return self._refusal(draft.reason, nearest)
        text, cited = verify_citations(draft, ledger)
        if not cited:
            return self._refusal("uncited_answer", nearest)
        if not final:  # a stream's growing text: only the checked words are sent, its quotes come with `final`
            return Response(answer=text, sources=[], is_refusal=False, refusal_reason="")
        sources = [Source.from_hit(h).model_copy(update={"quotes": self._quotes(h, draft.spans.get(h.chunk_id, []),
                                                                                draft.support)})
                   for h in cited]
        return Response(answer=text, sources=sources, is_refusal=False, refusal_reason="")

    def _quotes(self, hit: SearchHit, spans: list[tuple[int, int]],
                support: dict[tuple[str, int, int], float]) -> list[Quote]:
        """The quotes of `spans` with their grounding `support`; each link starts with text unique on its page."""
        if not spans:
            return []
        try:
            before = self.retriever.page_before(hit)
        except errors.BookRAGError:  # the page above is only a refinement of the link: the quote stays
            before = ""
        return quotes_for(hit, spans, support, before)

    def leaks(self, text: str) -> bool:
        """True when `text` holds a configured secret or a passage of the system prompt (`LeakGuard`)."""
        return self._guard.leaks(text)

    def _nearest(self, question: str) -> list[SearchHit]:
        # Nothing cleared the threshold: show where the book comes closest, so the reader knows where to look.
        return self.retriever.search(question, SearchOptions(top_k=NEAREST_SECTIONS * 2, min_score=0.0)).hits

    def _refusal(self, reason: str, hits: list[SearchHit]) -> Response:
        return Response(answer=REFUSAL, sources=_sections(hits, NEAREST_SECTIONS), is_refusal=True,
                        refusal_reason=reason)


def _sections(hits: list[SearchHit], limit: int) -> list[Source]:
    """The first hit of each section, at most `limit`."""
    seen: set[tuple[str, str]] = set()
    sources: list[Source] = []
    for hit in hits:
        key = (hit.source_file, hit.section_heading)
        if key not in seen and len(sources) < limit:
            seen.add(key)
            sources.append(Source.from_hit(hit))
    return sources


def _nothing_more(text: str, page: str | None = None, opening: int = 0) -> list[SearchHit]:
    """The quoting fallback's retrieval: nothing beyond what the request already retrieved."""
    return []
