"""Qdrant through qdrant-client: the embedded folder or a remote server, one adapter."""
