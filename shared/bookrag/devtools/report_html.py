"""`bookrag report --html FILE`: the report as one self-contained HTML page, its charts drawn by matplotlib
(the `report` extra) and embedded as PNG data URLs.

Questions and comments are readers' input: every text on the page goes through `html.escape`, a link is
kept only for an http(s) or site-relative URL, and the page's Content-Security-Policy allows no script at
all, so a question holding markup is shown as text. In a chart a `$` would start matplotlib's math mode,
so chart labels escape it.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any

from bookrag.services.insights.model import Latency, Report

if TYPE_CHECKING:
    from matplotlib.figure import Figure

INSTALL = "pip install 'bookrag[report]'"
WIDTH_IN = 9.0
COLOURS = {"answered": "#2f7d4f", "refused": "#c8553d", "errors": "#8a8a8a", "p50": "#3d6fc8", "p95": "#9bb4e6",
           "bar": "#3d6fc8", "down": "#c8553d"}
LABEL_CHARS = 60


class MissingExtraError(RuntimeError):
    pass


def load_renderer() -> Callable[[Report], str]:
    """The renderer, or `MissingExtraError` saying how to install the plotting library it needs."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise MissingExtraError(f"--html draws its charts with matplotlib, which is not installed: {INSTALL}") \
            from None
    return render_html


def _figure(height_in: float) -> Figure:
    from matplotlib.figure import Figure  # no pyplot: no global state, no GUI backend

    fig = Figure(figsize=(WIDTH_IN, height_in), dpi=100, layout="constrained")
    return fig


def _png(fig: Figure, alt: str) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img class="chart" alt="{escape(alt)}" src="data:image/png;base64,{data}">'


def _label(text: str) -> str:
    short = text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"
    return short.replace("$", r"\$")


def _barh(labels: list[str], values: list[int], colour: str, xlabel: str, alt: str) -> str:
    fig = _figure(0.8 + 0.32 * len(labels))
    ax = fig.add_subplot()
    positions = list(range(len(labels)))[::-1]  # the first row at the top
    ax.barh(positions, values, color=colour)
    ax.set_yticks(positions, labels=[_label(s) for s in labels], fontsize=9)
    ax.set_xlabel(xlabel)
    ax.spines[["top", "right"]].set_visible(False)
    return _png(fig, alt)


