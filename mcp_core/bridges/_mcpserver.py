"""MCPServerSource: the elements of an existing SDK ``MCPServer``, served by mcp-core unchanged.

Definitions come from the server's own listings (``list_tools()``, ``list_resources()``...),
converted to mcp-core values. Every call, read, get and completion is delivered to the server as
its own connection would deliver it: through its middleware (``MCPServer(middleware=[...])``),
then to the handler on its low-level server (``MCPServer``'s own, or one the server put there),
so its policies, auditing, argument validation, ``Context`` and ``Resolve(...)`` injection,
result conversion and errors all keep working. The request context they see is mcp-core's
request's, its session answering through the request's ``ClientGateway`` (see
:mod:`mcp_core.server._context`), with the server's own lifespan state. What the server asks the
client (its ``InputRequiredResult``) is asked through the gateway in the era the client speaks.

A server that handles other requests on its low-level server (they would never reach it) is
refused when adopted, naming each (:func:`adoption_problems`; ``docs/adopt.md``).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import AsyncIterator, Awaitable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Final, final

import anyio
import mcp_types as types
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.request_state import RequestStateBoundary
from mcp.shared.exceptions import MCPError
from mcp_types import METHOD_NOT_FOUND
from pydantic import BaseModel

from mcp_core.bridges._common import Backend, SharedRun, bridged, wire_of
from mcp_core.elements import ElementCollection, ElementKind
from mcp_core.errors import SourceUnavailableError
from mcp_core.handlers import ClientGateway, EmbeddedResource, ToolResult
from mcp_core.handlers._wire import resource_contents_from_wire, tool_result_from_wire
from mcp_core.server._context import GatewayContext, sample_through, sdk_context

__all__ = ["MCPServerSource", "adoption_problems"]


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

    Its middleware runs around every call, read, get and completion that reaches it, in either
    protocol era (see the module documentation).

    Raises:
        TypeError: ``server`` is not an ``MCPServer``.
        ValueError: the server handles requests on its low-level server that would never reach
            it once adopted (the message names each, and what to do).
    """

    __slots__ = ("_run", "_tags", "server")

    def __init__(self, server: MCPServer[Any], *, tags: Iterable[str] = ()) -> None:
        if not isinstance(server, MCPServer):
            raise TypeError(
                f"MCPServerSource takes an mcp.server.mcpserver.MCPServer, got "
                f"{type(server).__name__}; for a FastMCP server use FastMCPSource"
            )
        _check_adoptable(server)
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
        _check_adoptable(server)  # handlers may have been added since it was adopted
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


# -- requests, through the server's own middleware and low-level handlers --------------------------

_REACHED: Final = frozenset({"tools/call", "resources/read", "prompts/get", "completion/complete"})
"""Requests mcp-core routes to an adopted server: each through its middleware and its handler."""
_LISTS: Final = {
    "tools/list": "_handle_list_tools",
    "prompts/list": "_handle_list_prompts",
    "resources/list": "_handle_list_resources",
    "resources/templates/list": "_handle_list_resource_templates",
}
"""Lists mcp-core builds itself from the server's ``list_*()``: only MCPServer's own handlers."""
_ANSWERED_HERE: Final = frozenset({"ping", "server/discover", "subscriptions/listen"})
"""Requests the serving mcp-core server answers for every source, as the protocol says."""
_MAX_ROUNDS: Final = 16
"""How many times one request may ask the client for input (``InputRequiredResult``) in a row."""


def adoption_problems(server: MCPServer[Any]) -> list[str]:
    """Why ``server`` cannot be adopted as it is: what it does that would silently stop working.

    mcp-core routes ``tools/call``, ``resources/read``, ``prompts/get`` and
    ``completion/complete`` to the server's own low-level handlers, through its middleware;
    it lists the server's elements itself and answers every other request for all its sources.
    A handler the server put on its low-level server for anything else would never run.
    """
    lowlevel = server._lowlevel_server  # noqa: SLF001 -- where the SDK keeps its handlers
    problems: list[str] = []
    for method, entry in lowlevel._request_handlers.items():  # noqa: SLF001 -- same
        if method in _REACHED or method in _ANSWERED_HERE:
            continue
        own = _LISTS.get(method)
        if own is not None:
            if entry.handler != getattr(server, own):
                lister = own.replace("_handle_", "")
                problems.append(
                    f"its {method} handler was replaced on the low-level server, but mcp-core "
                    f"lists the server's elements itself (MCPServer.{lister}()), so that handler "
                    "would never run"
                )
            continue
        problems.append(
            f"it handles {method!r} on its low-level server, a request the serving mcp-core "
            "server answers itself for all its sources, so that handler would never run"
        )
    problems.extend(
        f"it handles the notification {method!r} on its low-level server, which mcp-core does "
        "not forward to adopted servers"
        for method in lowlevel._notification_handlers  # noqa: SLF001 -- same
    )
    return problems


def _check_adoptable(server: MCPServer[Any]) -> None:
    problems = adoption_problems(server)
    if problems:
        raise ValueError(
            f"MCPServer {server.name!r} cannot be adopted as it is: {'; '.join(problems)}. "
            "Move that behaviour into its middleware (MCPServer(middleware=[...]), which runs "
            "around every call, read, get and completion), or serve it natively"
        )


def _middleware(server: MCPServer[Any]) -> list[ServerMiddleware[Any]]:
    """The server's own middleware chain, outermost first, without the SDK's built-ins.

    Tracing (OpenTelemetry) and the sealing of ``requestState`` are done once by the server that
    serves mcp-core's connection; the adopted server's own copies of them are left out.
    """
    return [
        layer
        for layer in server.middleware
        if not isinstance(layer, OpenTelemetryMiddleware | RequestStateBoundary)
    ]


