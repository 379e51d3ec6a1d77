"""The `bookrag` command line: ingest, rollback, versions, retrieve, ask, eval, invoke, serve, mcp, smoke."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from bookrag.errors import BookRAGError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Answers questions about a book, only from the book.")


def _fail(exc: BookRAGError, as_json: bool = False) -> None:
    """The agent contract's user message and our code (never an internal message where the contract
    words one); with --json, the contract's ErrorResponse on stdout. Exit status 2."""
    from bookrag.contracts.agent import MESSAGES, contract_error_type, error_response
    from bookrag.errors import InvalidInputError

    if as_json:
        _echo_json(error_response(exc).model_dump())
        raise typer.Exit(2)
    error_type = contract_error_type(exc)
    # A bad option (--top-k 0) is named by our message; the contract words only a bad question.
    field = exc.details.get("field") if isinstance(exc, InvalidInputError) else None
    contract_worded = error_type is not None and field in (None, "query", "query_text")
    contract_worded = contract_worded and not exc.explains_itself
    message = MESSAGES[error_type] if error_type is not None and contract_worded else exc.message
    typer.secho(f"error [{exc.code}]: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(2)


def _echo_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


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
    path: Annotated[Path, typer.Argument(help="The Docusaurus docs folder (e.g. book/docs)")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON")] = False,
    atomic: Annotated[bool | None, typer.Option(
        "--atomic/--incremental",
        help="--atomic: build a new version beside the live one and switch readers to it in one step (the "
             "previous version is kept for `bookrag rollback`). --incremental: update the live collection "
             "file by file (fast; readers may see old and new files together meanwhile). Default: atomic "
             "for a remote store (QDRANT_URL/QDRANT_HOST) and for an embedded folder that holds versions, "
             "incremental for any other embedded folder.")] = None,
) -> None:
    """Ingest a Docusaurus docs tree into the vector store (see --atomic)."""
    from bookrag.config.settings import get_settings
    from bookrag.ingestion.ingestor import Ingestor
    from bookrag.services.container import container_for

    try:
        settings = get_settings()
        container = container_for(settings)
        versions = container.versions
        use_atomic = atomic if atomic is not None else versions.atomic_by_default()
        with _RichProgress() as progress:
            if use_atomic:
                from bookrag.ingestion.versions import publish

                report = publish(settings, container.embedder, versions, path, progress)
                container.store.refresh()
            else:
                report = Ingestor(settings, container.embedder, container.store, progress).run(path)
    except BookRAGError as exc:
        _fail(exc, as_json)
        return
    data = report.as_dict()
    if as_json:
        _echo_json(data)
        return
    for skipped in data["skipped"]:
        typer.secho(f"skipped {skipped['file']}: {skipped['reason']}", fg=typer.colors.YELLOW, err=True)
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


@app.command()
def rollback(
    to: Annotated[str | None, typer.Option("--to", help="A kept version's collection (see `bookrag versions`)")]
    = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Switch readers back to the kept previous version of the book, in one step."""
    from bookrag.config.settings import get_settings
    from bookrag.ingestion.versions import rollback as roll_back
    from bookrag.services.container import container_for

    try:
        container = container_for(get_settings())
        versions = container.versions
        left, now = roll_back(versions, to)
        container.store.refresh()
        version = versions.book_version(now)
    except BookRAGError as exc:
        _fail(exc, as_json)
        return
    label = version.label if version else None
    if as_json:
        _echo_json({"from": left, "to": now, "book_version": label})
        return
    typer.echo(f"live: {now} (book version {label or '-'}); was {left}")


@app.command()
def versions(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """List the kept versions of the book; the live one is marked."""
    from bookrag.config.settings import get_settings
    from bookrag.ingestion.versions import list_versions
    from bookrag.services.container import container_for

    try:
        found = list_versions(container_for(get_settings()).versions)
    except BookRAGError as exc:
        _fail(exc, as_json)
        return
    rows = [{"collection": v.collection, "live": v.live,
             "book_version": v.book_version.to_dict() if v.book_version else None} for v in found]
    if as_json:
        _echo_json(rows)
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
) -> None:
    """Retrieve the most relevant chunks for a question."""
    from bookrag.services.python_api import retrieve_chunks

    try:
        chunks = retrieve_chunks(query, top_k=top_k, min_score=min_score, module_name=module)
    except BookRAGError as exc:
        _fail(exc, as_json)
        return
    if as_json:
        _echo_json([c.model_dump() for c in chunks])
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
def invoke(
    function: Annotated[str, typer.Argument(help="Function logical id in template.yaml, e.g. RetrievalFunction")],
    event: Annotated[Path, typer.Argument(help="An events/*.json file")],
    template: Annotated[Path, typer.Option(help="The SAM template")] = Path("template.yaml"),
) -> None:
    """Invoke a Lambda handler locally with an event, as `sam local invoke` would, without Docker."""
    from bookrag.devtools.local_invoke import invoke_function

    try:
        result = invoke_function(template, function, event)
    except BookRAGError as exc:
        _fail(exc)
        return
    _echo_json(result)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port")] = 8000,
    fd: Annotated[int | None, typer.Option(
        help="Serve on this inherited, already listening socket instead (socket activation): connections "
             "made before the app is ready wait in its backlog instead of being refused")] = None,
) -> None:
    """Serve the whole HTTP API (retrieval and agent routes) on localhost with uvicorn."""
    import os

    # Before numpy loads: concurrent requests each run small matmuls, and OpenBLAS threads fighting
    # over 2 cores cut throughput ~10x (4.7 vs 44 req/s at 16 clients, measured).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import uvicorn

    from bookrag.web.app import create_app

    # Keep-alive above common client idle timeouts (httpx: 5 s), so pooled connections are not reset.
    uvicorn.run(create_app("all"), host=host, port=port, fd=fd, log_level="warning", timeout_keep_alive=30)


@app.command()
def smoke(
    url: Annotated[str, typer.Argument(help="The API's base URL (the stack's ApiUrl output, or bookrag serve's)")],
    api_key: Annotated[str | None, typer.Option("--api-key", help="A key for the deployment (bookrag mint-key)")]
    = None,
    question: Annotated[str, typer.Option(help="A question the book answers")] = "How do I install ROS 2?",
    off_book: Annotated[str, typer.Option(help="A question the book does not answer")]
    = "What is the capital of France?",
    timeout: Annotated[float, typer.Option(help="Seconds per request")] = 30.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON (for CI)")] = False,
) -> None:
    """Check a running deployment: health, a retrieval, a tool call, an answer, a refusal, a bad request,
    and a request without a key. Prints a pass/fail table with timings; exit status 1 if any check fails."""
    from bookrag.devtools.smoke import run_smoke

    if not url.startswith(("http://", "https://")):
        typer.secho("error: URL must start with http:// or https://", fg=typer.colors.RED, err=True)
        raise typer.Exit(2)
    report = run_smoke(url, api_key, question=question, off_book=off_book, timeout_s=timeout)
    if as_json:
        _echo_json(report.as_dict())
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"bookrag smoke {report.url}")
        for column in ("check", "result", "HTTP", "ms", "detail"):
            table.add_column(column, justify="right" if column in ("HTTP", "ms") else "left")
        for c in report.checks:
            table.add_row(c.name, "[green]PASS[/]" if c.passed else "[red]FAIL[/]", str(c.status or "-"),
                          f"{c.ms:.0f}", c.detail)
        console = Console(width=None if sys.stdout.isatty() else 120)
        console.print(table)
        console.print(f"book version: {', '.join(report.book_versions) or '-'}")
        console.print("[green]all checks passed[/]" if report.passed else "[red]some checks failed[/]")
    if not report.passed:
        raise typer.Exit(1)


@app.command("mcp")
def mcp_cmd() -> None:
    """Serve the book's MCP tools and documents over stdio (desktop agents, IDEs) on the configured store."""
    import os

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as `serve`: one query at a time needs no BLAS threads
    import anyio

    from bookrag.mcp.server import serve_stdio

    anyio.run(serve_stdio)


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
) -> None:
    """Answer a question from the book only, with its sources (or refuse); optionally a follow-up
    (--previous, --session-id) or a question about a passage (--selected-text)."""
    from bookrag.services.python_api import run_agent

    history = [{"question": q} for q in previous] if previous else None
    try:
        response = run_agent(question, history=history, session_id=session_id, start_session=start_session,
                             selected_text=selected_text, source_file=source_file, source_url=source_url)
    except BookRAGError as exc:
        _fail(exc, as_json)
        return
    if as_json:
        _echo_json(response.model_dump(exclude_none=True))
        return
    if response.standalone_question and response.standalone_question != question:
        typer.secho(f"(searched: {response.standalone_question})", dim=True)
    if response.selection_in_book is not None:
        typer.secho("(selection found in the book)" if response.selection_in_book
                    else "(selection not found in the book: read as part of the question)", dim=True)
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
    from bookrag.devtools.answer_eval import render_answer_table
    from bookrag.devtools.evaluation import evaluate_files, parse_modes, render_table

    try:
        report = evaluate_files(get_settings(), questions, parse_modes(modes), docs, answers=answers)
    except BookRAGError as exc:
        _fail(exc)
        return
    # Piped output would otherwise wrap at 80 columns and cut the mode names.
    console = Console(width=None if sys.stdout.isatty() else 120)
    console.print(render_table(report))
    if report.answers is not None:
        console.print(render_answer_table(report.answers))
    data = report.as_dict()
    if conversations is not None or selections is not None:
        from bookrag.devtools import conversation_eval
        from bookrag.services.container import container_for

        agent = container_for(get_settings()).agent
        try:
            if conversations is not None:
                data["conversations"] = conversation_eval.run_conversations(
                    agent, conversation_eval.load_conversations(conversations))
                console.print(conversation_eval.render(data["conversations"]))
            if selections is not None:
                data["selections"] = conversation_eval.run_selections(agent, selections)
                console.print({k: v for k, v in data["selections"].items() if k != "per_selection"})
        except BookRAGError as exc:
            _fail(exc)
            return
    if out is not None:
        out.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


@app.command("mint-key")
def mint_key_cmd(
    owner: Annotated[str, typer.Argument(help="Who the key is for (kept with its record)")],
    rate_limit: Annotated[int | None, typer.Option(help="Requests per minute for this key")] = None,
    table: Annotated[str | None, typer.Option(help="DynamoDB table to store the hashed record in")] = None,
    publishable: Annotated[bool, typer.Option(
        "--publishable", help="A key for a public web page: answers and retrieval only, from --origin sites only, "
                              "with a low limit per reader")] = False,
    origin: Annotated[list[str] | None, typer.Option(
        "--origin", help="A site allowed to use the publishable key, e.g. https://book.example (repeat)")] = None,
) -> None:
    """Mint an API key: prints the key ONCE; stores only its hash (DynamoDB, or an API_KEY_HASHES entry)."""
    from bookrag.auth.keys import mint_key

    if publishable != bool(origin):
        typer.secho("--publishable and --origin go together: a publishable key is bound to its sites",
                    fg="red", err=True)
        raise typer.Exit(2)
    try:
        plaintext, record = mint_key(owner, rate_limit_per_minute=rate_limit, origins=origin)
    except ValueError as exc:
        typer.secho(f"--origin: {exc}", fg="red", err=True)
        raise typer.Exit(2) from None
    if table:
        from bookrag.adapters.dynamodb import build_client, put_key

        put_key(build_client(), table, record)
    else:
        typer.echo(f"API_KEY_HASHES entry: {record.setting_entry()}", err=True)
    if publishable:
        typer.echo(f"Origins allowed: {', '.join(record.origins)} (list them in CORS_ALLOWED_ORIGINS too)", err=True)
    typer.echo(plaintext)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
