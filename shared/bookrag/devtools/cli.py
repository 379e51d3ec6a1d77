"""The `bookrag` command line: ingest, rollback, versions, retrieve, ask, eval, report, invoke, serve, mcp, smoke."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bookrag.devtools import ops, report
from bookrag.devtools.console import BookOption, book_container, echo_json, fail
from bookrag.domain.books import DEFAULT_BOOK, reading_book
from bookrag.errors import BookRAGError

if TYPE_CHECKING:
    from bookrag.services.suggesting import SuggestReport

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Answers questions about a book, only from the book.")


class _RichProgress:
    """Adapts a rich progress bar to the ingestor's Progress protocol; silent when not a terminal."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        self._bar = Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                             TimeRemainingColumn(), transient=True, disable=not sys.stderr.isatty())
        self._task = self._bar.add_task("embedding chunks", total=None)

    def __enter__(self) -> _RichProgress:
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def start(self, total: int) -> None:
        self._bar.update(self._task, total=total)

    def advance(self, n: int) -> None:
        self._bar.advance(self._task, n)


@app.command()
def ingest(
    path: Annotated[Path, typer.Argument(
        help="A Docusaurus site folder (every locale and version) or a docs folder (e.g. book/docs)")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON")] = False,
    atomic: Annotated[bool | None, typer.Option(
        "--atomic/--incremental",
        help="--atomic: build a new version beside the live one and switch readers to it in one step (the "
             "previous version is kept for `bookrag rollback`). --incremental: update the live collection "
             "file by file (fast; readers may see old and new files together meanwhile). Default: atomic "
             "for a remote store (QDRANT_URL/QDRANT_HOST) and for an embedded folder that holds versions, "
             "incremental for any other embedded folder.")] = None,
    book: BookOption = DEFAULT_BOOK,
    title: Annotated[str, typer.Option(
        "--title", help="The book's title, as the model is told it (default: the site's docusaurus.config title, "
                        "else the agent contract's Physical AI & Humanoid Robotics textbook)")] = "",
) -> None:
    """Ingest a Docusaurus docs tree into the vector store (see --atomic)."""
    from bookrag.ingestion.ingestor import Ingestor
    from bookrag.services.suggesting import suggest_pages

    try:
        container = book_container(book)
        settings = container.settings  # QDRANT_COLLECTION made the book's own
        versions = container.versions
        use_atomic = atomic if atomic is not None else versions.atomic_by_default()
        chat = container.chat_model
        with _RichProgress() as progress:
            if use_atomic:
                from bookrag.ingestion.versions import publish

                # The new version's pages get their questions before readers switch to it.
                report = publish(settings, container.embedder, versions, path, progress, title,
                                 before_switch=lambda store: _suggested(suggest_pages(
                                     settings, container.embedder, store, chat)))
                container.store.refresh()
            else:
                report = Ingestor(settings, container.embedder, container.store, progress, title=title).run(path)
                if report.chunks_total:
                    _suggested(suggest_pages(settings, container.embedder, container.store, chat))
    except BookRAGError as exc:
        fail(exc, as_json)
        return
    data = report.as_dict()
    if as_json:
        echo_json(data)
        return
    for skipped in data["skipped"]:
        typer.secho(f"skipped {skipped['file']}: {skipped['reason']}", fg=typer.colors.YELLOW, err=True)
    for warned in data["warnings"]:
        typer.secho(f"warning: {warned['warning']}", fg=typer.colors.YELLOW, err=True)
    rate = report.chunks_embedded / report.embed_seconds if report.embed_seconds else 0.0
    typer.echo(
        f"files {data['files_seen']} (changed {data['files_changed']}, unchanged {data['files_unchanged']}, "
        f"deleted {data['files_deleted']}, skipped {len(data['skipped'])}) | chunks {data['chunks_total']} "
        f"(embedded {data['chunks_embedded']}, {rate:.1f}/s, copied {data['chunks_copied']}) | "
        f"{data['seconds']:.2f} s"
    )
    version = report.book_version.label if report.book_version else "-"
    if report.switched_from is not None or (use_atomic and report.chunks_total):
        typer.echo(f"book version {version}: live in {report.collection}"
                   + (f" (previous {report.switched_from} kept for `bookrag rollback`)" if report.switched_from
                      else ""))
    else:
        typer.echo(f"book version {version}")


def _suggested(report: SuggestReport) -> None:
    if report.pages:
        typer.echo(f"page questions: {report.questions} for {report.with_questions} of {report.pages} pages "
                   f"({report.asked} asked, {report.seconds:.2f} s)", err=True)


@app.command()
def rollback(
    to: Annotated[str | None, typer.Option("--to", help="A kept version's collection (see `bookrag versions`)")]
    = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    book: BookOption = DEFAULT_BOOK,
) -> None:
    """Switch readers back to the kept previous version of the book, in one step."""
    from bookrag.ingestion.versions import rollback as roll_back

    try:
        container = book_container(book)
        versions = container.versions
        left, now = roll_back(versions, to)
        container.store.refresh()
        version = versions.book_version(now)
    except BookRAGError as exc:
        fail(exc, as_json)
        return
    label = version.label if version else None
    if as_json:
        echo_json({"from": left, "to": now, "book_version": label})
        return
    typer.echo(f"live: {now} (book version {label or '-'}); was {left}")


@app.command()
def versions(as_json: Annotated[bool, typer.Option("--json")] = False, book: BookOption = DEFAULT_BOOK) -> None:
    """List the kept versions of the book; the live one is marked."""
    from bookrag.ingestion.versions import list_versions

    try:
        found = list_versions(book_container(book).versions)
    except BookRAGError as exc:
        fail(exc, as_json)
        return
    rows = [{"collection": v.collection, "live": v.live,
             "book_version": v.book_version.to_dict() if v.book_version else None} for v in found]
    if as_json:
        echo_json(rows)
        return
    if not rows:
        typer.echo("No versions: the book was ingested incrementally (or not at all).")
    for v in found:
        label = v.book_version.label if v.book_version else "-"
        typer.echo(f"{'*' if v.live else ' '} {v.collection}  {label}")


@app.command()
def retrieve(
    query: Annotated[str, typer.Argument(help="The question")],
    top_k: Annotated[int, typer.Option("--top-k", help="1..100")] = 5,
    min_score: Annotated[float, typer.Option("--min-score", help="0..1")] = 0.0,
    module: Annotated[str | None, typer.Option("--module", help="Only this module")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    book: BookOption = DEFAULT_BOOK,
) -> None:
    """Retrieve the most relevant chunks for a question."""
    from bookrag.services.python_api import retrieve_chunks

    try:
        with reading_book(book_container(book).book_id):
            chunks = retrieve_chunks(query, top_k=top_k, min_score=min_score, module_name=module)
    except BookRAGError as exc:
        fail(exc, as_json)
        return
    if as_json:
        echo_json([c.model_dump() for c in chunks])
        return
    if not chunks:
        typer.echo("No relevant content found.")
    for rank, c in enumerate(chunks, start=1):
        # The chunk's position tells apart two chunks of one section, which would otherwise print alike.
        typer.secho(f"{rank}. [{c.score:.3f}] {c.source_file} > {c.section_heading} "
                    f"(chunk {c.position + 1}/{c.total_chunks})", bold=True)
        typer.echo(f"   {c.source_url}")
        snippet = " ".join(c.text.split())
        typer.echo(f"   {snippet[:240]}{'…' if len(snippet) > 240 else ''}")


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="A question about the book")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the agent's Response as JSON")] = False,
    previous: Annotated[list[str] | None, typer.Option(
        "--previous", "-p", help="An earlier question of the conversation (repeat, oldest first)")] = None,
    session_id: Annotated[str | None, typer.Option("--session-id", help="Continue this session")] = None,
    start_session: Annotated[bool, typer.Option("--start-session", help="Start a session with this turn")] = False,
    selected_text: Annotated[str | None, typer.Option("--selected-text", help="A passage the question is about")]
    = None,
    source_file: Annotated[str | None, typer.Option("--source-file", help="The book file of the passage")] = None,
    source_url: Annotated[str | None, typer.Option("--source-url", help="The page of the passage")] = None,
    locale: Annotated[str | None, typer.Option("--locale", help="A site's locale to answer from (ur)")] = None,
    version: Annotated[str | None, typer.Option("--version", help="A site's docs version (2.0)")] = None,
    book: BookOption = DEFAULT_BOOK,
) -> None:
    """Answer a question from the book only, with its sources (or refuse); optionally a follow-up
    (--previous, --session-id), a question about a passage (--selected-text), or of a site's locale and
    version (--locale, --version)."""
    from bookrag.services.python_api import run_agent

    history = [{"question": q} for q in previous] if previous else None
    try:
        with reading_book(book_container(book).book_id):
            response = run_agent(question, history=history, session_id=session_id, start_session=start_session,
                                 selected_text=selected_text, source_file=source_file, source_url=source_url,
                                 locale=locale, version=version)
    except BookRAGError as exc:
        fail(exc, as_json)
        return
    if as_json:
        echo_json(response.model_dump(exclude_none=True))
        return
    if response.standalone_question and response.standalone_question != question:
        typer.secho(f"(searched: {response.standalone_question})", dim=True)
    if response.selection_in_book is not None:
        typer.secho("(selection found in the book)" if response.selection_in_book
                    else "(selection not found in the book: read as part of the question)", dim=True)
    if response.locale:
        typer.secho(f"(from {response.locale}/{response.version}"
                    + (f": {response.edition_note})" if response.edition_note else ")"), dim=True)
    typer.echo(response.answer)
    label = "Nearest sections" if response.is_refusal else "Sources"
    if response.sources:
        typer.secho(f"\n{label}:", bold=True)
    for n, s in enumerate(response.sources, start=1):
        typer.echo(f"  [{n}] {s.chapter} > {s.section}  {s.source_url}")
        for q in s.quotes:
            quoted = " ".join(q.text.split())
            typer.echo(f"      \"{quoted[:160]}{'…' if len(quoted) > 160 else ''}\" [{q.start}:{q.end}]")
            typer.echo(f"      {q.fragment_url}")
    if response.session_id:
        typer.secho(f"\nsession: {response.session_id}", dim=True)