async def _dispatch(
    source: MCPServerSource, method: str, params: dict[str, Any], gateway: ClientGateway
) -> dict[str, Any]:
    """One request to the adopted server, as its own connection would deliver it.

    Its middleware runs around the low-level handler registered for ``method`` (the SDK's, or
    one the server put there itself), with the request context of mcp-core's request: its
    session answers through ``gateway``. Returns the result in wire shape.

    Raises:
        MCPError: the middleware or the handler refused the request (passed on as is).
    """
    server = source.server
    lowlevel = server._lowlevel_server  # noqa: SLF001 -- where the SDK keeps its handlers
    context = source.context(gateway).request_context
    request = dataclasses.replace(context, method=method, params=params)

    async def handle(ctx: ServerRequestContext[Any, Any]) -> HandlerResult:
        entry = lowlevel.get_request_handler(ctx.method)
        if entry is None:
            raise MCPError(METHOD_NOT_FOUND, "Method not found", ctx.method)
        typed = entry.params_type.model_validate(ctx.params or {}, by_name=False)
        result = await entry.handler(ctx, typed)
        if isinstance(result, types.ErrorData):
            raise MCPError.from_error_data(result)
        return result

    call: CallNext = handle
    for layer in reversed(_middleware(server)):
        call = functools.partial(_layered, layer, call)
    result = await call(request)
    if result is None:
        return {}
    if isinstance(result, BaseModel):
        return wire_of(result)
    return dict(result)


def _layered(
    layer: ServerMiddleware[Any], call_next: CallNext, ctx: ServerRequestContext[Any, Any]
) -> Awaitable[HandlerResult]:
    return layer(ctx, call_next)


async def _answered(
    source: MCPServerSource, method: str, params: dict[str, Any], gateway: ClientGateway
) -> dict[str, Any]:
    """:func:`_dispatch`, with the server's questions to the client answered through ``gateway``.

    A handler that returns ``InputRequiredResult`` (the 2026-07-28 multi-round input, its own or
    its resolvers') has its questions asked through the gateway, in the era the client speaks,
    and is called again with the answers (``inputResponses``) and its ``requestState``, as a
    client would call it again; until it completes.
    """
    result = await _dispatch(source, method, params, gateway)
    for _ in range(_MAX_ROUNDS):
        if result.get("resultType") != "input_required":
            return result
        requests: Mapping[str, Any] = result.get("inputRequests") or {}
        answers = await _ask_all(gateway, requests)
        retry = {**params, "inputResponses": answers}
        if result.get("requestState") is not None:
            retry["requestState"] = result["requestState"]
        result = await _dispatch(source, method, retry, gateway)
    raise RuntimeError(
        f"{source!r} asked the client for input {_MAX_ROUNDS} times for one {method} request"
    )


async def _ask_all(gateway: ClientGateway, requests: Mapping[str, Any]) -> dict[str, Any]:
    """Every question at once (on 2026-07-28 they are asked in the same round)."""
    answers: dict[str, Any] = {}

    async def answer(key: str, request: Mapping[str, Any]) -> None:
        answers[key] = await _ask(gateway, request)

    async with anyio.create_task_group() as group:
        for key, request in requests.items():
            group.start_soon(answer, key, request)
    return answers


async def _ask(gateway: ClientGateway, request: Mapping[str, Any]) -> Mapping[str, Any]:
    """One of an ``InputRequiredResult``'s questions, asked through the gateway (wire shapes)."""
    method = request.get("method")
    params: Mapping[str, Any] = request.get("params") or {}
    if method == "sampling/createMessage":
        sampling = types.CreateMessageRequestParams.model_validate(params, by_name=False)
        return await sample_through(gateway, sampling)
    if method == "elicitation/create":
        if params.get("mode") == "url":
            return await gateway.elicit_url(
                params["message"], params["url"], elicitation_id=params.get("elicitationId")
            )
        return await gateway.elicit(params["message"], params["requestedSchema"])
    if method == "roots/list":
        return {"roots": list(await gateway.list_roots())}
    raise ValueError(f"an adopted server asked the client {method!r}, which mcp-core cannot relay")


async def _call(
    source: MCPServerSource, name: str, arguments: Mapping[str, Any], gateway: ClientGateway
) -> ToolResult:
    """``tools/call``: its middleware, then its handler (``MCPServer``'s, or its own)."""
    params = {"name": name, "arguments": dict(arguments)}
    return tool_result_from_wire(await _answered(source, "tools/call", params, gateway))


async def _read(
    source: MCPServerSource, original: str, requested: str, gateway: ClientGateway
) -> list[EmbeddedResource]:
    """``resources/read``, answered with the URI the client asked for."""
    result = await _answered(source, "resources/read", {"uri": original}, gateway)
    return [resource_contents_from_wire(item, uri=requested) for item in result["contents"]]


async def _get(
    source: MCPServerSource, name: str, arguments: Mapping[str, str], gateway: ClientGateway
) -> list[dict[str, Any]]:
    """``prompts/get``."""
    params = {"name": name, "arguments": dict(arguments)}
    result = await _answered(source, "prompts/get", params, gateway)
    messages: list[dict[str, Any]] = result.get("messages", [])
    return messages


async def _complete(
    source: MCPServerSource, params: types.CompleteRequestParams, gateway: ClientGateway
) -> list[str]:
    """``completion/complete`` (the server's ``@completion()`` handler)."""
    result = await _dispatch(source, "completion/complete", wire_of(params), gateway)
    return list(result.get("completion", {}).get("values", []))
