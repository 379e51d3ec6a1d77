"""Ingestion: the book's files -> heading-aware chunk drafts -> payloads and vectors in the store."""
