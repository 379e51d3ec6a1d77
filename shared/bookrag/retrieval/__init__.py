"""Retrieval: a query in, ranked chunks out (hybrid search, diversity, scores, optional rerank)."""
