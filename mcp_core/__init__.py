"""mcp-core: a statically typed, protocol-first core for MCP servers."""

__version__ = "0.1.0"
