"""mcp-core: ``App`` with ``@app.tool``, served by ``McpServer``'s SDK low-level server."""

from __future__ import annotations

import contextlib
from contextlib import AbstractAsyncContextManager
from importlib.metadata import version
from typing import Any, final

import mcp_core
from bench._libs import Library, McpCoreExtras
from bench._wire import LowLevel
from mcp_core.app import App
from mcp_core.elements import ElementKind, ElementRef
from mcp_core.visibility import ALWAYS, SessionInfo, requires_scopes

__all__ = ["LIBRARY"]


@final
class _Extras:
    def set_page_size(self, app: Any, size: int | None) -> None:
        assert isinstance(app, App)  # noqa: S101 -- this adapter's own app
        app.server.handlers.page_size = size

    def set_hidden(self, app: Any, names: list[str] | None) -> None:
        assert isinstance(app, App)  # noqa: S101 -- this adapter's own app
        if names is None:
            app.visibility = ALWAYS
        else:
            app.visibility = requires_scopes(
                {ElementRef(ElementKind.TOOL, n): {"admin"} for n in names}
            )

    async def sansio_list(self, app: Any) -> dict[str, Any]:
        assert isinstance(app, App)  # noqa: S101 -- this adapter's own app
        return await app.server.handlers.list_tools(None, SessionInfo(session_id="bench"))


@final
class _McpCore:
    key = "mcp-core"

    def versions(self) -> dict[str, str]:
        return {
            "mcp-core": mcp_core.__version__,
            "mcp": version("mcp"),
            "pydantic": version("pydantic"),
        }

    def new_app(self) -> Any:
        return App("bench")

    def lowlevel(self, app: Any) -> LowLevel:
        assert isinstance(app, App)  # noqa: S101 -- this adapter's own app
        return app.server.lowlevel

    def lifespan(self, app: Any) -> AbstractAsyncContextManager[object]:  # noqa: ARG002 -- the protocol's signature
        return contextlib.nullcontext()

    @property
    def extras(self) -> McpCoreExtras | None:
        return _Extras()


LIBRARY: Library = _McpCore()