def volume_chart(report: Report) -> str:
    days = report.volume_per_day
    fig = _figure(3.2)
    ax = fig.add_subplot()
    x = list(range(len(days)))
    bottom = [0] * len(days)
    for key in ("answered", "refused", "errors"):
        values = [getattr(d, key) for d in days]
        ax.bar(x, values, bottom=bottom, color=COLOURS[key], label=key, width=0.85)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    step = max(1, len(days) // 10)
    ax.set_xticks(x[::step], labels=[d.day[5:] for d in days][::step], fontsize=9)
    ax.set_ylabel("questions per day (UTC)")
    ax.legend(frameon=False, ncols=3, loc="lower left", bbox_to_anchor=(0, 1))
    ax.spines[["top", "right"]].set_visible(False)
    return _png(fig, "Questions per day: answered, refused and errors")


def latency_chart(report: Report) -> str:
    rows: list[tuple[str, Latency]] = [("all", report.latency), *((r.route, r.latency) for r in report.routes)]
    rows = [(name, lat) for name, lat in rows if lat.p50_ms is not None]
    fig = _figure(3.0)
    ax = fig.add_subplot()
    x = list(range(len(rows)))
    ax.bar([i - 0.2 for i in x], [lat.p50_ms or 0 for _, lat in rows], width=0.4, color=COLOURS["p50"], label="p50")
    ax.bar([i + 0.2 for i in x], [lat.p95_ms or 0 for _, lat in rows], width=0.4, color=COLOURS["p95"], label="p95")
    ax.set_xticks(x, labels=[name for name, _ in rows], fontsize=9)
    ax.set_ylabel("latency (ms)")
    ax.legend(frameon=False, ncols=2, loc="lower left", bbox_to_anchor=(0, 1))
    ax.spines[["top", "right"]].set_visible(False)
    return _png(fig, "Latency p50 and p95 per route")


def _link(url: str, text: str) -> str:
    if url.startswith(("https://", "http://", "/")):
        return f'<a href="{escape(url)}">{escape(text)}</a>'
    return escape(text)


def _rate(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.1%}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms"


def _gaps(report: Report) -> list[str]:
    g = report.gaps
    out = [f"<h2>Content gaps</h2><p>{g.questions} questions ({g.distinct} distinct) in {g.clusters_total} topics. "
           f"A gap: {escape(g.definition)}. One topic: cosine similarity &ge; {g.similarity} "
           f"({escape(g.embedder)}).</p>"]
    off = g.off_topic
    if off is not None and off.below is not None:
        examples = "; ".join(escape(q) for q in off.examples)
        out.append(f"<p>Near the book, not answered: {g.near_clusters} topics, listed below with where an answer "
                   f"would go. Off-topic (the nearest chunk under {off.below}): {off.questions} questions in "
                   f"{off.clusters} topics{', e.g. ' + examples if examples else ''}.</p>")
    if not g.clusters:
        return [*out, "<p>No gaps near the book in this window.</p>"]
    out.append(_barh([f"#{n} {c.label}" for n, c in enumerate(g.clusters, 1)], [c.count for c in g.clusters],
                     COLOURS["refused"], "gap questions", "Gap topics by number of questions"))
    out.append("<table><tr><th>#</th><th>asked</th><th>refused</th><th>questions</th>"
               "<th>where an answer would go</th></tr>")
    for n, c in enumerate(g.clusters, 1):
        examples = "".join(f"<li>{escape(q)}</li>" for q in c.examples)
        nearest = "".join(f"<li>{_link(s.url, s.title)} <span class=dim>{s.score:.2f}</span></li>"
                          for s in c.nearest_sections)
        out.append(f"<tr><td>{n}</td><td>{c.count}</td><td>{c.refused}</td><td><ul>{examples}</ul></td>"
                   f"<td><ul>{nearest}</ul></td></tr>")
    out.append("</table>")
    return out


def _sections(report: Report) -> list[str]:
    out = ["<h2>Most asked sections</h2>"]
    if not report.top_sections:
        return [*out, "<p>None.</p>"]
    out.append(_barh([s.title for s in report.top_sections], [s.asked for s in report.top_sections],
                     COLOURS["bar"], "questions whose best section it is", "Most asked sections"))
    out.append("<table><tr><th>asked</th><th>cited</th><th>section</th></tr>")
    out += [f"<tr><td>{s.asked}</td><td>{s.cited}</td><td>{_link(s.url, s.title)}</td></tr>"
            for s in report.top_sections]
    out.append("</table><h2>Answers voted down</h2>")
    if not report.downvoted_sections:
        return [*out, "<p>No down votes in this window.</p>"]
    down = report.downvoted_sections
    out.append(_barh([s.title for s in down], [s.down for s in down], COLOURS["down"], "down votes on answers "
                     "citing the section", "Down votes per section"))
    out.append("<table><tr><th>down</th><th>up</th><th>section</th><th>questions and comments</th></tr>")
    for s in down:
        said = "".join(f"<li>{escape(q)}</li>" for q in s.questions)
        said += "".join(f"<li class=comment>{escape(c)}</li>" for c in s.comments)
        out.append(f"<tr><td>{s.down}</td><td>{s.up}</td><td>{_link(s.url, s.title)}</td><td><ul>{said}</ul></td></tr>")
    out.append("</table>")
    return out


def _summary(report: Report) -> str:
    return (f"<p class=summary>{report.questions} questions: {report.answered} answered, {report.refused} refused, "
            f"{report.errors} errors. Refusal rate {_rate(report.refusal_rate)}. Latency p50 "
            f"{_ms(report.latency.p50_ms)}, p95 {_ms(report.latency.p95_ms)}. Votes: {report.votes_up} up, "
            f"{report.votes_down} down.</p>")


def _traffic(report: Report) -> list[str]:
    out = []
    if report.volume_per_day:
        out += ["<h2>Questions per day</h2>", volume_chart(report), "<h2>Latency</h2>", latency_chart(report)]
    out.append("<table><tr><th>route</th><th>questions</th><th>refusal rate</th><th>p50</th><th>p95</th></tr>")
    out += [f"<tr><td>{escape(r.route)}</td><td>{r.questions}</td><td>{_rate(r.refusal_rate)}</td>"
            f"<td>{_ms(r.latency.p50_ms)}</td><td>{_ms(r.latency.p95_ms)}</td></tr>" for r in report.routes]
    out.append("</table>")
    return out


STYLE = """body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
.dim,.meta{color:#666}.chart{max-width:100%;height:auto;display:block;margin:.5rem 0}
table{border-collapse:collapse;width:100%;font-size:.9rem}td,th{border-bottom:1px solid #eee;padding:.35rem;
text-align:left;vertical-align:top}ul{margin:0;padding-left:1.1rem}.comment{font-style:italic}
.summary{font-size:1.05rem}"""


def render_html(report: Report) -> str:
    notes = "".join(f"<p class=meta>Note: {escape(n)}</p>" for n in report.notes)
    body: list[Any] = [f"<h1>What readers ask</h1><p class=meta>Since {escape(report.since)}, from "
                       f"{escape(report.log)}; generated {escape(report.generated_at)}.</p>{notes}",
                       _summary(report), *_gaps(report), *_traffic(report), *_sections(report)]
    return ("<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
            "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; img-src data:; "
            "style-src 'unsafe-inline'\">"
            "<meta name=viewport content=\"width=device-width,initial-scale=1\">"
            f"<title>What readers ask</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
