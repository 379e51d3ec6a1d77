"""Text analysis shared by ingestion and answering: Markdown/MDX, sentences, tokens, BM25 terms."""
