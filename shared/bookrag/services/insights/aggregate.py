"""The report's counts: volume per day, refusal rate, latency percentiles, the most asked sections and the
answers voted down per section. Pure functions of the records and votes, so each is tested on its own."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, timedelta

import numpy as np

from bookrag.domain.question_log import FeedbackRecord, QueryRecord
from bookrag.services.insights.model import DayVolume, Latency, RouteStats, SectionCount, VotedSection

EXAMPLES = 3


def day_of(at: float) -> date:
    return datetime.fromtimestamp(at, tz=UTC).date()


def latency(values: Sequence[float]) -> Latency:
    """p50 and p95 by linear interpolation between order statistics (numpy's default, as `statistics`
    and most dashboards compute them)."""
    if not values:
        return Latency(count=0, p50_ms=None, p95_ms=None)
    p50, p95 = np.percentile(np.asarray(values, dtype=np.float64), [50, 95])
    return Latency(count=len(values), p50_ms=round(float(p50), 2), p95_ms=round(float(p95), 2))


def refusal_rate(answered: int, refused: int) -> float | None:
    """Refused among the requests that got an answer or a refusal: an error is neither."""
    judged = answered + refused
    return round(refused / judged, 4) if judged else None


def route_stats(records: Sequence[QueryRecord]) -> tuple[RouteStats, ...]:
    by_route: dict[str, list[QueryRecord]] = defaultdict(list)
    for r in records:
        by_route[r.route].append(r)
    out = []
    for route in sorted(by_route):
        rows = by_route[route]
        outcomes = Counter(r.outcome for r in rows)
        out.append(RouteStats(route=route, questions=len(rows), answered=outcomes["answered"],
                              refused=outcomes["refused"], errors=outcomes["error"],
                              refusal_rate=refusal_rate(outcomes["answered"], outcomes["refused"]),
                              latency=latency([r.latency_ms for r in rows])))
    return tuple(out)


def volume_per_day(records: Iterable[QueryRecord]) -> tuple[DayVolume, ...]:
    """One row per UTC day from the first record's day to the last's, quiet days included as zeros (a
    chart with gaps would hide them)."""
    counts: dict[date, Counter[str]] = defaultdict(Counter)
    for r in records:
        counts[day_of(r.at)][r.outcome] += 1
    if not counts:
        return ()
    first, last = min(counts), max(counts)
    rows = []
    for offset in range((last - first).days + 1):
        day = first + timedelta(days=offset)
        c = counts.get(day, Counter())
        rows.append(DayVolume(day=day.isoformat(), questions=sum(c.values()), answered=c["answered"],
                              refused=c["refused"], errors=c["error"]))
    return tuple(rows)


def top_sections(records: Iterable[QueryRecord], limit: int) -> tuple[SectionCount, ...]:
    """Sections by how many questions landed on them (their best section), then by citations, then URL."""
    asked: Counter[str] = Counter()
    cited: Counter[str] = Counter()
    titles: dict[str, str] = {}
    for r in records:
        if r.sections:
            asked[r.sections[0].url] += 1
        for url in {s.url for s in r.sections}:
            cited[url] += 1
        for s in r.sections:
            titles.setdefault(s.url, s.title)
    ranked = sorted(cited, key=lambda url: (-asked[url], -cited[url], url))[:limit]
    return tuple(SectionCount(url=url, title=titles[url], asked=asked[url], cited=cited[url]) for url in ranked)


def voted_sections(records: Iterable[QueryRecord], votes: Iterable[FeedbackRecord],
                   limit: int) -> tuple[VotedSection, ...]:
    """Votes joined to their records by query id, counted on every section the voted answer cited (a
    reader votes on the whole answer, so each section it rests on shares the vote). A vote whose record
    is outside the window, or gone, is not counted. Sections with at least one down vote, most first."""
    by_id = {r.query_id: r for r in records}
    down: Counter[str] = Counter()
    up: Counter[str] = Counter()
    titles: dict[str, str] = {}
    questions: dict[str, list[str]] = defaultdict(list)
    comments: dict[str, list[str]] = defaultdict(list)
    for vote in votes:
        record = by_id.get(vote.query_id)
        if record is None:
            continue
        for url in dict.fromkeys(s.url for s in record.sections):
            titles.setdefault(url, next(s.title for s in record.sections if s.url == url))
            if vote.rating == "up":
                up[url] += 1
                continue
            down[url] += 1
            if record.question not in questions[url] and len(questions[url]) < EXAMPLES:
                questions[url].append(record.question)
            if vote.comment and len(comments[url]) < EXAMPLES:
                comments[url].append(vote.comment)
    ranked = sorted(down, key=lambda url: (-down[url], up[url], url))[:limit]
    return tuple(VotedSection(url=url, title=titles[url], down=down[url], up=up[url],
                              questions=tuple(questions[url]), comments=tuple(comments[url])) for url in ranked)
