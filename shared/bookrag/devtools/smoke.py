"""`bookrag smoke URL`: does a running deployment answer as it should? Eight requests, a pass/fail each.

Health, one retrieval, one tool call, one answer, one refusal, one bad request, a request without a
key (which must be refused: 401 from the service, 403 from API Gateway's authorizer), and the answer
streamed (from `--stream-url`, the stream function's URL, or the API itself), timed to its first event
and first text against the whole answer: behind a buffered path they all arrive at once. Each check records
its status and time; nothing here prints the key, and a failure names what was expected, never a body.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from bookrag.domain.book_version import HEADER

DEFAULT_QUESTION = "How do I install ROS 2?"
DEFAULT_OFF_BOOK = "What is the capital of France?"


@dataclass(slots=True)
class Check:
    name: str
    passed: bool = False
    status: int | None = None
    ms: float = 0.0
    detail: str = ""
    book_version: str | None = None
    first_event_ms: float | None = None  # a stream's: its first event, its first text
    first_text_ms: float | None = None

    def as_dict(self) -> dict[str, Any]:
        out = {"name": self.name, "passed": self.passed, "status": self.status, "ms": round(self.ms, 1),
               "detail": self.detail, "book_version": self.book_version}
        if self.first_event_ms is not None:
            out["first_event_ms"] = round(self.first_event_ms, 1)
            out["first_text_ms"] = round(self.first_text_ms, 1) if self.first_text_ms is not None else None
        return out


@dataclass(slots=True)
class SmokeReport:
    url: str
    checks: list[Check] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def book_versions(self) -> list[str]:
        return sorted({c.book_version for c in self.checks if c.book_version})

    def as_dict(self) -> dict[str, Any]:
        return {"url": self.url, "passed": self.passed, "book_versions": self.book_versions,
                "checks": [c.as_dict() for c in self.checks]}


Verdict = Callable[[httpx.Response], str | None]  # None: passed; else what was wrong


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _expect(status: int | tuple[int, ...], test: Callable[[Any], str | None] | None = None) -> Verdict:
    wanted = (status,) if isinstance(status, int) else status

    def verdict(response: httpx.Response) -> str | None:
        if response.status_code not in wanted:
            return f"expected HTTP {' or '.join(map(str, wanted))}"
        return test(_json(response)) if test else None

    return verdict


def _health(body: Any) -> str | None:
    return None if isinstance(body, dict) and body.get("status") == "ok" else "status is not ok"


def _chunks(key: str) -> Callable[[Any], str | None]:
    def test(body: Any) -> str | None:
        if not isinstance(body, dict) or not isinstance(body.get(key), list):
            return f"no {key} list"
        return None if body[key] else f"{key} is empty: is the book ingested?"

    return test


def _answered(body: Any) -> str | None:
    if not isinstance(body, dict) or "is_refusal" not in body:
        return "not an agent Response"
    if body["is_refusal"]:
        return f"refused ({body.get('refusal_reason') or 'no reason'})"
    return None if body.get("sources") else "an answer without sources"


def _refused(body: Any) -> str | None:
    if not isinstance(body, dict) or "is_refusal" not in body:
        return "not an agent Response"
    return None if body["is_refusal"] else "answered a question the book does not answer"


def _code(code: str) -> Callable[[Any], str | None]:
    def test(body: Any) -> str | None:
        return None if isinstance(body, dict) and body.get("code") == code else f"expected code {code}"

    return test


def _stream(client: httpx.Client, url: str, question: str, headers: dict[str, str], check: Check) -> None:
    """POST the question to the answer stream at `url`; time its first event, first text and end."""
    started = time.perf_counter()
    kind, final = "", False
    with client.stream("POST", url, json={"query": question}, headers=headers) as response:
        check.status = response.status_code
        check.book_version = response.headers.get(HEADER)
        if response.status_code != 200 or not response.headers.get("content-type", "").startswith("text/event-stream"):
            check.detail = "not an event stream"
            return
        for line in response.iter_lines():
            now = (time.perf_counter() - started) * 1000
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
                check.first_event_ms = check.first_event_ms if check.first_event_ms is not None else now
                if kind in ("delta", "final") and check.first_text_ms is None:
                    check.first_text_ms = now
                final = final or kind == "final"
    check.ms = (time.perf_counter() - started) * 1000
    check.passed = final
    check.detail = (f"first event {check.first_event_ms or 0:.0f} ms, first text {check.first_text_ms or 0:.0f} ms, "
                    f"whole {check.ms:.0f} ms") if final else "the stream ended without its final event"


def run_smoke(url: str, api_key: str | None, *, question: str = DEFAULT_QUESTION,
              off_book: str = DEFAULT_OFF_BOOK, timeout_s: float = 30.0, stream_url: str | None = None,
              transport: httpx.BaseTransport | None = None) -> SmokeReport:
    """Run every check against `url` (the API's base URL) and return the report; raises nothing."""
    base = url.rstrip("/")
    keyed = {"X-API-Key": api_key} if api_key else {}
    plan: list[tuple[str, str, str, dict[str, Any] | None, dict[str, str], Verdict]] = [
        ("health", "GET", "/api/health", None, {}, _expect(200, _health)),
        ("retrieve", "POST", "/api/retrieve", {"query": question}, keyed, _expect(200, _chunks("retrieved_chunks"))),
        ("tool call", "POST", "/api/tools/perform_retrieval", {"query": question}, keyed,
         _expect(200, _chunks("results"))),
        ("answer", "POST", "/api/answer", {"query": question}, keyed, _expect(200, _answered)),
        ("refusal", "POST", "/api/answer", {"query": off_book}, keyed, _expect(200, _refused)),
        ("bad request", "POST", "/api/retrieve", {"query": ""}, keyed, _expect(400, _code("MISSING_QUERY"))),
        # API Gateway's authorizer denies with 403; the service itself (bookrag serve) with 401.
        ("no key refused", "POST", "/api/retrieve", {"query": question}, {}, _expect((401, 403))),
    ]
    report = SmokeReport(base)
    with httpx.Client(timeout=timeout_s, transport=transport, follow_redirects=False) as client:
        for name, method, path, body, headers, verdict in plan:
            check = Check(name)
            started = time.perf_counter()
            try:
                response = client.request(method, base + path, json=body, headers=headers)
            except httpx.TimeoutException:
                check.detail = f"no answer within {timeout_s:g} s"
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                check.detail = f"request failed ({type(exc).__name__})"
            else:
                check.status = response.status_code
                check.book_version = response.headers.get(HEADER)
                problem = verdict(response)
                check.passed = problem is None
                check.detail = problem or "ok"
            check.ms = (time.perf_counter() - started) * 1000
            report.checks.append(check)
        check = Check("stream")
        stream = (stream_url or base).rstrip("/")
        try:
            _stream(client, stream if stream.endswith("/api/answer/stream") else stream + "/api/answer/stream",
                    question, keyed, check)
        except httpx.TimeoutException:
            check.detail = f"no answer within {timeout_s:g} s"
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            check.detail = f"request failed ({type(exc).__name__})"
        report.checks.append(check)
    return report
