"""BookRAGAgent: answers a question only from the book, with verified citations, or refuses.

One request:
1. The query is normalised and validated (`InvalidInputError`: INVALID_QUERY, INVALID_QUERY_LENGTH).
2. The agent calls the `retrieve_book_context` tool itself (`tools.book_context`, the agent's
   default threshold): retrieval always comes first, whatever the answerer.
3. The configured answerer drafts an answer with `[S1]`-style markers (`bookrag.answerers`); an LLM
   may retrieve again through the same tool, within the request's deadline.
4. Code, not the model, checks the draft: every cited chunk must be one this request retrieved; a
   sentence whose markers all point elsewhere is dropped; an answer left citing nothing becomes a
   refusal. An LLM's sentences must also be supported by the text they cite (`answerers.grounding`):
   unsupported ones are dropped, and an answer left with none is refused (`ungrounded_answer`).
   Each cited source carries the quoted spans (`Source.quotes`, `answerers.spans`). The answer must
   not contain a configured secret or a passage of the system prompt.
5. A refusal is exactly `REFUSAL`, with `refusal_reason` and the nearest sections as `sources`.

Time: `AGENT_DEADLINE_S` (20 s) runs from the start of the request. The first retrieval is bounded
by the retrieval path's own policy (a few hundred ms normally; about 21 s in its documented worst
case: a hang plus a retry on each upstream). Everything after it is bounded by the deadline: each
LLM call's timeout is capped by what is left (one retry at most, never waiting more than 1 s); a
model-requested search gets what is left minus 5 s for the final answer and is abandoned past it;
the extractive answerer's term lookups are abandoned at the deadline. A request therefore ends
within about max(first retrieval, 20 s) + 1 s, under the function's 25 s timeout and API Gateway's
30 s, whatever the upstreams do.

Errors are raised as our typed errors (`bookrag.errors`); the web layer maps them, and
`error_response(exc)` gives Python callers the contract's `ErrorResponse`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field, SecretStr

from bookrag import errors, tools
from bookrag.answerers import build_answerer
from bookrag.answerers.base import CITATION, REFUSAL, SYSTEM_PROMPT, Answerer, Deadline, Draft, cited_labels
from bookrag.answerers.grounding import ground
from bookrag.answerers.spans import Quote, quotes_for
from bookrag.deobfuscation import readings
from bookrag.models import SearchHit
from bookrag.observability import logger
from bookrag.retrieval import Retriever, SearchOptions, get_retriever
from bookrag.settings import get_settings
from bookrag.validation import normalize_query

if TYPE_CHECKING:
    from bookrag.settings import Settings

__all__ = ["REFUSAL", "BookRAGAgent", "ErrorResponse", "Response", "Source", "error_response", "get_agent",
           "run_agent"]

AGENT_DEADLINE_S = 20.0
MAX_QUERY_CHARS = 1000
NEAREST_SECTIONS = 3
# Six words: the shortest rule line is seven. The refusal sentence and the book's title are left out
# of the fingerprint, since legitimate answers contain them.
_FINGERPRINT_WORDS = 6
_NOT_SECRET = (REFUSAL, "Physical AI & Humanoid Robotics textbook")


# --- the contract's shapes -------------------------------------------------------------------------


class Source(BaseModel):
    """A cited (or, for a refusal, nearest) section of the book."""

    chapter: str = Field(description="Title of the document (chapter) the chunk belongs to")
    section: str = Field(description="Heading of the section the chunk belongs to")
    source_url: str
    chunk_id: str
    source_file: str
    score: float = Field(ge=0.0, le=1.0, description="Cosine similarity between the question and the chunk")
    quotes: list[Quote] = Field(default_factory=list, description="The spans of the chunk the answer quotes, "
                                "with offsets into its content_text and a text-fragment link; [] for a refusal")

    @classmethod
    def from_hit(cls, hit: SearchHit) -> Source:
        p = hit.payload
        return cls(chapter=str(p.get("doc_title") or p.get("module_name") or ""), section=hit.section_heading,
                   source_url=str(p.get("source_url", "")), chunk_id=hit.chunk_id, source_file=hit.source_file,
                   score=hit.score)


class Response(BaseModel):
    answer: str = Field(description="The answer, with [n] markers that number `sources`; or the refusal sentence")
    sources: list[Source] = Field(description="Cited sections in marker order; for a refusal, the nearest sections")
    is_refusal: bool
    refusal_reason: str = Field(
        "", description="'' for an answer; no_relevant_context | weak_evidence | model_refused | uncited_answer "
                        "| ungrounded_answer | unsafe_output for a refusal")


class ErrorResponse(BaseModel):
    message: str
    error_type: str
    recoverable: bool


# The agent contract's error types and user messages. Off-book questions are not errors: they come
# back as refusals (is_refusal), whose answer is NoContextError's message.
MESSAGES = {
    "EmbeddingError": "Unable to process your question. Please try again.",
    "RetrievalError": "Book content temporarily unavailable. Please try again.",
    "NoContextError": REFUSAL,
    "InvalidQueryError": "Please provide a question about the book content.",
    "AgentError": "Unable to generate an answer right now. Please try again.",
    "AuthenticationError": "A valid API key is required.",
    "RateLimitError": "Too many requests. Please wait and try again.",
}
AGENT_ERROR_TYPES: list[tuple[type[errors.BookRAGError], str]] = [
    (errors.InvalidInputError, "InvalidQueryError"),
    (errors.EmbeddingError, "EmbeddingError"),
    (errors.StoreError, "RetrievalError"),
    (errors.StoreConnectionError, "RetrievalError"),
    (errors.AnswerError, "AgentError"),
    (errors.AuthenticationError, "AuthenticationError"),
    (errors.RateLimitedError, "RateLimitError"),
]


def agent_error_fields(exc: errors.BookRAGError) -> dict[str, str | bool]:
    """`message`, `error_type`, `recoverable` for one of our errors (the web layer adds them too)."""
    error_type = next((name for cls, name in AGENT_ERROR_TYPES if isinstance(exc, cls)), "AgentError")
    return {"message": MESSAGES[error_type], "error_type": error_type, "recoverable": exc.recoverable}


def error_response(exc: errors.BookRAGError) -> ErrorResponse:
    """The contract's ErrorResponse for an error `run_agent` raised."""
    return ErrorResponse.model_validate(agent_error_fields(exc))


