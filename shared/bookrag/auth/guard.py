"""API keys and rate limits: verify a caller's key, count its requests, count failed attempts per source IP.

Keys and their records are in `bookrag.auth.keys`. State sits behind two small ports, `KeyStore` and
`Counter`: in memory for `bookrag serve` (`bookrag.auth.memory`), DynamoDB on
Lambda (`bookrag.adapters.dynamodb`, imported only when a table is configured).
This module imports only the standard library, our errors and the logger: the authorizer's cold start stays small.

Policy (`Guard.admit`), per request, in this order:
1. a source IP with `AUTH_FAILURE_LIMIT_PER_MINUTE` failed attempts in the current minute is refused (429)
   without looking at its key, so a correct guess made after the limit is worth nothing;
2. no key: 401 AUTH_REQUIRED; a key that does not verify: 401 INVALID_API_KEY, and one failure counted;
3. where a key may be used (403): a secret key never with a browser's `Origin` header (SECRET_KEY_IN_BROWSER:
   a page that holds one has leaked it); a publishable key only on `PUBLISHABLE_PATHS` (KEY_SCOPE) and
   only with an `Origin` among its sites (ORIGIN_NOT_ALLOWED). Neither counts as a failed attempt: the key
   itself is valid;
4. a publishable key over `PUBLISHABLE_RATE_LIMIT_PER_MINUTE` for this source IP (each reader's share of a
   key that every reader of the site holds), then any valid key over its `RATE_LIMIT_PER_MINUTE` (or its
   record's own limit): 429 RATE_LIMITED.
Windows are fixed minutes (one atomic counter per key and minute): a client can burst up to twice the
limit across a minute boundary, the accepted price of a single round trip per request.
Key lookups fail closed (503 AUTH_UNAVAILABLE); counters fail open (logged), so a DynamoDB hiccup does not
take the API down while API Gateway's stage throttling still caps the total.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from bookrag.auth.keys import MAX_KEY_CHARS, PUBLISHABLE_PATHS, hash_key, key_id_of
from bookrag.auth.memory import InMemoryCounter, InMemoryKeyStore
from bookrag.config.origins import parse_origin
from bookrag.domain.books import DEFAULT_BOOK
from bookrag.domain.keys import PUBLISHABLE, SECRET, Counter, KeyRecord, KeyStore, Principal
from bookrag.errors import (
    BookRAGError,
    CallerAuthError,
    InvalidApiKeyError,
    KeyScopeError,
    OriginNotAllowedError,
    RateLimitedError,
    SecretKeyInBrowserError,
)
from bookrag.observability import logger

if TYPE_CHECKING:
    from bookrag.config.settings import AuthSettings

API_KEY_HEADER = "x-api-key"  # a header only: keys in a query string end up in access logs and histories
# The REST contract's way: `Authorization: Bearer <key>`, the same keys, limits and failures.
AUTHORIZATION_HEADER = "authorization"
_BEARER = "bearer "
WINDOW_S = 60
# Paths served without a key. Health is answered before the app on Lambda and by the gateway
# without the authorizer: load balancers and uptime probes hold no key, it makes no paid call, and it
# shows configuration names only (never a secret, a host with credentials or a key). The widget's files
# and the demo page are what a public page loads before it can present any key; they are static code
# and the book's own text, and make no paid call.
OPEN_PATHS = frozenset({"/api/health", "/demo", "/widget/v1/bookrag.js", "/widget/v1/bookrag.css"})

# Compared against when the key is malformed or its id unknown, so every failure costs the same work.
_DUMMY_HASH = hashlib.sha256(b"bookrag-no-such-key").hexdigest()











# --- ports ----------------------------------------------------------------------------------------










# --- policy ---------------------------------------------------------------------------------------


class Guard:
    """Authenticates a presented key and applies both limits; see the module docstring for the policy."""

    def __init__(self, keys: KeyStore, counter: Counter, *, rate_limit_per_minute: int,
                 failure_limit_per_minute: int, publishable_limit_per_minute: int = 10,
                 clock: Callable[[], float] = time.time) -> None:
        self.keys = keys
        self.counter = counter
        self.rate_limit_per_minute = rate_limit_per_minute
        self.failure_limit_per_minute = failure_limit_per_minute
        self.publishable_limit_per_minute = publishable_limit_per_minute
        self.clock = clock  # public: tests give it a clock that moves only when told

    def admit(self, presented: str | None, source_ip: str, *, origin: str | None = None,
              path: str | None = None) -> Principal:
        """Authenticate, then count the request against the key's limits.

        Raises `RateLimitedError`, `CallerAuthError` (`InvalidApiKeyError`, `KeyNotAllowedError`) or
        `AuthUnavailableError`.
        """
        principal = self.authenticate(presented, source_ip, origin=origin, path=path)
        window, retry_after = self._window()
        if principal.kind == PUBLISHABLE:
            limit = self.publishable_limit_per_minute
            if self._count(f"pub#{principal.key_id}#{source_ip}#{window}", window) > limit:
                raise RateLimitedError(retry_after, limit=limit, window_s=WINDOW_S, scope="source_ip")
        limit = principal.rate_limit_per_minute
        count = self._count(f"key#{principal.key_id}#{window}", window)
        if count > limit:
            raise RateLimitedError(retry_after, limit=limit, window_s=WINDOW_S, scope="api_key")
        return principal

    def authenticate(self, presented: str | None, source_ip: str, *, origin: str | None = None,
                     path: str | None = None) -> Principal:
        """Verify a key, refusing source IPs over the failure limit first, then check that it may be used
        from `origin` (the request's `Origin` header, None without one) on `path` (None: not checked).
        Raises as `admit` does."""
        window, retry_after = self._window()
        ip_bucket = f"ip#{source_ip}#{window}"
        if self._peek(ip_bucket) >= self.failure_limit_per_minute:
            raise RateLimitedError(retry_after, limit=self.failure_limit_per_minute, window_s=WINDOW_S,
                                   scope="source_ip")
        if not presented:
            raise CallerAuthError()
        record = self._verify(presented)
        if record is None:
            failures = self._count(ip_bucket, window)
            if failures >= self.failure_limit_per_minute:
                logger.warning("auth failure limit reached", extra={"limit": self.failure_limit_per_minute})
            raise InvalidApiKeyError()
        _check_use(record, origin, path)
        books = record.books or (DEFAULT_BOOK,)
        if record.kind == PUBLISHABLE:
            books = books[:1]  # a web page reads one book, whatever its record lists
        return Principal(key_id=record.key_id, owner=record.owner,
                         rate_limit_per_minute=record.rate_limit_per_minute or self.rate_limit_per_minute,
                         kind=record.kind, books=books)

    def _verify(self, presented: str) -> KeyRecord | None:
        key_id = key_id_of(presented)
        record = self.keys.get(key_id) if key_id else None
        expected = record.key_hash if record is not None else _DUMMY_HASH
        # Constant time: the comparison takes as long whichever character differs first.
        matches = hmac.compare_digest(hash_key(presented[:MAX_KEY_CHARS]), expected)
        if record is None or not matches or not record.enabled or record.kind not in (SECRET, PUBLISHABLE):
            return None
        return record

    def _window(self) -> tuple[int, int]:
        now = self.clock()
        start = int(now // WINDOW_S * WINDOW_S)
        return start, max(1, math.ceil(start + WINDOW_S - now))

    def _count(self, bucket: str, window: int) -> int:
        try:
            # Kept one window past its end, then dropped (DynamoDB TTL).
            return self.counter.hit(bucket, window + 2 * WINDOW_S)
        except BookRAGError as exc:
            logger.warning("rate counter unavailable; not limiting", extra={"code": exc.code})
            return 0

    def _peek(self, bucket: str) -> int:
        try:
            return self.counter.peek(bucket)
        except BookRAGError as exc:
            logger.warning("rate counter unavailable; not limiting", extra={"code": exc.code})
            return 0


def _check_use(record: KeyRecord, origin: str | None, path: str | None) -> None:
    if record.kind == SECRET:
        if origin:
            # Whoever serves that page has published a secret key: say so in the logs (the id only).
            logger.warning("secret key presented by a web page", extra={"key_id": record.key_id})
            raise SecretKeyInBrowserError()
        return
    if path is not None and path not in PUBLISHABLE_PATHS:
        raise KeyScopeError()
    try:
        site = parse_origin(origin or "")
    except ValueError:
        site = None
    if site is None or site not in record.origins:
        raise OriginNotAllowedError()


def build_guard(settings: AuthSettings, dynamodb: Callable[[], Any]) -> Guard | None:
    """The guard the settings describe (None when AUTH_ENABLED is false); `dynamodb` gives the client."""
    if not settings.auth_enabled:
        return None
    keys: KeyStore
    counter: Counter
    if settings.api_keys_table and settings.rate_limit_table:
        from bookrag.adapters.dynamodb import DynamoDBCounter, DynamoDBKeyStore

        client = dynamodb()
        keys = DynamoDBKeyStore(client, settings.api_keys_table)
        counter = DynamoDBCounter(client, settings.rate_limit_table)
    else:
        keys = InMemoryKeyStore.from_setting(settings.api_key_hashes or "")
        counter = InMemoryCounter()
    return Guard(keys, counter, rate_limit_per_minute=settings.rate_limit_per_minute,
                 failure_limit_per_minute=settings.auth_failure_limit_per_minute,
                 publishable_limit_per_minute=settings.publishable_rate_limit_per_minute)


def request_origin(headers: Iterable[tuple[str, str]]) -> str | None:
    """The `Origin` header (browsers send it on cross-site requests and on every POST), or None."""
    return next((value for name, value in headers if name.lower() == "origin"), None)


def presented_key(headers: Iterable[tuple[str, str]]) -> str | None:
    """The key a request presents: X-API-Key, else the token of `Authorization: Bearer <token>` (scheme
    case-insensitive, RFC 9110). Header names are compared case-insensitively."""
    bearer = None
    for name, value in headers:
        lowered = name.lower()
        if lowered == API_KEY_HEADER:
            return value
        if lowered == AUTHORIZATION_HEADER and value[:len(_BEARER)].lower() == _BEARER:
            bearer = value[len(_BEARER):].strip() or None
    return bearer


def authorize_http_api(event: dict[str, Any], guard: Guard) -> dict[str, Any]:
    """An API Gateway HTTP API (payload 2.0) Lambda authorizer's simple response for `event`.

    Denies a missing or invalid key and an IP over the failure limit; raises `AuthUnavailableError` when the
    key store cannot be read, so API Gateway answers 500 and caches nothing (a cached deny would lock out a
    valid key for the whole cache TTL).
    """
    headers: dict[str, Any] = event.get("headers") or {}
    pairs = [(str(k), str(v)) for k, v in headers.items()]
    http = (event.get("requestContext") or {}).get("http") or {}
    source_ip = str(http.get("sourceIp") or "unknown")
    path = str(event.get("rawPath") or http.get("path") or "")
    try:
        principal = guard.authenticate(presented_key(pairs), source_ip, origin=request_origin(pairs), path=path)
    except (CallerAuthError, RateLimitedError) as exc:
        logger.info("request denied", extra={"code": exc.code})
        return {"isAuthorized": False}
    # The function sees this as requestContext.authorizer.lambda: ids only, never the key or its hash.
    return {"isAuthorized": True, "context": {"key_id": principal.key_id, "owner": principal.owner}}


__all__ = ["API_KEY_HEADER", "AUTHORIZATION_HEADER", "OPEN_PATHS", "Guard", "authorize_http_api", "build_guard",
           "presented_key", "request_origin"]
