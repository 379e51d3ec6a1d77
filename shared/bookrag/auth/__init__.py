"""Caller authentication: API keys, the guard that admits requests, rate limits, key stores."""