def validate_query(query: object) -> str:
    """Normalised query; raises `InvalidInputError` (INVALID_QUERY or INVALID_QUERY_LENGTH)."""
    if not isinstance(query, str):
        raise errors.InvalidInputError(MESSAGES["InvalidQueryError"], code="INVALID_QUERY", field="query")
    text = normalize_query(query)
    if not text:
        raise errors.InvalidInputError(MESSAGES["InvalidQueryError"], code="INVALID_QUERY", field="query")
    if len(text) > MAX_QUERY_CHARS:
        raise errors.InvalidInputError(f"Query must be at most {MAX_QUERY_CHARS} characters",
                                       code="INVALID_QUERY_LENGTH", field="query")
    return text


# --- the agent -------------------------------------------------------------------------------------


class Ledger:
    """Every chunk retrieved during one request: the only chunks an answer may cite."""

    def __init__(self) -> None:
        self.hits: dict[str, SearchHit] = {}

    def record(self, hits: list[SearchHit]) -> list[SearchHit]:
        for hit in hits:
            self.hits.setdefault(hit.chunk_id, hit)
        return hits


class BookRAGAgent:
    """Thread-safe: per-request state lives in `run`; the retriever and answerer are shared."""

    def __init__(self, settings: Settings, retriever: Retriever, answerer: Answerer) -> None:
        self.settings = settings
        self.retriever = retriever
        self.answerer = answerer
        self._secrets = _secret_values(settings)
        prompt = SYSTEM_PROMPT
        for phrase in _NOT_SECRET:
            prompt = prompt.replace(phrase, " | ")
        self._prompt_shingles = _shingles(prompt)

    def run(self, query: str) -> Response:
        """Raises `InvalidInputError`, `EmbeddingError`, store errors and `AnswerError` subclasses."""
        question = validate_query(query)
        deadline = Deadline(AGENT_DEADLINE_S)
        ledger = Ledger()

        def retrieve(text: str) -> list[SearchHit]:
            return ledger.record(tools.book_context(self.retriever, text)[1])

        hits = retrieve(question)
        if not hits:
            return self._refusal("no_relevant_context", self._nearest(question))
        draft = self.answerer.answer(question, hits, retrieve, deadline)
        response = self._check(draft, ledger)
        logger.debug("answered", extra={"answerer": self.answerer.name, "refused": response.is_refusal,
                                       "refusal_reason": response.refusal_reason,
                                       "sources": len(response.sources)})
        return response

    def _check(self, draft: Draft, ledger: Ledger) -> Response:
        nearest = sorted(ledger.hits.values(), key=lambda h: h.score, reverse=True)
        if self.leaks(draft.text):  # first: a leaking draft may also contain the refusal sentence
            return self._refusal("unsafe_output", nearest)
        if draft.refused:
            return self._refusal(draft.reason or "model_refused", nearest)
        if not draft.spans:  # an LLM's draft: keep only sentences the chunk they cite supports
            draft = ground(draft, ledger.hits)
            if draft.refused:
                return self._refusal(draft.reason, nearest)
        text, cited = verify_citations(draft, ledger)
        if not cited:
            return self._refusal("uncited_answer", nearest)
        sources = [Source.from_hit(h).model_copy(update={"quotes": quotes_for(h, draft.spans.get(h.chunk_id, []))})
                   for h in cited]
        return Response(answer=text, sources=sources, is_refusal=False, refusal_reason="")

    def leaks(self, text: str) -> bool:
        """True when `text` holds a configured secret or a passage of the system prompt, also encoded
        (base64, hex, rot13, URL-encoded, reversed, spaced, zero-width or look-alike letters)."""
        for view in readings(text):  # case-folded
            squeezed = "".join(view.split())
            if any(secret.casefold() in squeezed for secret in self._secrets):
                return True
            if _shingles(view) & self._prompt_shingles:
                return True
        return False

    def _nearest(self, question: str) -> list[SearchHit]:
        # Nothing cleared the threshold: show where the book comes closest, so the reader knows where to look.
        return self.retriever.search(question, SearchOptions(top_k=NEAREST_SECTIONS * 2, min_score=0.0)).hits

    def _refusal(self, reason: str, hits: list[SearchHit]) -> Response:
        seen: set[tuple[str, str]] = set()
        sources: list[Source] = []
        for hit in hits:
            key = (hit.source_file, hit.section_heading)
            if key not in seen and len(sources) < NEAREST_SECTIONS:
                seen.add(key)
                sources.append(Source.from_hit(hit))
        return Response(answer=REFUSAL, sources=sources, is_refusal=True, refusal_reason=reason)


