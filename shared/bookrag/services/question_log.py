"""The question log's one write path: what a request produced becomes a `QueryRecord`, handed to a
background writer; and a reader's vote (`POST /api/feedback`).

Every interface comes here: `POST /api/answer`, its stream's final event, MCP `answer_question`
(`services.conversations.answer_recorded`) and `POST /api/retrieve`. The request pays for building the
record (its sections, a hash of the key id) and a queue append: the scrubbing (`text.scrub`) and the store's
write happen on the writer's thread, in batches. A failed write is logged, without the question, and never
reaches the reader; a full queue drops the record (counted in the log line), never blocks a request.

Lambda freezes a process between invocations, and a thread frozen mid-write may lose its record. So on
Lambda the runtime waits for the writer at the end of each invocation (`container.flush_question_log`): after Mangum has
built the response (the buffered API's reader waits for that one write, which started as soon as the
answer was built), and, under the Web Adapter, before a response's last byte (a streamed answer's reader
already has its `final` event). `bookrag serve` never waits: its writer flushes on a short interval.
A vote asks the writer to flush first, so a reader who votes at once finds the record.
"""

from __future__ import annotations

import atexit
import hashlib
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from bookrag.domain.keys import ANONYMOUS
from bookrag.domain.question_log import FeedbackRecord, LoggedSection, QueryRecord, QuestionLog, Rating, Route
from bookrag.errors import BookRAGError, UnknownQueryError
from bookrag.observability import logger
from bookrag.text.scrub import scrub

if TYPE_CHECKING:
    from bookrag.config.settings import Settings
    from bookrag.contracts.agent import Response


class Container(Protocol):
    """What this module asks of `services.container.Container` (which builds the writer: no import back)."""

    @property
    def settings(self) -> Settings: ...

    @property
    def question_log(self) -> QuestionLog | None: ...

    @property
    def question_log_writer(self) -> LogWriter | None: ...

    book_id: str  # the book its requests read (`domain.books`)

HEADER = "X-Query-Id"
TOP_SECTIONS = 5  # the sections a record keeps: enough for "most asked sections" and "where the answer would go"


def new_query_id() -> str:
    """The REST contract's query id shape (`query_<32 hex>`), for answers too: one id format to vote on."""
    return f"query_{uuid.uuid4().hex}"


def key_hash(key_id: str) -> str:
    """What a record keeps of the caller: a hash of the key's id, never the key ("anonymous" without keys)."""
    return ANONYMOUS if key_id == ANONYMOUS else hashlib.sha256(key_id.encode()).hexdigest()


class LogWriter:
    """A bounded queue and one daemon thread that writes it in batches. Thread-safe."""

    def __init__(self, log: Callable[[], QuestionLog | None], *, capacity: int = 1000, batch: int = 25,
                 interval_s: float = 0.5) -> None:
        self._log = log  # asked per batch: a SnapStart restore rebuilds the store's client
        self._queue: deque[QueryRecord] = deque()
        self._capacity = capacity
        self._batch = batch
        self._interval_s = interval_s
        self._cond = threading.Condition()
        self._busy = False  # a batch is being written
        self._waiting = 0  # callers in `flush`: while any wait, no lingering for a fuller batch
        self._dropped = 0
        self._thread: threading.Thread | None = None

    def submit(self, record: QueryRecord) -> None:
        with self._cond:
            if len(self._queue) >= self._capacity:
                self._dropped += 1
                return
            self._queue.append(record)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="bookrag-question-log", daemon=True)
                self._thread.start()
                atexit.register(self.flush, 2.0)
            self._cond.notify_all()

    def flush(self, timeout: float = 1.0) -> bool:
        """Wait until every submitted record is written (or has failed); False if `timeout` ran out."""
        deadline = time.monotonic() + timeout
        with self._cond:
            self._waiting += 1
            self._cond.notify_all()
            try:
                while self._queue or self._busy:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._cond.wait(left)
                return True
            finally:
                self._waiting -= 1

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    self._cond.wait()
                # Linger a moment for a fuller batch, unless someone is waiting or the batch is full.
                until = time.monotonic() + self._interval_s
                while len(self._queue) < self._batch and not self._waiting and time.monotonic() < until:
                    self._cond.wait(until - time.monotonic())
                batch = [self._queue.popleft() for _ in range(min(self._batch, len(self._queue)))]
                dropped, self._dropped = self._dropped, 0
                self._busy = True
            try:
                self._write(batch, dropped)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _write(self, batch: list[QueryRecord], dropped: int) -> None:
        try:
            log = self._log()
            if log is not None:
                log.write([replace(r, question=scrub(r.question)) for r in batch])
            if dropped:
                logger.warning("question log queue full: records dropped", extra={"dropped": dropped})
        except Exception as exc:  # never the question or the store's text: only what failed, and how many
            logger.warning("question log write failed",
                           extra={"error_class": type(exc).__name__, "records": len(batch) + dropped})


