"""The agent contract's shapes: `Response`, `Source`, `ErrorResponse`, its user messages and error types."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator
from pydantic.config import JsonDict

from bookrag import errors
from bookrag.contracts.base import Codes, ErrorBody, FieldCodes, QueryRequest, query_field
from bookrag.domain.models import SearchHit
from bookrag.domain.query import CONVERSATION, POLICIES, SESSION_ID_PATTERN, VISIBLE_CHARACTER, normalize_query

REFUSAL = "This question is not answered in the book."


class Quote(BaseModel):
    """A quoted span of one chunk: `text == content_text[start:end]`."""

    text: str = Field(description="The quoted text, exactly as in the chunk's content_text")
    start: int = Field(ge=0, description="Offset of the first character in the chunk's content_text")
    end: int = Field(ge=0, description="Offset just past the last character (exclusive)")
    fragment_url: str = Field(description="source_url with a #:~:text= fragment that highlights the quote")
    support: float | None = Field(
        default=None, ge=0.0, le=1.0,
        description="How well this span supports the answer's sentence that cites it (0..1), for a model's answer; "
                    "null when the answer quotes the book's own words")


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
        return cls(chapter=p.doc_title or p.module_name, section=p.section_heading,
                   source_url=p.source_url, chunk_id=hit.chunk_id, source_file=p.source_file,
                   score=hit.score)



class Response(BaseModel):
    answer: str = Field(description="The answer, with [n] markers that number `sources`; or the refusal sentence")
    sources: list[Source] = Field(description="Cited sections in marker order; for a refusal, the nearest sections")
    is_refusal: bool
    refusal_reason: str = Field(
        "", description="'' for an answer; no_relevant_context | weak_evidence | model_refused | uncited_answer "
                        "| ungrounded_answer | unsafe_output for a refusal")
    # Conversation fields (issue 13): additive, and absent from a request without history, session or selection.
    standalone_question: str | None = Field(
        default=None, description="The standalone question that was searched, after resolving a follow-up against the "
                          "conversation's earlier turns; only with `history` or `session_id`")
    session_id: str | None = Field(
        default=None, description="The server-side session this turn was stored in; only with `session_id` or "
                          "`start_session`")
    selection_in_book: bool | None = Field(
        default=None, description="Whether `selected_text` matched the book's indexed text (then its passage and "
                          "neighbours were searched first and may be cited); false: it was treated as part of "
                          "the question and is never cited. Only with `selected_text`")
    # Editions (issue 35): additive, and absent unless the request named a locale or version or fell back.
    locale: str | None = Field(default=None, description=(
        "The site locale the answer and its citations come from; only when the request named a locale or "
        "version, or the book is a site and the answer fell back"))
    version: str | None = Field(default=None, description="The site docs version they come from; as `locale`")
    edition_note: str | None = Field(default=None, description=(
        "Why the edition read is not the one asked for: a locale or version the book lacks, or cited pages the "
        "locale does not translate (quoted in the default locale)"))
    # The book version is not a field: without a conversation the body stays exactly the contract's four
    # fields. HTTP carries it as the X-Book-Version header, MCP in the result's _meta, Python as this property.
    _book_version: str | None = PrivateAttr(default=None)

    @property
    def book_version(self) -> str | None:
        return self._book_version

    def with_book_version(self, label: str | None) -> Response:
        self._book_version = label
        return self

    # Not a field either (issue 34): "quoted" when the model's answer did not hold against the book and the
    # reader got the book's own sentences instead (REST: the X-Answer-Mode header; MCP: _meta), else "generated".
    _answer_mode: str = PrivateAttr(default="generated")

    @property
    def answer_mode(self) -> str:
        return self._answer_mode

    def quoted(self) -> Response:
        self._answer_mode = "quoted"
        return self

    # Not a field either (issue 36): the question log's id of this answer, for POST /api/feedback (REST: the
    # X-Query-Id header; MCP: _meta); None when the log is off or the answer came another way.
    _query_id: str | None = PrivateAttr(default=None)

    @property
    def query_id(self) -> str | None:
        return self._query_id

    def with_query_id(self, query_id: str | None) -> Response:
        self._query_id = query_id
        return self



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
    (errors.RetrievalError, "RetrievalError"),
    (errors.AgentError, "AgentError"),
    # Our caller's API key (401): the wire name predates the rename of the class to CallerAuthError.
    (errors.CallerAuthError, "AuthenticationError"),
    (errors.RateLimitedError, "RateLimitError"),
]



def contract_error_type(exc: errors.BookRAGError) -> str | None:
    """The agent contract's error type for `exc`, or None when the contract has none (a ConfigError)."""
    return next((name for cls, name in AGENT_ERROR_TYPES if isinstance(exc, cls)), None)


def agent_error_fields(exc: errors.BookRAGError) -> dict[str, str | bool]:
    """`message`, `error_type`, `recoverable` for one of our errors (the web layer adds them too)."""
    error_type = contract_error_type(exc) or "AgentError"
    return {"message": MESSAGES[error_type], "error_type": error_type, "recoverable": exc.recoverable}



