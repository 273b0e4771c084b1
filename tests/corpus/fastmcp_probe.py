"""A fastmcp server of no elements: whether ``mcp-core run`` serves a fastmcp object as it is."""

from fastmcp import FastMCP

app = FastMCP("probe")
