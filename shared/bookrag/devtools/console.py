"""How the command line reports: an error in the agent contract's words (or its JSON), and JSON output."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bookrag.domain.books import DEFAULT_BOOK, valid_book_id
from bookrag.errors import BookNotFoundError, BookRAGError

if TYPE_CHECKING:
    from bookrag.services.container import Container

BookOption = Annotated[str, typer.Option(
    "--book", help=f"The book's id (lower case, digits, dashes); each book has its own versions. Default: "
                   f"'{DEFAULT_BOOK}', the book of a one-book deployment (QDRANT_COLLECTION itself)")]


def book_container(book: str) -> Container:
    """The container of `book` under the process's settings; `BookNotFoundError` for a malformed id."""
    from bookrag.config.settings import get_settings
    from bookrag.services.container import container_for

    if not valid_book_id(book):
        raise BookNotFoundError()
    return container_for(get_settings()).book(book)


def fail(exc: BookRAGError, as_json: bool = False) -> None:
    """The agent contract's user message and our code (never an internal message where the contract
    words one); with --json, the contract's ErrorResponse on stdout. Exit status 2."""
    from bookrag.contracts.agent import MESSAGES, contract_error_type, error_response
    from bookrag.errors import InvalidInputError

    if as_json:
        echo_json(error_response(exc).model_dump())
        raise typer.Exit(2)
    error_type = contract_error_type(exc)
    # A bad option (--top-k 0) is named by our message; the contract words only a bad question.
    field = exc.details.get("field") if isinstance(exc, InvalidInputError) else None
    contract_worded = error_type is not None and field in (None, "query", "query_text")
    contract_worded = contract_worded and not exc.explains_itself
    message = MESSAGES[error_type] if error_type is not None and contract_worded else exc.message
    typer.secho(f"error [{exc.code}]: {message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(2)


def echo_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
