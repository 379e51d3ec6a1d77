"""The container: every client and service of one process, built once, on first use.

Lambda keeps a process warm between invocations, so clients (connection pools, the embedded store's
folder lock, the local model's weights) are built once per container and reused. Each component
below is built lazily and under a lock (a warm-up or the first request pays for it, a health check
never does). Components that hold network connections say so (`network=True`): after a SnapStart
restore `reset_network()` drops exactly those, so fresh sockets and TLS sessions are opened, while
the embedded store and the local model stay in the snapshot, which is what makes it worth taking.

Importing this module is cheap: every SDK is imported inside the builder that needs it.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from bookrag.config.llm import EXTRACTIVE
from bookrag.config.settings import AuthSettings, Settings, get_auth_settings, get_settings
from bookrag.domain.books import DEFAULT_BOOK, books_among, collection_of, current_book

if TYPE_CHECKING:
    from bookrag.adapters.cohere import CohereClient
    from bookrag.adapters.embedders import CachedEmbedder
    from bookrag.adapters.llm.port import ChatModel
    from bookrag.adapters.store.port import BookStore, VersionedCollections
    from bookrag.answering.agent import BookRAGAgent
    from bookrag.answering.answerers.base import Answerer
    from bookrag.answering.rewriters import Rewriter
    from bookrag.auth.guard import Guard
    from bookrag.domain.conversation import SessionStore
    from bookrag.domain.question_log import QuestionLog
    from bookrag.retrieval.rerank import RelevanceModel
    from bookrag.retrieval.retriever import Retriever
    from bookrag.services.question_log import LogWriter

T = TypeVar("T")
NetworkRule = Callable[[Any], bool]


class component(Generic[T]):  # lower case: used as a decorator, like `property`
    """A lazily built, cached attribute of `Container`; `network` says whether a restore drops it.
    `per_book`: each book's container builds its own (the store and what reads it); any other component
    of a book's container is its parent's, shared by every book of the process."""

    def __init__(self, build: Callable[[Any], T], network: bool | NetworkRule = False, *,
                 per_book: bool = False) -> None:
        self.build = build
        self.network = network
        self.per_book = per_book
        self.name = build.__name__
        self.__doc__ = build.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type) -> component[T]: ...

    @overload
    def __get__(self, obj: AuthContainer, owner: type) -> T: ...

    def __get__(self, obj: AuthContainer | None, owner: type) -> T | component[T]:
        if obj is None:
            return self
        if obj._parent is not None and not self.per_book:
            return getattr(obj._parent, self.name)  # type: ignore[no-any-return]
        built = obj._built
        if self.name in built:
            return built[self.name]  # type: ignore[no-any-return]
        with obj._lock:
            if self.name not in built:
                built[self.name] = self.build(obj)
            return built[self.name]  # type: ignore[no-any-return]

    def holds_network(self, settings: AuthSettings) -> bool:
        return self.network(settings) if callable(self.network) else self.network


def _network(flag: bool | NetworkRule, *, per_book: bool = False) -> Callable[[Callable[[Any], T]], component[T]]:
    def wrap(build: Callable[[Any], T]) -> component[T]:
        return component(build, flag, per_book=per_book)

    return wrap


def _networked_store(settings: Settings) -> bool:
    from bookrag.adapters.store import holds_network

    return holds_network(settings)


def _calls_a_model(settings: Settings) -> bool:
    """A chat model answers (and rewrites follow-ups): its connections, and everything holding it."""
    return settings.resolved_llm_provider != EXTRACTIVE


def _remote_embedder(settings: Settings) -> bool:
    return settings.resolved_embedding_provider != "local"


class AuthContainer:
    """What the API Gateway authorizer needs: the API-key guard and its DynamoDB client, for
    `AuthSettings` (the authorizer validates nothing else). Thread-safe."""

    _parent: Container | None = None  # a book's container: the process's container it shares clients with

    def __init__(self, settings: AuthSettings) -> None:
        self.settings = settings
        self._lock = threading.RLock()
        self._built: dict[str, Any] = {}

    @_network(True)
    def dynamodb(self) -> Any:
        from bookrag.adapters.dynamodb import build_client

        return build_client()

    @_network(True)
    def guard(self) -> Guard | None:
        """The API-key guard, or None when authentication is off. Holds counters and a DynamoDB client."""
        from bookrag.auth.guard import build_guard

        return build_guard(self.settings, lambda: self.dynamodb)

    # --- lifecycle -----------------------------------------------------------------------------

    def built(self, name: str) -> bool:
        return name in self._built

    def provide(self, name: str, value: Any) -> None:
        """Use `value`, a real adapter built elsewhere, as the component `name` (another engine of the same
        port in a test: qdrant-client's local mode, for the alias-based book versions)."""
        self._built[name] = value

    def built_names(self) -> list[str]:
        return list(self._built)

    def reset_auth(self) -> None:
        """Drop the guard and its DynamoDB client (their counters and connections)."""
        with self._lock:
            for name in (AuthContainer.guard.name, AuthContainer.dynamodb.name):
                self._built.pop(name, None)

    def reset_network(self) -> list[str]:
        """Drop every component that holds a connection; the next use rebuilds it. Returns their names."""
        dropped = []
        with self._lock:
            for klass in type(self).__mro__:
                for name, member in vars(klass).items():
                    if (isinstance(member, component) and name in self._built
                            and member.holds_network(self.settings)):
                        del self._built[name]
                        dropped.append(name)
        return dropped


class Container(AuthContainer):
    """Builds, caches and resets every client and service for one `Settings`. Thread-safe."""

    settings: Settings

    def __init__(self, settings: Settings, *, parent: Container | None = None, book: str = DEFAULT_BOOK) -> None:
        super().__init__(settings)
        self._parent = parent
        self.book_id = book
        self._books: dict[str, Container] = {}
        self._books_seen: tuple[float, list[str]] | None = None

    # --- books (issue 38) ----------------------------------------------------------------------

    def book(self, book: str) -> Container:
        """The container of `book`: its own store, versions, retriever, answerer and agent (the book's
        collection, `domain.books.collection_of`), every client and log shared with this container. The
        default book's container is the process's own."""
        if self._parent is not None:
            return self._parent.book(book)
        if book == DEFAULT_BOOK:
            return self
        with self._lock:
            found = self._books.get(book)
            if found is None:
                settings = self.settings.model_copy(
                    update={"qdrant_collection": collection_of(self.settings.qdrant_collection, book)})
                found = self._books[book] = Container(settings, parent=self, book=book)
            return found

    def books(self) -> list[str]:
        """The books in the store (an alias, pointer or plain collection each), default first; read again
        after QDRANT_ALIAS_TTL_S, so a book ingested into a live deployment is served without a restart."""
        if self._parent is not None:
            return self._parent.books()
        now = time.monotonic()
        seen = self._books_seen
        if seen is None or now - seen[0] >= self.settings.qdrant_alias_ttl_s:
            seen = self._books_seen = (now, books_among(self.settings.qdrant_collection, self.versions.names()))
        return seen[1]

    def book_containers(self) -> list[Container]:
        """The books' containers built so far (the default book's is this one)."""
        with self._lock:
            return list(self._books.values())

    def reset_network(self) -> list[str]:
        dropped = super().reset_network()
        for child in self.book_containers():
            dropped.extend(f"{child.book_id}:{name}" for name in child.reset_network())
        return dropped

    # --- clients (adapters) ------------------------------------------------------------------

    @_network(True)
    def cohere(self) -> CohereClient:
        """The one Cohere client (embed, rerank, chat share its pool); timeouts are set per request."""
        from bookrag.adapters.cohere import build_client

        return build_client(self.settings)

    @_network(_calls_a_model)
    def chat_model(self) -> ChatModel | None:
        """The model LLM_PROVIDER names (the answerer and the rewriter share it; it builds its client on
        first use), or None for the extractive answerer."""
        from bookrag.adapters.llm import SharedClients, build_chat_model

        return build_chat_model(self.settings, SharedClients(cohere=lambda: self.cohere))

    @_network(_remote_embedder)
    def embedder(self) -> CachedEmbedder:
        from bookrag.adapters.embedders import build_embedder

        return build_embedder(self.settings, lambda: self.cohere)

    @_network(_networked_store, per_book=True)
    def store(self) -> BookStore:
        """The engine `adapters.store` chooses: Qdrant Cloud or a server when QDRANT_URL/QDRANT_HOST is set,
        else Qdrant Edge on QDRANT_PATH."""
        from bookrag.adapters.store import build_store

        return build_store(self.settings, self._parent.store if self._parent is not None else None)

    @_network(_networked_store, per_book=True)
    def versions(self) -> VersionedCollections:
        """The book's versions on the store's engine (atomic ingest, rollback); a remote one shares its client."""
        from bookrag.adapters.store import build_versions

        return build_versions(self.settings, self.store)

    # --- services ----------------------------------------------------------------------------

    @_network(lambda s: s.cohere_rerank_model is not None)
    def reranker(self) -> RelevanceModel | None:
        if not self.settings.cohere_rerank_model:
            return None
        from bookrag.adapters.rerank import CohereReranker

        return CohereReranker(self.settings, lambda: self.cohere)

    @_network(lambda s: _networked_store(s) or _remote_embedder(s) or s.cohere_rerank_model is not None,
              per_book=True)
    def retriever(self) -> Retriever:
        from bookrag.retrieval.retriever import Retriever

        return Retriever(self.settings, self.embedder, self.store, self.reranker)

    @_network(_calls_a_model, per_book=True)
    def answerer(self) -> Answerer:
        from bookrag.answering.answerers import build_answerer

        return build_answerer(self.settings, self.retriever, self.chat_model)

    @_network(_calls_a_model)
    def rewriter(self) -> Rewriter:
        """Resolves follow-ups: the answerer's model, or the offline rewrite."""
        from bookrag.answering.rewriters import build_rewriter

        return build_rewriter(self.settings, self.chat_model)

    @_network(True, per_book=True)
    def agent(self) -> BookRAGAgent:
        from bookrag.answering.agent import BookRAGAgent

        return BookRAGAgent(self.settings, self.retriever, self.answerer, self.rewriter)

    @_network(lambda s: s.sessions_table is not None)
    def sessions(self) -> SessionStore:
        """Conversation sessions: DynamoDB when SESSIONS_TABLE is set (Lambda), else this process's memory."""
        if self.settings.sessions_table:
            from bookrag.adapters.sessions import DynamoDBSessionStore

            return DynamoDBSessionStore(self.dynamodb, self.settings.sessions_table)
        from bookrag.adapters.sessions import InMemorySessionStore

        return InMemorySessionStore()

    @_network(lambda s: s.question_log_table is not None)
    def question_log(self) -> QuestionLog | None:
        """The question log, or None when QUESTION_LOG=off: DynamoDB when QUESTION_LOG_TABLE is set
        (Lambda), else JSON lines under QUESTION_LOG_PATH."""
        from bookrag.adapters.question_log import build_question_log

        return build_question_log(self.settings, lambda: self.dynamodb)

    @component
    def question_log_writer(self) -> LogWriter | None:
        """The question log's background writer (one thread, started by the first record), or None when
        QUESTION_LOG=off. It asks for `question_log` per batch, so a restore's new client is used."""
        if self.settings.question_log == "off":
            return None
        from bookrag.services.question_log import LogWriter

        return LogWriter(lambda: self.question_log)

    def ready(self) -> dict[str, bool]:
        """What is already built, for health: nothing is built to answer."""
        return {"embedder": self.built("embedder"), "store": self.built("store")}

    def served_version(self) -> str | None:
        """The book version this process last read, without building or calling anything (health, the
        X-Book-Version header)."""
        return self.store.last_version if self.built("store") else None


_MAX_CONTAINERS = 4
_containers: OrderedDict[Settings, Container] = OrderedDict()
_auth_containers: dict[AuthSettings, AuthContainer] = {}
_containers_lock = threading.Lock()


def container_for(settings: Settings) -> Container:
    """The container of `settings` (equal settings share one). A few are kept: rotated keys make new
    settings, and tests use several."""
    with _containers_lock:
        found = _containers.get(settings)
        if found is None:
            found = _containers[settings] = Container(settings)
            while len(_containers) > _MAX_CONTAINERS:
                _containers.popitem(last=False)
        else:
            _containers.move_to_end(settings)
        return found


def current() -> Container:
    """The container of the current request's book (`domain.books.current_book`) under the process-wide
    settings. Raises `ConfigError` on a bad configuration."""
    return container_for(get_settings()).book(current_book())


def existing() -> list[AuthContainer]:
    """The containers built so far (for a SnapStart restore)."""
    with _containers_lock:
        return [*_containers.values(), *_auth_containers.values()]  # each resets its books' containers


def auth_container() -> AuthContainer:
    """The authorizer's container (authentication settings only). Raises `ConfigError`."""
    settings = get_auth_settings()
    with _containers_lock:
        found = _auth_containers.get(settings)
        if found is None:
            _auth_containers.clear()  # one configuration per authorizer process
            found = _auth_containers[settings] = AuthContainer(settings)
        return found


def flush_question_log(timeout: float = 1.0) -> bool:
    """Wait for this process's question log writer, if one was built (the end of a Lambda invocation, which
    may freeze the process). False if `timeout` ran out."""
    from bookrag.errors import BookRAGError

    try:
        container = container_for(get_settings())  # the writer is the process's, shared by its books
    except BookRAGError:
        return True
    if not container.built(Container.question_log_writer.name):
        return True
    writer = container.question_log_writer
    return writer is None or writer.flush(timeout)


def reset_auth() -> None:
    """Forget every guard (their counters) and DynamoDB client: a test's rate limits start from zero."""
    with _containers_lock:
        _auth_containers.clear()
        containers = list(_containers.values())
    for container in containers:
        container.reset_auth()


def reset_all() -> None:
    """Forget every container (tests; a process that changes its configuration)."""
    with _containers_lock:
        _containers.clear()
        _auth_containers.clear()
