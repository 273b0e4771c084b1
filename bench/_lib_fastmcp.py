"""fastmcp 4.x: ``FastMCP`` with ``@mcp.tool``, served by its SDK low-level server.

fastmcp is imported by name (``importlib``) and used as ``Any``: it is an optional dependency of
the benchmark only, absent from the project's development environment where mypy runs.
"""

from __future__ import annotations

import importlib
from contextlib import AbstractAsyncContextManager
from importlib.metadata import PackageNotFoundError, version
from typing import Any, cast, final

from bench._libs import Library, McpCoreExtras
from bench._wire import LowLevel

__all__ = ["LIBRARY"]

fastmcp: Any = importlib.import_module("fastmcp")


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "absent"


@final
class _FastMcp:
    key = "fastmcp"

    def versions(self) -> dict[str, str]:
        return {
            "fastmcp": str(fastmcp.__version__),
            "mcp": _version("mcp"),
            "pydantic": _version("pydantic"),
        }

    def new_app(self) -> Any:
        return fastmcp.FastMCP("bench")

    def lowlevel(self, app: Any) -> LowLevel:
        # What run_stdio_async serves, inside the same lifespan.
        return cast("LowLevel", app._mcp_server)  # noqa: SLF001

    def lifespan(self, app: Any) -> AbstractAsyncContextManager[object]:
        return cast("AbstractAsyncContextManager[object]", app._lifespan_manager())  # noqa: SLF001

    @property
    def extras(self) -> McpCoreExtras | None:
        return None


LIBRARY: Library = _FastMcp()
