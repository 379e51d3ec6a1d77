"""Contracts: the shapes each public interface promises (REST, tools, agent, Python API) and the error envelope."""
