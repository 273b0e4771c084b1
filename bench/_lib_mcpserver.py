"""The official SDK's high-level server: ``mcp.server.mcpserver.MCPServer`` with ``@mcp.tool``."""

from __future__ import annotations

import contextlib
from contextlib import AbstractAsyncContextManager
from importlib.metadata import version
from typing import Any, final

from mcp.server.mcpserver import MCPServer

from bench._libs import Library, McpCoreExtras
from bench._wire import LowLevel

__all__ = ["LIBRARY"]


@final
class _McpServer:
    key = "mcpserver"

    def versions(self) -> dict[str, str]:
        return {"mcp": version("mcp"), "pydantic": version("pydantic")}

    def new_app(self) -> Any:
        return MCPServer("bench", log_level="WARNING")

    def lowlevel(self, app: Any) -> LowLevel:
        assert isinstance(app, MCPServer)  # noqa: S101 -- this adapter's own app
        return app._lowlevel_server  # noqa: SLF001 -- run_stdio_async serves exactly this

    def lifespan(self, app: Any) -> AbstractAsyncContextManager[object]:  # noqa: ARG002 -- the protocol's signature
        return contextlib.nullcontext()

    @property
    def extras(self) -> McpCoreExtras | None:
        return None


LIBRARY: Library = _McpServer()
