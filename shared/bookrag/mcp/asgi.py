"""/mcp over HTTP: stateless streamable HTTP with JSON responses, one SDK session manager per request.

The SDK's `StreamableHTTPSessionManager.run()` can be entered once per manager, and is normally entered by
the app's lifespan; behind Mangum (lifespan="off") there is none, and a process-wide manager entered on the
first invocation would be closed or unusable from the second warm invocation on. A stateless exchange
keeps nothing between requests, so each request gets its own manager, entered and left around it: every
invocation, cold or warm, in Lambda or under uvicorn, runs the same way. (The server it drives is built
once per process; a manager is a few attributes and a task group.)

DNS-rebinding protection stays on: the Host header must be loopback (`bookrag serve`), a name in
MCP_ALLOWED_HOSTS (a custom domain), or the API Gateway domain the request came in on (API Gateway sets
`requestContext.domainName` and routes only its own domains here). Browser Origins are allowed only from
the same hosts over https, or from loopback.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server
    from mcp.server.transport_security import TransportSecuritySettings

Scope = dict[str, Any]
LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]")
LOOPBACK_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*",
                    "http://127.0.0.1", "http://localhost", "http://[::1]")
PROTOCOL_VERSION = "2026-07-28"  # the stateless revision this endpoint speaks
MAX_BODY_BYTES = 16 * 1024  # as the web app's BodySizeLimit, which answers first; this is the SDK's own check


def allowed_hosts(configured: str, gateway_domain: str | None) -> list[str]:
    names = [h.strip() for h in configured.split(",") if h.strip()]
    if gateway_domain:
        names.append(gateway_domain)
    return [*LOOPBACK_HOSTS, *names]


def security_for(scope: Scope) -> TransportSecuritySettings:
    from bookrag.services.container import current

    event = scope.get("aws.event") or {}
    domain = (event.get("requestContext") or {}).get("domainName") if isinstance(event, dict) else None
    return _security(current().settings.mcp_allowed_hosts, str(domain) if domain else None)


@lru_cache(maxsize=64)  # one per configuration and API domain: not rebuilt on every request
def _security(configured: str, gateway_domain: str | None) -> TransportSecuritySettings:
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = allowed_hosts(configured, gateway_domain)
    remote = [f"https://{h}" for h in hosts if h not in LOOPBACK_HOSTS]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=[*LOOPBACK_ORIGINS, *remote])


def prepare(tool_set: Literal["retrieval", "all"] = "all") -> None:
    """Load the SDK, build the server and run one `tools/list` exchange through it now (SnapStart's
    before-snapshot hook), so a restored container's first MCP request finds the SDK's message models
    and request path built. `tools/list` touches neither the store nor a paid API."""
    import asyncio

    # On the loop Mangum will use (it asks for the thread's current one): anyio.run would close its own
    # loop and leave the thread without one.
    loop = asyncio.get_event_loop_policy().get_event_loop()
    # The endpoint builds its server with `build_server`, cached per process: the app's endpoint reuses it.
    loop.run_until_complete(_list_tools_once(McpEndpoint(tool_set)))


async def _list_tools_once(endpoint: McpEndpoint) -> None:
    import json

    import anyio

    meta = {"io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "bookrag-warm-up", "version": "1"}}
    body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {"_meta": meta}}).encode()
    headers = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
               (b"accept", b"application/json, text/event-stream"),
               (b"mcp-protocol-version", PROTOCOL_VERSION.encode()), (b"mcp-method", b"tools/list")]
    scope: Scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
                    "scheme": "http", "path": "/mcp", "raw_path": b"/mcp", "query_string": b"", "root_path": "",
                    "headers": headers, "client": ("127.0.0.1", 0), "server": ("127.0.0.1", 80), "state": {}}
    done = anyio.Event()
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()  # a client that stays connected until the reply is complete
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            done.set()

    await endpoint(scope, receive, send)


class McpEndpoint:
    """The ASGI app behind /mcp (the web app's key check and body limit run before it).

    The SDK is imported on the first /mcp request, not when the app is built: the function's other
    routes, its health checks and its warm-ups never load it."""

    def __init__(self, tool_set: Literal["retrieval", "all"]) -> None:
        self.tool_set = tool_set
        self._server: Server[Any] | None = None

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        if self._server is None:
            from bookrag.mcp.server import build_server

            self._server = build_server(self.tool_set)
        from bookrag.domain.keys import ANONYMOUS
        from bookrag.services.conversations import CALLER

        manager = StreamableHTTPSessionManager(self._server, json_response=True, stateless=True,
                                               security_settings=security_for(scope),
                                               max_request_body_size=MAX_BODY_BYTES)
        caller = CALLER.set(str((scope.get("state") or {}).get("api_key_id") or ANONYMOUS))
        try:
            async with manager.run():
                await manager.handle_request(scope, receive, send)
        finally:
            CALLER.reset(caller)
