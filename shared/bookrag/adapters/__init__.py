"""Adapters: every SDK and HTTP client (the store engines, model providers, Cohere, DynamoDB, the local model)
behind our ports; their errors become ours here."""
