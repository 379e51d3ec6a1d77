"""Adapters: the SDKs (Qdrant, Cohere, the local model) behind our ports; SDK errors become ours here."""
