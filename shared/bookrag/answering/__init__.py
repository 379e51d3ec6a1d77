"""Answering: the agent, its answerers, the citation check and the output guards."""
