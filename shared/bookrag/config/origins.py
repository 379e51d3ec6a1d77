"""Web origins, as browsers send them in `Origin`: for CORS (settings) and publishable keys (auth).
Standard library only: the authorizer imports it on its cold start."""

from __future__ import annotations

from urllib.parse import urlsplit


def parse_origin(value: str) -> str:
    """A web origin as browsers send it in `Origin`: `scheme://host[:port]`, lower case, no path.
    Raises `ValueError` for anything else (a path, a wildcard, credentials, another scheme)."""
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.password \
            or parts.path not in ("", "/") or parts.query or parts.fragment or "*" in value:
        raise ValueError("an origin is scheme://host[:port], for example https://book.example")
    port = f":{parts.port}" if parts.port else ""
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host.lower()}{port}"
