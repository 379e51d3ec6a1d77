"""The one exception hierarchy of bookrag.

Adapters translate SDK and client errors into these; `bookrag.contracts.envelope` builds every error
body from them. Each upstream family (embedding, store, answer) has the same members, made from the
small mixins below: rate-limited, timed out, unavailable, and upstream auth. Each class also derives
from the builtin the Python retrieval contract names (ValueError, ConnectionError, RuntimeError), so
callers of `retrieve_chunks` can catch either.
Messages are safe to show a caller: they never contain a URL, a host, a key or an upstream body.
"""

from __future__ import annotations

from typing import Any


class BookRAGError(Exception):
    """Base class. `code` and `http_status` follow the REST contract."""

    code = "INTERNAL_ERROR"
    http_status = 500
    recoverable = False
    public_message = "Internal error"
    # The message says what to do on this machine (which folder, which process to stop): a local tool
    # shows it rather than the contract's words. Never sent over HTTP either way.
    explains_itself = False

    def __init__(self, message: str | None = None, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message or self.public_message)
        self.message = message or self.public_message
        self.details: dict[str, Any] = details or {}


# --- what can go wrong with an upstream, whichever it is (mixed into each family below) -------------


class RateLimited:
    """The upstream asked us to slow down; `retry_after` carries its hint (seconds) when it gave one."""

    recoverable = True
    retry_after: float | None = None


class TimedOut:
    """No answer in time. Never retried on a request path: the time budget is already spent."""

    recoverable = True


class Unavailable:
    """5xx, reset or refused connection, or a reply that is not the upstream's: a retry may help."""

    recoverable = True


class UpstreamAuthError(BookRAGError, RuntimeError):
    """An upstream (Cohere, Qdrant, an LLM) refused our credentials; not our caller's key."""

    code = "AUTH_ERROR"
    http_status = 500
    public_message = "Authentication failed with an upstream service"


# The agent contract's name for an upstream's 401 (get_embedding: "Invalid API key").
AuthenticationError = UpstreamAuthError


class ConfigError(BookRAGError, ValueError):
    """A setting is missing or invalid; raised at start, names the variable."""

    code = "CONFIG_ERROR"
    public_message = "Service is misconfigured"


# --- caller input -------------------------------------------------------------------------------


class InvalidInputError(BookRAGError, ValueError):
    """Bad request input. `code` is the contract code; `details['field']` names the field."""

    http_status = 400
    code = "INVALID_INPUT"
    public_message = "Invalid input"

    def __init__(self, message: str, *, code: str, field: str | None = None, status: int = 400) -> None:
        super().__init__(message, details={"field": field} if field else {})
        self.code = code
        self.http_status = status


# --- caller access (our API keys; not to be confused with UpstreamAuthError) ----------------------


class CallerAuthError(BookRAGError, PermissionError):
    """The caller sent no API key. Its subclass says the key did not verify, never which part failed.

    Not named AuthenticationError: the agent contract uses that name for an upstream's 401 (Cohere
    refusing our key), which is `UpstreamAuthError` here (and `AuthenticationError` below).
    """

    code = "AUTH_REQUIRED"
    http_status = 401
    public_message = "An API key is required in the X-API-Key header (or Authorization: Bearer)"


class InvalidApiKeyError(CallerAuthError):
    code = "INVALID_API_KEY"
    public_message = "The API key is not valid"


class KeyNotAllowedError(CallerAuthError):
    """A valid key used where its kind may not be: 403, the key is known but not accepted here."""

    code = "KEY_NOT_ALLOWED"
    http_status = 403
    public_message = "This API key may not be used for this request"


class OriginNotAllowedError(KeyNotAllowedError):
    code = "ORIGIN_NOT_ALLOWED"
    public_message = "This publishable key may not be used from this site (Origin)"


class SecretKeyInBrowserError(KeyNotAllowedError):
    code = "SECRET_KEY_IN_BROWSER"
    public_message = ("A secret API key is never accepted from a web page; use a publishable key "
                      "(bookrag mint-key --publishable)")


class KeyScopeError(KeyNotAllowedError):
    code = "KEY_SCOPE"
    public_message = ("A publishable key may only answer and retrieve (POST /api/answer, /api/answer/stream, "
                      "/api/retrieve)")


class BookNotAllowedError(KeyNotAllowedError):
    """A valid key used for a book it does not hold (issue 38)."""

    code = "BOOK_NOT_ALLOWED"
    public_message = "This API key does not hold this book"


class RateLimitedError(RateLimited, BookRAGError):
    """Too many requests for one API key, or too many failed authentications from one source IP."""

    code = "RATE_LIMITED"
    http_status = 429
    public_message = "Too many requests; retry after the number of seconds in Retry-After"

    def __init__(self, retry_after: int, *, limit: int, window_s: int, scope: str) -> None:
        super().__init__(details={"scope": scope, "limit": limit, "window_s": window_s, "retry_after_s": retry_after})
        self.retry_after: float | None = retry_after


class AuthUnavailableError(Unavailable, BookRAGError, ConnectionError):
    """The key store could not be read: fail closed (no request is served unauthenticated)."""

    code = "AUTH_UNAVAILABLE"
    http_status = 503
    public_message = "Authentication is temporarily unavailable; retry shortly"


# --- embedding ----------------------------------------------------------------------------------


class EmbeddingError(BookRAGError, RuntimeError):
    """The embedder failed (model missing, upstream error)."""

    code = "EMBEDDING_ERROR"
    public_message = "Error occurred while generating embedding"


class EmbeddingRateLimitError(RateLimited, EmbeddingError):
    public_message = "Embedding service is rate limited; retry shortly"