@dataclass(slots=True)
class Entry:
    """One request's log entry, from the moment it is admitted."""

    route: Route
    question: str
    owner: str
    query_id: str = field(default_factory=new_query_id)
    started: float = field(default_factory=time.perf_counter)

    def answered(self, container: Container, response: Response) -> None:
        """Log an answer or a refusal (its nearest sections)."""
        sections = [(s.source_url, f"{s.chapter} > {s.section}", s.score) for s in response.sources]
        refused = response.is_refusal
        _submit(container, self, outcome="refused" if refused else "answered",
                reason=(response.refusal_reason or "refused") if refused else None,
                sections=sections, book_version=response.book_version,
                answerer=container.settings.resolved_llm_provider)

    def retrieved(self, container: Container, result: dict[str, Any]) -> None:
        """Log a `POST /api/retrieve` result (the REST contract's dict)."""
        sections = [(c["source_url"], f"{c['module_name']} > {c['section_heading']}", c["similarity_score"])
                    for c in result["retrieved_chunks"]]
        _submit(container, self, outcome="answered" if sections else "refused",
                reason=None if sections else "no_relevant_context", sections=sections,
                book_version=result.get("book_version"), answerer="")

    def failed(self, container: Container, exc: BookRAGError) -> None:
        """Log a request the service could not serve (an upstream failure: 5xx); bad input is not logged."""
        if exc.http_status >= 500:
            _submit(container, self, outcome="error", reason=exc.code, sections=[], book_version=None,
                    answerer=container.settings.resolved_llm_provider if self.route != "retrieve" else "")


def _submit(container: Container, entry: Entry, *, outcome: Any, reason: str | None,
            sections: Sequence[tuple[str, str, float]], book_version: str | None, answerer: str) -> None:
    """Hand the record to the writer; a failure here is logged and swallowed (never the reader's problem)."""
    try:
        writer = container.question_log_writer
        if writer is None:
            return
        top = [LoggedSection(url=u, title=t, score=round(float(s), 4)) for u, t, s in sections[:TOP_SECTIONS]]
        writer.submit(QueryRecord(
            query_id=entry.query_id, at=time.time(), route=entry.route, question=entry.question,
            book_version=book_version or "", outcome=outcome, refusal_reason=reason, sections=tuple(top),
            latency_ms=round((time.perf_counter() - entry.started) * 1000, 3), answerer=answerer,
            key_hash=key_hash(entry.owner), top_score=max((s.score for s in top), default=None),
            book=container.book_id))
    except Exception as exc:
        logger.warning("question log record dropped", extra={"error_class": type(exc).__name__})


def logging_on(container: Container) -> bool:
    """Whether answers carry a query id to vote on (QUESTION_LOG=on)."""
    return container.settings.question_log == "on"


def add_feedback(container: Container, query_id: str, rating: Rating, comment: str | None) -> None:
    """Store a reader's vote on an answer. Raises `UnknownQueryError` (404: never logged, expired, or the log
    is off), `FeedbackExistsError` (409) and `QuestionLogError` (503)."""
    log = container.question_log
    if log is None:
        raise UnknownQueryError()
    writer = container.question_log_writer
    if writer is not None:
        writer.flush(2.0)  # the record of an answer this process has just given
    log.add_feedback(FeedbackRecord(query_id=query_id, rating=rating, at=time.time(),
                                    comment=scrub(comment) if comment else None, book=container.book_id))