@app.command("eval")
def eval_(
    questions: Annotated[Path, typer.Argument(help="A question set, e.g. eval/textbook-2.jsonl")],
    docs: Annotated[Path | None, typer.Option("--docs", help="Ingest this docs folder first")] = None,
    modes: Annotated[str, typer.Option("--modes", help="Comma-separated: bm25,dense,hybrid,hybrid+diversity,"
                                                       "hybrid+dbsf,hybrid+rerank,default")]
    = "bm25,dense,hybrid,hybrid+diversity,default",
    out: Annotated[Path | None, typer.Option("--json", help="Write the full report (JSON) here")] = None,
    answers: Annotated[bool, typer.Option("--answers", help="Also ask the agent (configured answerer) every "
                                                            "question and measure its answers")] = False,
    conversations: Annotated[Path | None, typer.Option(
        "--conversations", help="A conversation set (eval/conversations-*.jsonl): follow-up hit@5 with history, "
                                "without, and written in full; last-turn answers")] = None,
    selections: Annotated[Path | None, typer.Option(
        "--selections", help="A selected-text set (eval/selections-*.jsonl)")] = None,
) -> None:
    """Measure retrieval quality per mode (hit@5, MRR@10, evidence@5, refusal AUC, seconds per query) and,
    with --answers, answer quality (answered, refused, keyword recall, citation precision) per kind."""
    from rich.console import Console

    from bookrag.config.settings import get_settings
    from bookrag.devtools.answer_eval import render_answer_table, render_quality_table
    from bookrag.devtools.evaluation import evaluate_files, parse_modes, render_table

    try:
        report = evaluate_files(get_settings(), questions, parse_modes(modes), docs, answers=answers)
    except BookRAGError as exc:
        fail(exc)
        return
    # Piped output would otherwise wrap at 80 columns and cut the mode names.
    console = Console(width=None if sys.stdout.isatty() else 120)
    console.print(render_table(report))
    if report.answers is not None:
        console.print(render_answer_table(report.answers))
        if (quality := render_quality_table(report.answers)) is not None:
            console.print(quality)
    data = report.as_dict()
    if conversations is not None or selections is not None:
        from bookrag.devtools import conversation_eval
        from bookrag.services.container import container_for

        agent = container_for(get_settings()).agent
        try:
            if conversations is not None:
                from bookrag.devtools.book_sections import Book

                data["conversations"] = conversation_eval.run_conversations(
                    agent, conversation_eval.load_conversations(conversations), Book(docs) if docs else None)
                console.print(conversation_eval.render(data["conversations"]))
            if selections is not None:
                data["selections"] = conversation_eval.run_selections(agent, selections)
                console.print({k: v for k, v in data["selections"].items() if k != "per_selection"})
        except BookRAGError as exc:
            fail(exc)
            return
    if out is not None:
        out.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


# What readers ask, for the book's owner (`devtools/report.py`).
app.command("report")(report.report_cmd)
# Operating a deployment (`devtools/ops.py`), registered here so that `bookrag --help` lists every command.
app.command()(ops.invoke)
app.command()(ops.serve)
app.command()(ops.smoke)
app.command("mcp")(ops.mcp_cmd)
app.command("mint-key")(ops.mint_key_cmd)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
