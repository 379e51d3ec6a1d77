"""ASGI middleware that answers before any route: API keys and rate limits, the body-size limit."""
