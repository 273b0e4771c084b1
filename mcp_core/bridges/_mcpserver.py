"""MCPServerSource: the elements of an existing SDK ``MCPServer``, served by mcp-core unchanged.

Definitions come from the server's own listings (``list_tools()``, ``list_resources()``...),
converted to mcp-core values; every call goes back to the server's own public methods
(``call_tool``, ``read_resource``, ``get_prompt``), so the SDK's argument validation, ``Context``
and ``Resolve(...)`` injection, result conversion and error handling all keep working. The
``Context`` they receive is mcp-core's over the request's gateway (see
:mod:`mcp_core.server._context`), with the server's own lifespan state.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, final

import mcp_types as types
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import MCPServer

from mcp_core.bridges._common import Backend, SharedRun, bridged, wire_of
from mcp_core.elements import ElementCollection, ElementKind
from mcp_core.errors import SourceUnavailableError
from mcp_core.handlers import (
    ClientGateway,
    EmbeddedResource,
    ToolResult,
    tool_result_from_wire,
)
from mcp_core.server import GatewayContext, sdk_context

__all__ = ["MCPServerSource"]


@final
class MCPServerSource:
    """The tools, resources, templates and prompts of an ``mcp.server.mcpserver.MCPServer``.

    ::

        legacy = MCPServer("legacy")          # an existing app, its functions untouched

        app = App("new")
        app.add_source(MCPServerSource(legacy))

    A server with a ``lifespan`` needs it entered before its functions run: :meth:`running`
    enters it, and ``App`` runs it for every server run (``running_sources`` does the same for a
    plain ``McpServer``). Its completion handler (``@server.completion()``), if any, completes
    every prompt argument and template variable. ``provide()`` reads the server's managers
    afresh each time, so tools added to it later appear at the next reload. ``tags`` are given to
    every element (for visibility rules such as ``scoped_by_tag``).
    """

    __slots__ = ("_run", "_tags", "server")

    def __init__(self, server: MCPServer[Any], *, tags: Iterable[str] = ()) -> None:
        if not isinstance(server, MCPServer):
            raise TypeError(
                f"MCPServerSource takes an mcp.server.mcpserver.MCPServer, got "
                f"{type(server).__name__}; for a FastMCP server use FastMCPSource"
            )
        self.server = server
        self._tags = frozenset(tags)
        self._run: SharedRun[Any] = SharedRun(self._lifespan)

    def __repr__(self) -> str:
        return f"MCPServerSource({self.server.name!r})"

    def kinds(self) -> ElementKind:
        """The kinds the server holds now (its managers are in memory; nothing is provided)."""
        server = self.server
        kinds = ElementKind.NONE
        # The managers are the SDK's own bookkeeping; MCPServer lists them only asynchronously.
        if server._tool_manager.list_tools():  # noqa: SLF001 -- see above
            kinds |= ElementKind.TOOL
        resources = server._resource_manager  # noqa: SLF001 -- see above
        if resources.list_resources():
            kinds |= ElementKind.RESOURCE
        if resources.list_templates():
            kinds |= ElementKind.RESOURCE_TEMPLATE
        if server._prompt_manager.list_prompts():  # noqa: SLF001 -- see above
            kinds |= ElementKind.PROMPT
        return kinds

    def running(self) -> AbstractAsyncContextManager[object]:
        """Enter the server's lifespan for as long as this is entered (see :class:`SharedRun`)."""
        return self._run.enter()

    @asynccontextmanager
    async def _lifespan(self) -> AsyncIterator[object]:
        lifespan = self.server.settings.lifespan
        if lifespan is None:
            yield {}
            return
        async with lifespan(self.server) as state:
            yield state

    async def provide(self) -> ElementCollection:
        """The server's elements as mcp-core elements whose handlers call back into it."""
        server = self.server
        complete = server._lowlevel_server.get_request_handler("completion/complete")  # noqa: SLF001 -- the SDK keeps @completion() only there
        backend = Backend(
            source=self,
            call=_call,
            read=_read,
            get=_get,
            complete=_complete if complete is not None else None,
        )
        return ElementCollection(
            [
                bridged(ElementKind.TOOL, tool, backend, self._tags)
                for tool in await server.list_tools()
            ]
            + [
                bridged(ElementKind.RESOURCE, resource, backend, self._tags)
                for resource in await server.list_resources()
            ]
            + [
                bridged(ElementKind.RESOURCE_TEMPLATE, template, backend, self._tags)
                for template in await server.list_resource_templates()
            ]
            + [
                bridged(ElementKind.PROMPT, prompt, backend, self._tags)
                for prompt in await server.list_prompts()
            ]
        )

    def context(self, gateway: ClientGateway, *, handshake_era: bool = False) -> GatewayContext:
        """The SDK ``Context`` the server's functions get for a call made through ``gateway``.

        Raises:
            SourceUnavailableError: the server has a lifespan and it is not running.
        """
        if self.server.settings.lifespan is not None and not self._run.running:
            raise SourceUnavailableError(
                f"{self!r} is not running, so its MCPServer's lifespan has not been entered: serve "
                "it from an App (which runs its sources) or inside `async with source.running():`",
                source=self,
            )
        return sdk_context(
            gateway,
            mcp_server=self.server,
            lifespan_context=self._run.value if self._run.running else {},
            handshake_era=handshake_era,
        )


