"""The MCP server: the book's tools and documents for any MCP client, over stateless streamable HTTP
(`asgi`, mounted at /mcp by the web app) and over stdio (`bookrag mcp`). It calls the same services as
the REST routes; only this room and the web app's /mcp route import the `mcp` SDK."""
