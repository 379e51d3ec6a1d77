"""An answerer for chat models that call tools (Gemini, any OpenAI-compatible endpoint): a tool loop.

The first `retrieve_book_context` call is made by the agent before the model runs (the contract's
"always retrieve first" is enforced in code, not left to the model); its result is in the user
message. The model may then call the tool again with a reformulated query, for at most
`llm_max_steps` model calls in total, the last of them without tools so that it must answer.
Every call's timeout is capped by the request's `Deadline` (`adapters.llm.port`).

`stream` runs the same loop with every call streamed (any call may turn out to be the answer: a model
usually answers at once from the first results), yielding content as it arrives. The model retries a
call only until its first text, so no text is ever sent twice; after that a failure ends the stream
with the same typed error `answer` raises.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator
from dataclasses import replace
from typing import TYPE_CHECKING

from bookrag.adapters.llm.port import ChatModel, ChatReply, ChatRequest, Message, Tool, ToolCall
from bookrag.answering.answerers.base import (
    DocumentSet,
    Draft,
    NotTheAnswer,
    Retrieve,
    drained,
    is_refusal_text,
    reader_locale,
    render_documents,
    run_within,
    system_prompt,
    user_message,
)
from bookrag.contracts.tools import tool_definition
from bookrag.domain.deadline import Deadline
from bookrag.domain.models import SearchHit
from bookrag.domain.query import normalize_query

if TYPE_CHECKING:
    from bookrag.config.settings import Settings

RETRIEVE_TOOL = Tool(**tool_definition("retrieve_book_context"))
# A model-requested search may use what is left minus the final answer's reserve, if that is at least
# MIN_SEARCH_S; past its budget it is abandoned and the model answers from what it has.
FINAL_ANSWER_RESERVE_S = 5.0
MIN_SEARCH_S = 0.5
MAX_TOOL_CALLS_PER_STEP = 3


class ToolCallingAnswerer:
    marks_inline = True  # the model writes the markers into its text

    def __init__(self, settings: Settings, chat: ChatModel, title: Callable[[], str] = str) -> None:
        self.settings = settings
        self._chat = chat
        self._title = title  # the served book's title, read per request (a new version may retitle it)
        self.name = chat.name
        self.model = chat.model

    def answer(self, question: str, hits: list[SearchHit], retrieve: Retrieve, deadline: Deadline) -> Draft:
        """Raises `AnswerError` subclasses, and whatever `retrieve` raises for a model-requested search."""
        return drained(self._tool_loop(question, hits, retrieve, deadline, streaming=False))[1]

    def stream(self, question: str, hits: list[SearchHit], retrieve: Retrieve, deadline: Deadline,
               documents: DocumentSet | None = None) -> Generator[str, None, Draft]:
        """`answer`, yielding the model's text as it arrives; raises as `answer` does, also after
        some text has been yielded (the agent's stream then ends with its error event)."""
        return (yield from self._tool_loop(question, hits, retrieve, deadline, streaming=True, docs=documents))

    def _tool_loop(self, question: str, hits: list[SearchHit], retrieve: Retrieve, deadline: Deadline, *,
                   streaming: bool, docs: DocumentSet | None = None) -> Generator[str, None, Draft]:
        """The tool loop shared by `answer` and `stream`: the same requests, the same message
        handling, the same draft for the same model output."""
        docs = DocumentSet() if docs is None else docs
        title = self._title()
        tool = RETRIEVE_TOOL if not title else Tool(**tool_definition("retrieve_book_context", title=title))
        messages = [Message("system", system_prompt(title, reader_locale())),
                    Message("user", user_message(question, docs.add(hits)))]
        steps = self.settings.llm_max_steps
        for step in range(steps):
            request = ChatRequest(tuple(messages), tools=(tool,) if step < steps - 1 else ())
            reply: ChatReply = ((yield from self._chat.stream(request, deadline)) if streaming
                                else self._chat.complete(request, deadline))
            calls = [replace(c, id=c.id or f"call_{step}_{i}")
                     for i, c in enumerate(reply.tool_calls[:MAX_TOOL_CALLS_PER_STEP])]
            if calls and step < steps - 1:
                if streaming and reply.text:
                    # Text before a tool call ("Let me search.") has been streamed but is not the
                    # answer: a line break keeps the answer from running on from it.
                    yield NotTheAnswer("\n")
                messages.append(Message("assistant", reply.text or None, tool_calls=tuple(calls)))
                messages.extend(Message("tool", self._run_tool(c, docs, retrieve, deadline), tool_call_id=c.id)
                                for c in calls)
                continue
            if is_refusal_text(reply.text):
                return Draft(reply.text, refused=True, reason="model_refused")
            return Draft(reply.text, citations=docs.citations())
        raise AssertionError("unreachable: the last step offers no tools")  # pragma: no cover

    def _run_tool(self, call: ToolCall, docs: DocumentSet, retrieve: Retrieve, deadline: Deadline) -> str:
        if call.name != RETRIEVE_TOOL.name:
            return "Unknown tool. The only tool is retrieve_book_context."
        try:
            args = json.loads(call.arguments or "{}")
        except ValueError:
            args = None
        query = normalize_query(args["query"]) if isinstance(args, dict) and isinstance(args.get("query"), str) else ""
        if not query or len(query) > 1000:
            return "Invalid arguments: query must be a non-empty string of at most 1000 characters."
        budget = deadline.remaining() - FINAL_ANSWER_RESERVE_S
        if budget < MIN_SEARCH_S:
            return "No time left for another search: answer from the documents you already have."
        try:
            hits = run_within(lambda: retrieve(query), budget)
        except TimeoutError:
            return "The search took too long: answer from the documents you already have."
        return render_documents(docs.add(hits))
