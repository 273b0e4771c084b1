"""What the worker needs from each library, behind one small protocol.

Each adapter lives in its own module (``_lib_mcp_core``, ``_lib_mcpserver``, ``_lib_fastmcp``)
so that a worker imports exactly one library; :func:`load` picks it by key.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Final, Protocol, cast

from bench._wire import LowLevel

__all__ = ["LIBRARIES", "Library", "McpCoreExtras", "load"]

LIBRARIES: Final[Mapping[str, str]] = {
    "mcp-core": "bench._lib_mcp_core",
    "mcpserver": "bench._lib_mcpserver",
    "fastmcp": "bench._lib_fastmcp",
}
"""Library key -> adapter module."""


class McpCoreExtras(Protocol):
    """What only mcp-core has: pagination, per-session visibility, a sans-IO request core."""

    def set_page_size(self, app: Any, size: int | None) -> None:
        """Elements per ``tools/list`` page (None: one full list)."""
        ...

    def set_hidden(self, app: Any, names: list[str] | None) -> None:
        """Hide ``names`` from sessions without the ``admin`` scope (None: show everything)."""
        ...

    async def sansio_list(self, app: Any) -> dict[str, Any]:
        """The ``tools/list`` result from the request handlers alone (no SDK, no JSON-RPC)."""
        ...


class Library(Protocol):
    """A library under test."""

    @property
    def key(self) -> str:
        """The library's key in :data:`LIBRARIES`."""
        ...

    def versions(self) -> dict[str, str]:
        """Installed versions of what is measured (package -> version)."""
        ...

    def new_app(self) -> Any:
        """A fresh, empty server object whose ``tool(name=...)`` decorator declares a tool."""
        ...

    def lowlevel(self, app: Any) -> LowLevel:
        """The SDK low-level server that serves ``app``."""
        ...

    def lifespan(self, app: Any) -> AbstractAsyncContextManager[object]:
        """What must be entered around serving (fastmcp's lifespan; nothing for the others)."""
        ...

    @property
    def extras(self) -> McpCoreExtras | None:
        """mcp-core's extra knobs; None for the peers."""
        ...


def load(key: str) -> Library:
    """Import the adapter (and so the library) for ``key``."""
    if key not in LIBRARIES:
        raise ValueError(f"unknown library {key!r}; one of {', '.join(LIBRARIES)}")
    module = importlib.import_module(LIBRARIES[key])
    return cast("Library", module.LIBRARY)
