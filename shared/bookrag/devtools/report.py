"""`bookrag report`: what readers ask, for the book's owner, as text (default), JSON (`--json`) or an HTML page
with charts (`--html FILE`, the `report` extra). The report itself is built in `services.insights`."""

from __future__ import annotations

import re
import time
import unicodedata
from pathlib import Path
from typing import Annotated

import typer

from bookrag.devtools.console import BookOption, book_container, echo_json, fail
from bookrag.domain.books import DEFAULT_BOOK
from bookrag.errors import BookRAGError
from bookrag.services.insights.model import Latency, Report

_SINCE = re.compile(r"^(\d{1,5})([hdw])$")
_UNIT_S = {"h": 3600, "d": 86_400, "w": 7 * 86_400}


def parse_since(value: str, now: float) -> float:
    """'30d', '12h', '2w' before `now`, or 'all' (the whole retained log) -> epoch seconds."""
    if value == "all":
        return 0.0
    match = _SINCE.match(value.strip())
    if not match:
        raise typer.BadParameter("use a number of hours, days or weeks (12h, 30d, 2w) or 'all'", param_hint="--since")
    return now - int(match.group(1)) * _UNIT_S[match.group(2)]


def report_cmd(
    since: Annotated[str, typer.Option("--since", help="How far back: 12h, 30d, 2w, or all")] = "30d",
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON (schema bookrag.report/1)")]
    = False,
    html: Annotated[Path | None, typer.Option("--html", help="Also write an HTML page with charts here (needs "
                                                            "the report extra: pip install 'bookrag[report]')")]
    = None,
    gaps: Annotated[int, typer.Option("--gaps", min=1, max=100, help="Gap clusters shown")] = 15,
    book: BookOption = DEFAULT_BOOK,
) -> None:
    """What readers ask: content gaps (refused and low-confidence questions clustered by topic, with the
    sections where an answer would go), the most asked sections, answers voted down, volume per day,
    refusal rate and latency, from the question log the settings name (local folder or deployed table)."""
    from bookrag.services.insights.report import build_report

    now = time.time()
    start = parse_since(since, now)
    render_html = None
    if html is not None:  # before the log is read: a missing extra should not cost a whole report
        from bookrag.devtools.report_html import MissingExtraError, load_renderer

        try:
            render_html = load_renderer()
        except MissingExtraError as exc:
            typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
            raise typer.Exit(2) from None
    try:
        container = book_container(book)
        if container.question_log is None:
            typer.secho("error: the question log is off (QUESTION_LOG=off): there is nothing to report",
                        fg=typer.colors.RED, err=True)
            raise typer.Exit(2)
        report = build_report(container, start, now=now, gap_clusters=gaps)
    except BookRAGError as exc:
        fail(exc, as_json)
        return
    if render_html is not None and html is not None:
        html.write_text(render_html(report), encoding="utf-8")
    if as_json:
        echo_json(report.as_dict())
    else:
        typer.echo(render_text(report))
        if html is not None:
            typer.echo(f"\nHTML report: {html}")


def safe(text: str) -> str:
    """A reader's text made inert for a terminal: control characters (an escape sequence could clear
    the owner's screen or rewrite a line) shown as their code point."""
    return "".join(f"\\u{ord(ch):04x}" if unicodedata.category(ch) in ("Cc", "Cf") else ch for ch in text)


def _ms(latency: Latency) -> str:
    if latency.p50_ms is None:
        return "-"
    return f"p50 {latency.p50_ms:.0f} ms, p95 {latency.p95_ms:.0f} ms"


def _rate(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.1%}"


def render_text(report: Report) -> str:
    lines = [f"What readers ask of book '{report.book}', since {report.since} ({report.log})", "",
             f"{report.questions} questions: {report.answered} answered, {report.refused} refused, "
             f"{report.errors} errors; refusal rate {_rate(report.refusal_rate)}; latency {_ms(report.latency)}; "
             f"votes {report.votes_up} up, {report.votes_down} down"]
    for route in report.routes:
        lines.append(f"  {route.route:<14} {route.questions:>6} questions, refusal rate {_rate(route.refusal_rate)}, "
                     f"{_ms(route.latency)}")
    g = report.gaps
    lines += ["", f"Content gaps: {g.questions} questions ({g.distinct} distinct) in {g.clusters_total} topics",
              f"  a gap: {g.definition}; one topic: cosine >= {g.similarity} ({g.embedder})",
              "", f"Near the book, not answered ({g.near_clusters} topics; where an answer would go):"]
    for n, c in enumerate(g.clusters, start=1):
        lines.append(f"{n:>3}. {c.count} asked ({c.refused} refused, {c.low_confidence} low confidence), "
                     f"{c.distinct} distinct")
        lines += [f"       \"{safe(q)}\"" for q in c.examples]
        lines += [f"       -> {s.title}  {s.url}  ({s.score:.2f})" for s in c.nearest_sections]
    if not g.clusters:
        lines.append("  none")
    off = g.off_topic
    if off is not None and off.below is not None:
        lines.append(f"\nOff-topic (nearest chunk under {off.below}): {off.questions} questions in {off.clusters} "
                     "topics" + (", e.g. " + "; ".join(f"\"{safe(q)}\"" for q in off.examples) if off.examples else ""))
    lines += ["", "Most asked sections (asked = the question's best section; cited = among its sections):"]
    lines += [f"  {s.asked:>5} asked {s.cited:>5} cited  {s.title}  {s.url}" for s in report.top_sections]
    if not report.top_sections:
        lines.append("  none")
    lines += ["", "Answers voted down, per section cited:"]
    for v in report.downvoted_sections:
        lines.append(f"  {v.down:>3} down {v.up:>3} up  {v.title}  {v.url}")
        lines += [f"       \"{safe(q)}\"" for q in v.questions]
        lines += [f"       comment: {safe(c)}" for c in v.comments]
    if not report.downvoted_sections:
        lines.append("  none")
    lines += ["", "Volume per day (UTC): questions / refused"]
    lines += [f"  {d.day}  {d.questions:>5} / {d.refused}" for d in report.volume_per_day]
    lines += [f"\nnote: {note}" for note in report.notes]
    return "\n".join(lines)
