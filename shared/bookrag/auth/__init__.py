"""Caller authentication: API keys (format, minting, hashing), the guard that admits requests, rate limits,
and the in-memory key store of `bookrag serve` (DynamoDB's is an adapter)."""