class EmbeddingTimeoutError(TimedOut, EmbeddingError):
    """Like a refused or reset connection, a CONNECTION_ERROR (as for the store)."""

    code = "CONNECTION_ERROR"
    public_message = "Embedding service timed out"


class EmbeddingUnavailableError(Unavailable, EmbeddingError):
    code = "CONNECTION_ERROR"
    public_message = "Error connecting to the embedding service"


class EmbeddingAuthError(UpstreamAuthError, EmbeddingError):
    code = "AUTH_ERROR"
    public_message = "Authentication failed with the embedding service"


# --- vector store ---------------------------------------------------------------------------------


class RetrievalError(BookRAGError):
    """The agent contract's RetrievalError ("failed to search vector database"): every store error."""

    code = "SEARCH_ERROR"
    public_message = "Error occurred while searching the book index"


class StoreError(RetrievalError, RuntimeError):
    code = "SEARCH_ERROR"
    public_message = "Error occurred while searching the book index"


class StoreConnectionError(RetrievalError, ConnectionError):
    code = "CONNECTION_ERROR"
    recoverable = True
    public_message = "Unable to connect to content database"


class StoreTimeoutError(TimedOut, StoreConnectionError):

    public_message = "Content database timed out"


class StoreUnavailableError(Unavailable, StoreConnectionError):
    """A 5xx, or a 2xx whose body is not Qdrant's: no usable answer, so a CONNECTION_ERROR (as for Cohere)."""

    public_message = "Content database is temporarily unavailable"


class StoreRateLimitError(RateLimited, StoreError):
    public_message = "Content database is rate limited; retry shortly"


class StoreAuthError(UpstreamAuthError, StoreError):
    public_message = "Authentication failed with content database"


class CollectionMissingError(StoreError):
    """The collection does not exist: nothing has been ingested yet."""

    public_message = "The book has not been ingested yet"


class EmbedderMismatchError(StoreError):
    """The collection was built with another embedder than the one configured."""

    public_message = "The book index was built with a different embedding model"


class StoreLockedError(Unavailable, StoreConnectionError):
    """The embedded index folder is open in another process (one process holds an Edge shard at a time)."""

    public_message = "The book index is open in another process"
    explains_itself = True


class StoreFolderError(StoreConnectionError):
    """The embedded index folder cannot be read or written (permissions, a full disk, a damaged pointer);
    the message names the folder."""

    public_message = "The book index folder cannot be read or written"
    explains_itself = True


class StaleStoreError(StoreError):
    """The embedded folder holds an index in a format this version no longer reads: re-ingest."""

    public_message = "The book index was written by an earlier version; re-ingest the book"
    explains_itself = True


# --- answering ------------------------------------------------------------------------------------


class AnswerError(BookRAGError, RuntimeError):
    """The answerer (LLM) failed."""

    code = "AGENT_ERROR"
    public_message = "Agent failed to generate response"


# The agent contract's name: "agent failed to generate response".
AgentError = AnswerError


class AnswerRateLimitError(RateLimited, AnswerError):
    pass


class AnswerTimeoutError(TimedOut, AnswerError):
    pass


class AnswerUnavailableError(Unavailable, AnswerError):
    pass


class AnswerAuthError(UpstreamAuthError, AnswerError):
    code = "AUTH_ERROR"


# --- HTTP edge ---------------------------------------------------------------------------------


class PayloadTooLargeError(InvalidInputError):
    """A request body over the limit, refused before it is read whole."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(f"Request body too large (max {max_bytes} bytes)", code="PAYLOAD_TOO_LARGE", status=413)
        self.details = {"max_bytes": max_bytes}


# --- ingest ---------------------------------------------------------------------------------------


class DocumentError(BookRAGError, ValueError):
    """A source file cannot be ingested (binary, undecodable, empty, hostile); it is skipped."""

    code = "BAD_DOCUMENT"


class NoVersionError(BookRAGError, LookupError):
    """`bookrag rollback` has no version to go back to (none kept, or the one named is not one)."""

    code = "NO_VERSION"
    public_message = "No earlier book version is kept"


# --- conversations ---------------------------------------------------------------------------------


class SessionNotFoundError(InvalidInputError):
    """Unknown, expired, or another API key's session: the same 404, so a caller learns nothing of
    sessions that are not theirs."""

    def __init__(self) -> None:
        super().__init__("Session not found or expired; start a new one", code="SESSION_NOT_FOUND",
                         field="session_id", status=404)


class SessionStoreError(Unavailable, BookRAGError, ConnectionError):
    """The session store could not be read or written."""

    code = "SESSION_STORE_UNAVAILABLE"
    http_status = 503
    public_message = "Conversation sessions are temporarily unavailable; retry shortly"


# --- question log ----------------------------------------------------------------------------------


class UnknownQueryError(InvalidInputError):
    """Feedback names a query id the question log does not hold (never written, expired, or the log is off)."""

    def __init__(self) -> None:
        super().__init__("Unknown query id", code="QUERY_NOT_FOUND", field="query_id", status=404)


class BookNotFoundError(InvalidInputError):
    """A request or a command names a book the store does not hold (or no valid book id)."""

    def __init__(self) -> None:
        super().__init__("Unknown book", code="BOOK_NOT_FOUND", field="book", status=404)


class FeedbackExistsError(InvalidInputError):
    """A query already has its reader's vote: one vote per query."""

    def __init__(self) -> None:
        super().__init__("This answer already has feedback", code="FEEDBACK_EXISTS", field="query_id", status=409)


class QuestionLogError(Unavailable, BookRAGError, ConnectionError):
    """The question log could not be read or written (only feedback and the report ever surface it)."""

    code = "QUESTION_LOG_UNAVAILABLE"
    http_status = 503
    public_message = "Feedback is temporarily unavailable; retry shortly"