async def _call(
    source: MCPServerSource, name: str, arguments: Mapping[str, Any], gateway: ClientGateway
) -> ToolResult:
    """``MCPServer.call_tool``."""
    server = source.server
    # The SDK's ToolError is a failure on purpose: the invoker makes its message the tool's
    # error result, as MCPServer does; UnexpectedToolError is a crash, logged and answered with a
    # generic error (mcp_core.handlers.on_purpose).
    result = await server.call_tool(name, dict(arguments), source.context(gateway))
    if isinstance(result, types.InputRequiredResult):
        # Its resolvers want input in the 2026-07-28 way: answer them through the gateway
        # instead, which works in every era (the resolvers run again, as the SDK allows).
        context = source.context(gateway, handshake_era=True)
        result = await server.call_tool(name, dict(arguments), context)
    if not isinstance(result, types.CallToolResult):
        raise TypeError(f"MCPServer.call_tool returned {type(result).__name__}")
    return tool_result_from_wire(wire_of(result))


async def _read(
    source: MCPServerSource, original: str, requested: str, gateway: ClientGateway
) -> list[EmbeddedResource]:
    """``MCPServer.read_resource``."""
    # The SDK's ResourceError and ResourceNotFoundError are failures on purpose, which the
    # invoker answers as MCPServer would (the message and the URI, -32603 or not found);
    # UnexpectedResourceError is a crash (mcp_core.handlers.on_purpose).
    contents = await source.server.read_resource(original, source.context(gateway))
    if isinstance(contents, types.InputRequiredResult):
        raise TypeError("the resource asked for client input, which mcp-core does not relay yet")
    return [_embedded(item, requested) for item in contents]


def _embedded(item: ReadResourceContents, uri: str) -> EmbeddedResource:
    mime_type = item.mime_type
    if isinstance(item.content, bytes):
        return EmbeddedResource(
            uri,
            blob=item.content,
            mime_type=mime_type or "application/octet-stream",
            meta=item.meta,
        )
    return EmbeddedResource(
        uri, text=item.content, mime_type=mime_type or "text/plain", meta=item.meta
    )


async def _get(
    source: MCPServerSource, name: str, arguments: Mapping[str, str], gateway: ClientGateway
) -> list[dict[str, Any]]:
    """``MCPServer.get_prompt``."""
    result = await source.server.get_prompt(name, dict(arguments), source.context(gateway))
    if isinstance(result, types.InputRequiredResult):
        raise TypeError("the prompt asked for client input, which mcp-core does not relay yet")
    messages: list[dict[str, Any]] = wire_of(result).get("messages", [])
    return messages


async def _complete(
    source: MCPServerSource, params: types.CompleteRequestParams, gateway: ClientGateway
) -> list[str]:
    """The server's ``@completion()`` handler."""
    entry = source.server._lowlevel_server.get_request_handler("completion/complete")  # noqa: SLF001 -- where the SDK keeps it
    if entry is None:
        return []
    result = await entry.handler(source.context(gateway).request_context, params)
    if isinstance(result, types.CompleteResult):
        return list(result.completion.values)
    return []