def error_response(exc: errors.BookRAGError) -> ErrorResponse:
    """The contract's ErrorResponse for an error `run_agent` raised."""
    return ErrorResponse.model_validate(agent_error_fields(exc))


class ScoredPoint(BaseModel):
    """The agent contract's `search_vectors` result: one point of the collection and its similarity."""

    id: str = Field(description="The point id (the chunk id)")
    score: float = Field(ge=0.0, le=1.0, description="Cosine similarity to the embedding (0..1)")
    payload: dict[str, Any] = Field(description="The chunk's stored metadata and text (see ChunkPayload)")


class HistoryTurn(BaseModel):
    """One earlier turn of the conversation, as the client kept it."""

    model_config = ConfigDict(extra="ignore")

    question: str = Field(min_length=1, max_length=CONVERSATION.max_turn_question_chars, pattern=VISIBLE_CHARACTER,
                          description="The earlier question, as the reader asked it (at least one visible "
                                      "character, like `query`)")
    answer: str = Field("", max_length=CONVERSATION.max_turn_answer_chars,
                        description="The answer the service gave (optional; helps an LLM resolve the follow-up)")

    # Checked as sent, then normalised, as `query` is: what the schema allows is what the service accepts.
    @field_validator("question", "answer", mode="after")
    @classmethod
    def _normalize(cls, value: str) -> str:
        return normalize_query(value)


# The conversation's forms exclude each other (CONFLICTING_CONVERSATION): the schema says so too, so a
# request it allows is one the service accepts.
_ONE_CONVERSATION: JsonDict = {"not": {"anyOf": [
    {"required": ["session_id", "start_session"],
     "properties": {"session_id": {"type": "string"}, "start_session": {"const": True}}},
    {"required": ["session_id", "history"],
     "properties": {"session_id": {"type": "string"}, "history": {"type": "array", "minItems": 1}}},
    {"required": ["history", "start_session"],
     "properties": {"history": {"type": "array", "minItems": 1}, "start_session": {"const": True}}},
]}}


class AnswerRequest(QueryRequest):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=False, json_schema_extra=_ONE_CONVERSATION)

    error_codes: ClassVar[FieldCodes] = {
        "query": Codes("INVALID_QUERY", "INVALID_QUERY_LENGTH"),
        "history": Codes("INVALID_HISTORY", "HISTORY_TOO_LONG"),
        "session_id": Codes("INVALID_SESSION_ID", "INVALID_SESSION_ID"),
        "start_session": Codes("INVALID_REQUEST", "INVALID_REQUEST"),
        "selected_text": Codes("INVALID_SELECTION", "SELECTION_TOO_LONG"),
        "source_url": Codes("INVALID_SOURCE", "INVALID_SOURCE"),
        "source_file": Codes("INVALID_SOURCE", "INVALID_SOURCE"),
    }

    query: str = query_field(POLICIES["agent"].max_query_chars, "A question about the book")
    history: list[HistoryTurn] | None = Field(
        None, max_length=CONVERSATION.max_turns,
        description=f"Earlier turns, oldest first (at most {CONVERSATION.max_turns}; questions up to "
                    f"{CONVERSATION.max_turn_question_chars} characters, answers up to "
                    f"{CONVERSATION.max_turn_answer_chars}). Not with `session_id`")
    session_id: str | None = Field(
        default=None, min_length=CONVERSATION.session_id_chars, max_length=CONVERSATION.session_id_chars,
        pattern=SESSION_ID_PATTERN,
        description="A session this API key started earlier (`start_session`); it keeps the last "
                    f"{CONVERSATION.max_turns} turns and expires {CONVERSATION.session_ttl_s} s after its last "
                    "turn. Unknown, expired or another key's session: 404 SESSION_NOT_FOUND")
    start_session: bool = Field(False, strict=True,
                                description="Start a server-side session with this turn; its id is in the response")
    selected_text: str | None = Field(
        None, min_length=1, max_length=CONVERSATION.max_selection_chars, pattern=VISIBLE_CHARACTER,
        description="Text the reader highlighted (at most "
                    f"{CONVERSATION.max_selection_chars} characters as sent, at least one visible, like `query`): "
                    "the question is about it")
    source_url: str | None = Field(None, min_length=1, max_length=CONVERSATION.max_source_chars,
                                   description="The page the selection is on, when known")
    source_file: str | None = Field(None, min_length=1, max_length=CONVERSATION.max_source_chars,
                                    description="The book file the selection is from, when known")

    @field_validator("selected_text", mode="after")
    @classmethod
    def _normalize_selection(cls, value: str | None) -> str | None:
        return None if value is None else normalize_query(value)



class AnswerErrorBody(ErrorBody):
    """Errors of /api/answer also carry the agent contract's ErrorResponse fields."""

    message: str = Field(description="User-facing message from the agent contract")
    error_type: str = Field(description="EmbeddingError | RetrievalError | InvalidQueryError | AgentError | ...")
