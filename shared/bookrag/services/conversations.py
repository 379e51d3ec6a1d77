"""One answer with its conversation: `POST /api/answer`, `run_agent` and `bookrag ask` all come here.

Without history, session or selection this is exactly `agent.run(query)`: the agent contract's
`Response`, unchanged. With them: the earlier turns come from the client (`history`) or from the
caller's session (`session_id`, owned by the API key that started it); the agent resolves the
follow-up and scopes a selection; a session then keeps the new turn (the oldest dropped past the
limits in `domain.query.CONVERSATION`) and its expiry moves on.
"""

from __future__ import annotations

import contextvars
import secrets
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from bookrag.adapters.sessions import encode_turns
from bookrag.contracts.agent import AnswerRequest, Response
from bookrag.contracts.validation import invalid_input
from bookrag.domain.books import DEFAULT_BOOK
from bookrag.domain.conversation import Conversation, Selection, Session, Turn
from bookrag.domain.keys import ANONYMOUS
from bookrag.domain.query import CONVERSATION
from bookrag.errors import BookRAGError, InvalidInputError, SessionNotFoundError
from bookrag.observability import record_refusal
from bookrag.services.question_log import Entry, logging_on
from bookrag.services.tools import Tool, register

if TYPE_CHECKING:
    from bookrag.answering.agent import AgentEvent
    from bookrag.services.container import Container

# Whose request this is (the API key id the middleware admitted), for callers that cannot pass it along:
# an MCP tool call (set per HTTP request by `mcp.asgi`; stdio, `bookrag mcp`, is one local user).
CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("bookrag_caller", default=ANONYMOUS)


def new_session_id() -> str:
    return CONVERSATION.session_id_prefix + secrets.token_urlsafe(24)  # 32 characters, 192 bits


def parse_request(**fields: Any) -> AnswerRequest:
    """The request model from Python arguments; a violation raises `InvalidInputError` with the same
    code the HTTP route gives (the model's `error_codes`)."""
    try:
        return AnswerRequest.model_validate({k: v for k, v in fields.items() if v is not None})
    except ValidationError as exc:
        raise invalid_input(AnswerRequest.error_codes, exc.errors()) from None


def bounded(turns: Sequence[Turn]) -> tuple[Turn, ...]:
    """The most recent turns within the session limits (oldest dropped first, answers truncated)."""
    kept = tuple(Turn(t.question, t.answer[:CONVERSATION.max_turn_answer_chars], t.standalone)
                 for t in turns)[-CONVERSATION.max_turns:]
    while len(kept) > 1 and len(encode_turns(kept).encode()) > CONVERSATION.max_session_bytes:
        kept = kept[1:]
    return kept


def answer(container: Container, request: AnswerRequest, owner: str = ANONYMOUS) -> Response:
    """The agent's Response, carrying the book version it was answered from (`Response.book_version`).
    Raises what `BookRAGAgent.run` raises, `InvalidInputError` (CONFLICTING_CONVERSATION),
    `SessionNotFoundError` (404) and `SessionStoreError` (503)."""
    turn = _Turn.begin(container, request, owner)
    return stamped(container, turn.end(container.agent.run(request.query, turn.conversation)))


def answer_recorded(container: Container, request: AnswerRequest, entry: Entry) -> Response:
    """`answer` for `entry.owner`, its refusal (or not) counted in the metrics and the question logged
    (`entry`): what `POST /api/answer` and the MCP `answer_question` tool both serve. Raises as `answer` does."""
    try:
        response = answer(container, request, entry.owner)
    except BookRAGError as exc:
        entry.failed(container, exc)
        raise
    record_refusal(response.is_refusal)
    entry.answered(container, response)
    return response


def answer_events(container: Container, request: AnswerRequest, entry: Entry) -> Iterator[AgentEvent]:
    """`answer` for `entry.owner`, step by step (`BookRAGAgent.events`): its `final` event carries exactly
    the response `answer` returns (the session's turn stored), and is logged (`entry`). Raises as `answer`
    does, from the first event on."""
    try:
        turn = _Turn.begin(container, request, entry.owner)
        for event in container.agent.events(request.query, turn.conversation):
            if event.kind == "final":
                event = replace(event, response=stamped(container, turn.end(event.response)))
                entry.answered(container, event.response)
            yield event
    except BookRAGError as exc:
        entry.failed(container, exc)
        raise


def stamped(container: Container, response: Response) -> Response:
    """`response` with the label of the book version its request read (the request's pinned one)."""
    version = container.store.book_version()
    return response.with_book_version(version.label if version else None)


@dataclass(frozen=True, slots=True)
class _Turn:
    """One request's conversation: where its history comes from, and the session that keeps it."""

    request: AnswerRequest
    owner: str
    conversation: Conversation | None
    session: Session | None
    container: Container
    now: int

    @classmethod
    def begin(cls, container: Container, request: AnswerRequest, owner: str) -> _Turn:
        if request.session_id and (request.history or request.start_session):
            raise InvalidInputError("Send either history or a session (session_id or start_session), not both",
                                    code="CONFLICTING_CONVERSATION", field="session_id")
        if request.history and request.start_session:
            raise InvalidInputError("Send either history or a session (session_id or start_session), not both",
                                    code="CONFLICTING_CONVERSATION", field="start_session")
        selection = Selection(request.selected_text, request.source_url, request.source_file) \
            if request.selected_text else None
        session: Session | None = None
        now = int(time.time())
        # A session belongs to its key and its book: a key of several books never carries one book's
        # conversation into another (the default book's sessions keep the owner they always had).
        owner = owner if container.book_id == DEFAULT_BOOK else f"{owner}#{container.book_id}"
        if request.session_id:
            session = container.sessions.get(request.session_id, now)
            if session is None or not secrets.compare_digest(session.owner, owner):
                raise SessionNotFoundError()
            history = session.turns
        elif request.start_session:
            session = Session(new_session_id(), owner)
            history = ()
        else:
            history = tuple(Turn(t.question, t.answer) for t in request.history or ())
        # No conversation: the agent answers the contract's Response as it was.
        conversation = None if session is None and not history and selection is None \
            else Conversation(history=history, selection=selection)
        return cls(request, owner, conversation, session, container, now)

    def end(self, response: Response) -> Response:
        """The response, after the session (if any) has kept this turn."""
        session = self.session
        if session is None:
            return response
        turn = Turn(self.request.query, response.answer, response.standalone_question or self.request.query)
        self.container.sessions.put(Session(session.session_id, self.owner, bounded([*session.turns, turn]),
                                            self.now + CONVERSATION.session_ttl_s))
        return response.model_copy(update={"session_id": session.session_id})


def _answer_question(container: Container, request: AnswerRequest) -> Response:
    entry = Entry("mcp_answer", request.query, CALLER.get())
    response = answer_recorded(container, request, entry)
    # An MCP client votes on it with POST /api/feedback, as the widget does with X-Query-Id.
    return response.with_query_id(entry.query_id if logging_on(container) else None)


# The MCP form of POST /api/answer (which is its REST route, so it has no tool route of its own).
register(Tool(
    "answer_question", "Answer from the book",
    "Answer a question from the book only, citing its sections ([n] markers number `sources`); or refuse "
    "(is_refusal) with the nearest sections when the book does not answer it.",
    AnswerRequest, Response, _answer_question, envelope="agent", exclude_none=True, retrieval=False,
    listed=False))
