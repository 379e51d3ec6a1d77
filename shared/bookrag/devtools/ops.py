"""Commands that operate a deployment rather than read the book: invoke a handler as `sam local invoke`
would, serve the API or MCP locally, smoke-test a running deployment, mint an API key. `cli.py` registers
them on the one `bookrag` app."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from bookrag.devtools.console import BookOption, book_container, echo_json, fail
from bookrag.domain.books import DEFAULT_BOOK, reading_book
from bookrag.errors import BookRAGError


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
        fail(exc)
        return
    echo_json(result)


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


def smoke(
    url: Annotated[str, typer.Argument(help="The API's base URL (the stack's ApiUrl output, or bookrag serve's)")],
    api_key: Annotated[str | None, typer.Option("--api-key", help="A key for the deployment (bookrag mint-key)")]
    = None,
    question: Annotated[str, typer.Option(help="A question the book answers")] = "How do I install ROS 2?",
    off_book: Annotated[str, typer.Option(help="A question the book does not answer")]
    = "What is the capital of France?",
    timeout: Annotated[float, typer.Option(help="Seconds per request")] = 30.0,
    stream_url: Annotated[str | None, typer.Option("--stream-url", help="The stream function's URL (the stack's "
                                                   "StreamUrl output); default: URL")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON (for CI)")] = False,
) -> None:
    """Check a running deployment: health, a retrieval, a tool call, an answer, a refusal, a bad request,
    a request without a key, and the answer streamed (time to its first event and first text against the
    whole answer). Prints a pass/fail table with timings; exit status 1 if any check fails."""
    from bookrag.devtools.smoke import run_smoke

    if not url.startswith(("http://", "https://")):
        typer.secho("error: URL must start with http:// or https://", fg=typer.colors.RED, err=True)
        raise typer.Exit(2)
    report = run_smoke(url, api_key, question=question, off_book=off_book, timeout_s=timeout, stream_url=stream_url)
    if as_json:
        echo_json(report.as_dict())
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


def mcp_cmd(book: BookOption = DEFAULT_BOOK) -> None:
    """Serve the book's MCP tools and documents over stdio (desktop agents, IDEs) on the configured store."""
    import os

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as `serve`: one query at a time needs no BLAS threads
    import anyio

    from bookrag.mcp.server import serve_stdio

    try:
        chosen = book_container(book).book_id
    except BookRAGError as exc:
        fail(exc)
        return
    with reading_book(chosen):  # the server's tasks start inside this context, and so read this book
        anyio.run(serve_stdio)


def mint_key_cmd(
    owner: Annotated[str, typer.Argument(help="Who the key is for (kept with its record)")],
    rate_limit: Annotated[int | None, typer.Option(help="Requests per minute for this key")] = None,
    table: Annotated[str | None, typer.Option(help="DynamoDB table to store the hashed record in")] = None,
    publishable: Annotated[bool, typer.Option(
        "--publishable", help="A key for a public web page: answers and retrieval only, from --origin sites only, "
                              "with a low limit per reader")] = False,
    origin: Annotated[list[str] | None, typer.Option(
        "--origin", help="A site allowed to use the publishable key, e.g. https://book.example (repeat)")] = None,
    book: Annotated[list[str] | None, typer.Option(
        "--book", help="A book the key reads (repeat; a publishable key reads exactly one). Default: the default "
                       "book, the one book of a one-book deployment")] = None,
) -> None:
    """Mint an API key: prints the key ONCE; stores only its hash (DynamoDB, or an API_KEY_HASHES entry)."""
    from bookrag.auth.keys import mint_key

    if publishable != bool(origin):
        typer.secho("--publishable and --origin go together: a publishable key is bound to its sites",
                    fg="red", err=True)
        raise typer.Exit(2)
    try:
        plaintext, record = mint_key(owner, rate_limit_per_minute=rate_limit, origins=origin, books=book or ())
    except ValueError as exc:
        typer.secho(f"{'--origin' if 'origin' in str(exc) else '--book'}: {exc}", fg="red", err=True)
        raise typer.Exit(2) from None
    if table:
        from bookrag.adapters.dynamodb import build_client, put_key

        put_key(build_client(request_path=False), table, record)
    else:
        typer.echo(f"API_KEY_HASHES entry: {record.setting_entry()}", err=True)
    if publishable:
        typer.echo(f"Origins allowed: {', '.join(record.origins)} (list them in CORS_ALLOWED_ORIGINS too)", err=True)
    typer.echo(plaintext)