_SENTENCE_BREAK = re.compile(r"((?<=[.!?])[ \t]+|\n+)")
_MARKER = r"\[\s*S\d+(?:\s*[,;]\s*S\d+)*\s*\]"
_MARKER_AFTER_STOP = re.compile(rf"([.!?])[ \t]*({_MARKER}(?:[ \t]*{_MARKER})*)")
_SPACE_BEFORE_STOP = re.compile(r"[ \t]+([.,;:!?])")


def verify_citations(draft: Draft, ledger: Ledger) -> tuple[str, list[SearchHit]]:
    """Keep only citations of retrieved chunks, renumbered [1], [2], ... in order of appearance.

    A sentence whose markers all cite chunks this request did not retrieve is dropped (its claims
    rest on nothing we can show). Returns the rewritten text and the cited hits in marker order.
    """

    def valid(label: str) -> SearchHit | None:
        chunk_id = draft.citations.get(label)
        return ledger.hits.get(chunk_id) if chunk_id is not None else None

    # "claim. [S1]" -> "claim [S1]." so that a marker stays with the sentence it follows.
    text = _MARKER_AFTER_STOP.sub(lambda m: f" {m.group(2).strip()}{m.group(1)}", draft.text.strip())
    parts = _SENTENCE_BREAK.split(text)
    kept: list[str] = []
    for i in range(0, len(parts), 2):
        sentence, sep = parts[i], parts[i + 1] if i + 1 < len(parts) else ""
        labels = cited_labels(sentence)
        if labels and not any(valid(label) for label in labels):
            continue
        kept.append(sentence + sep)
    numbers: dict[str, int] = {}
    cited: list[SearchHit] = []

    def renumber(match: re.Match[str]) -> str:
        out = []
        for label in re.findall(r"S\d+", match.group(1)):
            hit = valid(label)
            if hit is None:
                continue
            if hit.chunk_id not in numbers:
                numbers[hit.chunk_id] = len(numbers) + 1
                cited.append(hit)
            marker = f"[{numbers[hit.chunk_id]}]"
            if marker not in out:
                out.append(marker)
        return "".join(out)

    rewritten = CITATION.sub(renumber, "".join(kept).strip())
    return _SPACE_BEFORE_STOP.sub(r"\1", rewritten).strip(), cited


def _secret_values(settings: Settings) -> list[str]:
    values = []
    for name in type(settings).model_fields:
        value = getattr(settings, name)
        if isinstance(value, SecretStr) and len(value.get_secret_value()) >= 6:
            values.append(value.get_secret_value())
    return values


def _shingles(text: str) -> set[tuple[str, ...]]:
    out: set[tuple[str, ...]] = set()
    for segment in text.split("|"):
        words = re.findall(r"[a-z0-9]+", segment.lower())
        out.update(tuple(words[i:i + _FINGERPRINT_WORDS]) for i in range(len(words) - _FINGERPRINT_WORDS + 1))
    return out


@lru_cache(maxsize=4)
def get_agent(settings: Settings) -> BookRAGAgent:
    """One agent (retriever, answerer and their clients) per container and settings."""
    retriever = get_retriever(settings)
    return BookRAGAgent(settings, retriever, build_answerer(settings, retriever))


def run_agent(query: str) -> Response:
    """Answer `query` from the book with the process-wide settings. See the module docstring."""
    return get_agent(get_settings()).run(query)
