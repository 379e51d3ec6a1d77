"""The question log as two JSON-lines files in a folder (`QUESTION_LOG_PATH`, `.bookrag/question-log`):
`questions.jsonl` and `feedback.jsonl`, one object per line, appended under a lock.

One process writes (`bookrag serve`); the report reads. Records older than the retention are dropped
when the file is read, and `prune` rewrites the files without them. A torn or foreign line is skipped:
one bad line must not hide the rest of the log.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, TypeVar

from bookrag.domain.books import DEFAULT_BOOK
from bookrag.domain.question_log import FeedbackRecord, LoggedSection, QueryRecord, comments_later
from bookrag.errors import FeedbackExistsError, QuestionLogError, UnknownQueryError

QUESTIONS = "questions.jsonl"
FEEDBACK = "feedback.jsonl"
T = TypeVar("T", QueryRecord, FeedbackRecord)


def record_to_dict(record: QueryRecord) -> dict[str, Any]:
    return _booked(asdict(record))


def _booked(item: dict[str, Any]) -> dict[str, Any]:
    """A line names its book unless it is the default one: a one-book deployment's lines stay as they were."""
    if item.get("book") == DEFAULT_BOOK:
        del item["book"]
    return item


def record_from_dict(item: dict[str, Any]) -> QueryRecord:
    """A record from its JSON object; raises `KeyError`/`TypeError`/`ValueError` on a foreign shape."""
    sections = tuple(LoggedSection(url=str(s["url"]), title=str(s["title"]), score=float(s["score"]))
                     for s in item.get("sections") or ())
    top = item.get("top_score")
    return QueryRecord(query_id=str(item["query_id"]), at=float(item["at"]), route=item["route"],
                       question=str(item["question"]), book_version=str(item.get("book_version") or ""),
                       outcome=item["outcome"], refusal_reason=item.get("refusal_reason"), sections=sections,
                       latency_ms=float(item["latency_ms"]), answerer=str(item.get("answerer") or ""),
                       key_hash=str(item.get("key_hash") or ""), top_score=None if top is None else float(top),
                       book=str(item.get("book") or DEFAULT_BOOK))


def feedback_from_dict(item: dict[str, Any]) -> FeedbackRecord:
    comment = item.get("comment")
    return FeedbackRecord(query_id=str(item["query_id"]), rating=item["rating"], at=float(item["at"]),
                          comment=None if comment is None else str(comment), book=str(item.get("book") or DEFAULT_BOOK))


class LocalQuestionLog:
    def __init__(self, folder: Path, *, retention_days: int = 90) -> None:
        self.folder = folder
        self.retention_s = retention_days * 86_400.0
        self._lock = threading.Lock()
        self._known: dict[str, str] | None = None  # query id -> its book, read once on the first vote
        self._voted: dict[str, FeedbackRecord] | None = None

    def write(self, records: list[QueryRecord]) -> None:
        if not records:
            return
        lines = "".join(json.dumps(record_to_dict(r), ensure_ascii=False, separators=(",", ":")) + "\n"
                        for r in records)
        with self._lock:
            self._append(QUESTIONS, lines)
            if self._known is not None:
                self._known.update((r.query_id, r.book) for r in records)

    def add_feedback(self, feedback: FeedbackRecord) -> None:
        with self._lock:
            if self._known is None or self._voted is None:
                self._known = {r.query_id: r.book for r in self.records(0.0)}
                self._voted = {f.query_id: f for f in self.feedback(0.0)}
            if self._known.get(feedback.query_id) != feedback.book:  # another book's query is as unknown
                raise UnknownQueryError()
            earlier = self._voted.get(feedback.query_id)
            if earlier is not None:
                if not comments_later(earlier, feedback):
                    raise FeedbackExistsError()
                # The vote keeps its time; the later line carries the comment and replaces it on reading.
                feedback = replace(earlier, comment=feedback.comment)
            line = json.dumps(_booked(asdict(feedback)), ensure_ascii=False, separators=(",", ":"))
            self._append(FEEDBACK, line + "\n")
            self._voted[feedback.query_id] = feedback

    def records(self, since: float) -> Iterator[QueryRecord]:
        return self._read(QUESTIONS, since, record_from_dict)

    def feedback(self, since: float) -> Iterator[FeedbackRecord]:
        # One vote per query: a comment attached later is a second line for the same query id.
        votes: dict[str, FeedbackRecord] = {}
        for vote in self._read(FEEDBACK, since, feedback_from_dict):
            votes[vote.query_id] = vote
        return iter(votes.values())

    def _append(self, name: str, text: str) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            # One write call per batch on an O_APPEND file: lines of two batches never interleave.
            fd = os.open(self.folder / name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, text.encode("utf-8"))
            finally:
                os.close(fd)
        except OSError as exc:
            raise QuestionLogError("the question log could not be written") from exc

    def _read(self, name: str, since: float, parse: Callable[[dict[str, Any]], T]) -> Iterator[T]:
        cutoff = max(since, time.time() - self.retention_s)
        try:
            handle = (self.folder / name).open(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return
        except OSError as exc:
            raise QuestionLogError("the question log could not be read") from exc
        with handle:
            for line in handle:
                try:
                    parsed = parse(json.loads(line))
                except (ValueError, KeyError, TypeError, AttributeError):
                    continue
                if parsed.at >= cutoff:
                    yield parsed
