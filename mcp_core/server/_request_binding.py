"""The request handlers bound to the official SDK's low-level server.

Each SDK handler builds the session and gateway for the request, calls the sans-IO
:class:`~mcp_core.server._requests.RequestHandlers`, and translates failures with
:func:`~mcp_core.server._errors.wire_error`, in one place (:func:`_wire`). It also tracks each
handshake-era session's state, answers list pages without the SDK's result model, and runs a
request that asks the client in the negotiated era's way.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final, TypeVar, final

import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError
from mcp_types import SERVER_INFO_META_KEY
from mcp_types.methods import CACHEABLE_METHODS
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_core.errors import clip_input
from mcp_core.handlers import escapes
from mcp_core.handlers._containment import from_user_frame
from mcp_core.server._errors import INVALID_PARAMS, RESOURCE_NOT_FOUND, clip_json, wire_error
from mcp_core.server._gateway import (
    Ctx,
    ServerGateway,
    SessionHook,
    SessionState,
    connection_of,
    http_request_of,
    session_info_of,
)
from mcp_core.server._hub import Hub
from mcp_core.server._listen import LISTENING_SESSION
from mcp_core.server._param_headers import param_header_check
from mcp_core.server._requests import RequestHandlers
from mcp_core.server._rounds import InputRounds, RoundLedger, owner_of
from mcp_core.visibility import SessionInfo

if TYPE_CHECKING:
    from mcp_core.server._deployed import SessionKeeper

__all__ = ["RequestBinding"]

_log = logging.getLogger("mcp_core.server")

_STATE_KEY: Final = "mcp_core.session"
# JSON-RPC codes of refusals of a client's request, whose text may quote it.
_REFUSALS: Final = frozenset({types.INVALID_REQUEST, types.METHOD_NOT_FOUND, types.INVALID_PARAMS})
_T = TypeVar("_T")

_SERVING: ContextVar[str] = ContextVar("mcp_core.server.serving", default="request")
"""What the request being answered is, for the log: ``resources/read 'note://7'``."""


def _described(method: str, params: Any) -> str:
    """``method`` and the element it names (clipped: it is the client's), as the log says it."""
    key: object
    match params:
        case types.ReadResourceRequestParams(uri=key) | types.SubscribeRequestParams(uri=key):
            pass
        case types.UnsubscribeRequestParams(uri=key):
            pass
        case types.CallToolRequestParams(name=key) | types.GetPromptRequestParams(name=key):
            pass
        case types.CompleteRequestParams(ref=types.ResourceTemplateReference(uri=key)):
            pass
        case types.CompleteRequestParams(ref=types.PromptReference(name=key)):
            pass
        case _:
            return method
    return f"{method} {clip_input(str(key))!r}"


def _wire(exc: BaseException) -> MCPError:
    """The one place any failure (SystemExit too, never cancellation) becomes a wire error."""
    error = wire_error(exc)
    if error.expected:
        _log.info("%s refused: %s", _SERVING.get(), exc)
    else:
        _log.error(
            "%s failed; the client is told only %r",
            _SERVING.get(),
            error.message,
            exc_info=from_user_frame(exc),
        )
    return MCPError(error.code, error.message, error.data)


@contextmanager
def _as_wire_errors() -> Iterator[None]:
    """Inside: a protocol error passes as it is, any other failure becomes one (:func:`_wire`)."""
    try:
        yield
    except MCPError:
        raise
    except BaseException as exc:
        if escapes(exc):
            raise
        raise _wire(exc) from None


def _enveloped(
    method: str, handler: Callable[[Ctx, Any], Awaitable[HandlerResult]]
) -> Callable[[Ctx, Any], Awaitable[HandlerResult]]:
    """``handler`` with the 2026-07-28 result envelope added to its wire dict, its log naming it.

    The SDK fills ``resultType`` and the cache hints only for result *models*; the request handlers
    return wire dicts, so the envelope is added here: complete, and not cacheable across sessions
    (lists and reads depend on the session's visibility). 2026-07-28 also retired the
    resource-not-found code -32002 (SEP-2164): there, a missing resource is -32602.
    """
    cacheable = method in CACHEABLE_METHODS

    async def enveloped(ctx: Ctx, params: Any) -> HandlerResult:
        serving = _SERVING.set(_described(method, params))
        try:
            result = await handler(ctx, params)
        except MCPError as exc:
            if exc.code == RESOURCE_NOT_FOUND and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                raise MCPError(INVALID_PARAMS, exc.message, exc.data) from None
            raise
        finally:
            _SERVING.reset(serving)
        if (
            isinstance(result, dict)
            and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
            and result.get("resultType") != "input_required"  # an interim result has no hints
        ):
            result.setdefault("resultType", "complete")
            if cacheable:
                result.setdefault("ttlMs", 0)
                result.setdefault("cacheScope", "private")
        return result

    return enveloped


_LISTS: Final[
    Mapping[
        str,
        Callable[..., Awaitable[dict[str, Any]]],
    ]
] = {
    "tools/list": RequestHandlers.list_tools,
    "resources/list": RequestHandlers.list_resources,
    "resources/templates/list": RequestHandlers.list_resource_templates,
    "prompts/list": RequestHandlers.list_prompts,
}


@final
class RequestBinding:
    """The SDK request handlers of one :class:`~mcp_core.server.McpServer`, bound to ``server``."""

    __slots__ = (
        "_hook",
        "_ledger",
        "_max_rounds",
        "handlers",
        "keeper",
        "lowlevel",
        "resumed_session_id",
    )

    def __init__(
        self,
        server: Server[Hub],
        handlers: RequestHandlers,
        *,
        hook: SessionHook | None,
        ledger: RoundLedger,
        max_rounds: int | None,
    ) -> None:
        self.lowlevel = server
        self.handlers = handlers
        self._hook = hook
        self._ledger = ledger
        self._max_rounds = max_rounds
        # Handshake-era sessions recorded for every worker (ADR 0109); set by the HTTP app.
        self.keeper: SessionKeeper | None = None
        # The id of the stdio session the prelude began (ADR 0115): its first state takes it.
        self.resumed_session_id: str | None = None
        self._bind(server)

    def _bind(self, server: Server[Hub]) -> None:
        routes: tuple[
            tuple[str, type[Any], Callable[[Ctx, Any], Awaitable[HandlerResult]]], ...
        ] = (
            ("tools/list", types.PaginatedRequestParams, self._list_tools),
            ("tools/call", types.CallToolRequestParams, self._call_tool),
            ("resources/list", types.PaginatedRequestParams, self._list_resources),
            ("resources/templates/list", types.PaginatedRequestParams, self._list_templates),
            ("resources/read", types.ReadResourceRequestParams, self._read_resource),
            ("resources/subscribe", types.SubscribeRequestParams, self._subscribe),
            ("resources/unsubscribe", types.UnsubscribeRequestParams, self._unsubscribe),
            ("prompts/list", types.PaginatedRequestParams, self._list_prompts),
            ("prompts/get", types.GetPromptRequestParams, self._get_prompt),
            ("completion/complete", types.CompleteRequestParams, self._complete),
            # Registered directly: the constructor argument warns that logging is deprecated at
            # 2026-07-28, yet every handshake-era client still uses it.
            ("logging/setLevel", types.SetLevelRequestParams, self._set_level),
            ("subscriptions/listen", types.SubscriptionsListenRequestParams, self._listen),
        )
        for method, params_type, handler in routes:
            server.add_request_handler(method, params_type, _enveloped(method, handler))
        server.middleware.append(self._track_sessions)

    async def _list_tools(self, ctx: Ctx, params: types.PaginatedRequestParams) -> HandlerResult:
        return await self._answer(
            self.handlers.list_tools(params.cursor, self._session(ctx)[0], era=ctx.protocol_version)
        )

    async def _list_resources(
        self, ctx: Ctx, params: types.PaginatedRequestParams
    ) -> HandlerResult:
        return await self._answer(
            self.handlers.list_resources(
                params.cursor, self._session(ctx)[0], era=ctx.protocol_version
            )
        )

    async def _list_templates(
        self, ctx: Ctx, params: types.PaginatedRequestParams
    ) -> HandlerResult:
        session = self._session(ctx)[0]
        return await self._answer(
            self.handlers.list_resource_templates(params.cursor, session, era=ctx.protocol_version)
        )

    async def _list_prompts(self, ctx: Ctx, params: types.PaginatedRequestParams) -> HandlerResult:
        return await self._answer(
            self.handlers.list_prompts(
                params.cursor, self._session(ctx)[0], era=ctx.protocol_version
            )
        )

    async def _call_tool(self, ctx: Ctx, params: types.CallToolRequestParams) -> HandlerResult:
        request = http_request_of(ctx)
        headers = request.headers if request is not None else None
        admit = param_header_check(ctx.protocol_version, headers, params.arguments)
        return await self._asking(
            ctx,
            params,
            lambda g: self.handlers.call_tool(
                params.name, params.arguments, g, admit=admit, era=ctx.protocol_version
            ),
        )

    async def _read_resource(
        self, ctx: Ctx, params: types.ReadResourceRequestParams
    ) -> HandlerResult:
        return await self._asking(
            ctx,
            params,
            lambda g: self.handlers.read_resource(params.uri, g, era=ctx.protocol_version),
        )

    async def _get_prompt(self, ctx: Ctx, params: types.GetPromptRequestParams) -> HandlerResult:
        return await self._asking(
            ctx,
            params,
            lambda g: self.handlers.get_prompt(
                params.name, params.arguments, g, era=ctx.protocol_version
            ),
        )

    async def _asking(
        self,
        ctx: Ctx,
        params: types.InputResponseRequestParams,
        work: Callable[[ServerGateway], Awaitable[dict[str, Any]]],
    ) -> HandlerResult:
        """``work`` for a request whose handler may ask the client, in the negotiated era's way.

        On 2026-07-28 the request runs in rounds (see :mod:`mcp_core.server._rounds`): it is run
        again from the start with the client's answers until it asks nothing new.
        """
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return await self._answer(work(self._gateway(ctx)))
        info, state = self._session(ctx)

        async def rounds() -> dict[str, Any]:
            asking = await InputRounds.resume(
                owner=lambda: owner_of(info),  # digested only if a state is read or issued
                request_state=params.request_state,
                input_responses=params.input_responses,
                ledger=self._ledger,
                max_rounds=self._max_rounds,
            )
            gateway = ServerGateway(
                ctx, info, log_level=state.log_level if state else None, rounds=asking
            )
            return await asking.run(lambda: work(gateway), self._ledger)

        return await self._answer(rounds())

    async def _complete(self, ctx: Ctx, params: types.CompleteRequestParams) -> HandlerResult:
        wire = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        context = (wire.get("context") or {}).get("arguments")
        return await self._answer(
            self.handlers.complete(
                wire["ref"],
                wire["argument"],
                context,
                self._gateway(ctx),
                era=ctx.protocol_version,
            )
        )

    async def _subscribe(self, ctx: Ctx, params: types.SubscribeRequestParams) -> HandlerResult:
        info, state = self._session(ctx)
        result = await self._answer(
            self.handlers.subscribe(params.uri, info, era=ctx.protocol_version)
        )
        if state is not None:
            state.subscriptions.add(params.uri)
            await self._shared(state)
        return result

    async def _unsubscribe(self, ctx: Ctx, params: types.UnsubscribeRequestParams) -> HandlerResult:
        state = self._session(ctx)[1]
        if state is not None:
            state.subscriptions.discard(params.uri)
            await self._shared(state)
        return {}

    async def _set_level(self, ctx: Ctx, params: types.SetLevelRequestParams) -> HandlerResult:
        state = self._session(ctx)[1]
        if state is not None:
            state.log_level = params.level
            await self._shared(state)
        return {}

    async def _listen(
        self, ctx: Ctx, params: types.SubscriptionsListenRequestParams
    ) -> HandlerResult:
        hub: Hub = ctx.lifespan_context
        token = LISTENING_SESSION.set(self._session(ctx)[0])
        try:
            return await hub.listen(ctx, params)
        finally:
            LISTENING_SESSION.reset(token)

    async def _track_sessions(self, ctx: Ctx, call_next: CallNext) -> HandlerResult:
        # Seen on every message, `initialize` included, so a client is notified of changes even
        # before its first list request.
        state = self._state(ctx)
        keeper = self.keeper
        if keeper is not None and state is not None and ctx.method != "initialize":
            await keeper.used(state)
        if ctx.method in _LISTS and ctx.request_id is not None:
            fast = await self._list_directly(ctx)
            if fast is not None:
                return fast
        try:
            result = await call_next(ctx)
        except MCPError as exc:
            # The SDK's own refusals may quote the request (an unknown method's name): clip them.
            error = exc.error
            if type(exc) is not MCPError or error.code not in _REFUSALS:
                raise
            clipped = MCPError(error.code, clip_json(error.message), clip_json(error.data))
            if clipped.error == error:
                raise
            raise clipped from None
        if ctx.method == "initialize" and keeper is not None and state is not None:
            version = result.get("protocolVersion") if isinstance(result, dict) else None
            if isinstance(version, str):
                await keeper.opened(state, ctx.params or {}, version)
        return result

    async def _shared(self, state: SessionState) -> None:
        """Tell the other workers of a deployment that this session changed (ADR 0109)."""
        if self.keeper is not None:
            await self.keeper.changed(state)

    async def _list_directly(self, ctx: Ctx) -> dict[str, Any] | None:
        """A list result built without the SDK's result model, or None to take the usual path.

        The SDK validates every result against its pydantic model and dumps it again, which for
        a 10k-tool list costs five times the JSON encoding itself. A page made of definitions'
        own wire dicts is valid by construction (a test holds it equal to the SDK's rendering),
        so lists skip that round trip. Anything unusual (an uninitialised session, params the
        SDK would refuse) goes the usual way and gets the SDK's answer.
        """
        connection = connection_of(ctx)
        params = ctx.params or {}
        cursor = params.get("cursor")
        if (
            connection is None
            or not connection.initialize_accepted
            or not isinstance(cursor, str | None)
            or set(params) - {"cursor", "_meta"}
        ):
            return None
        list_page = _LISTS[ctx.method]
        result = await self._answer(
            list_page(self.handlers, cursor, self._session(ctx)[0], era=ctx.protocol_version)
        )
        version = ctx.protocol_version
        if version in MODERN_PROTOCOL_VERSIONS:
            result.update(resultType="complete", ttlMs=0, cacheScope="private")
            result["_meta"] = {SERVER_INFO_META_KEY: self.lowlevel.server_info_stamp}
        return result

    def _state(self, ctx: Ctx) -> SessionState | None:
        connection = connection_of(ctx)
        if connection is None or connection.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return None  # a 2026 request is its own session: nothing persists between requests
        return self.state_of(connection, ctx.lifespan_context)

    def state_of(self, connection: Connection, hub: object) -> SessionState:
        """The state of a handshake-era session's ``connection``, made and tracked on first use."""
        state = connection.state.get(_STATE_KEY)
        if not isinstance(state, SessionState):
            state = connection.state[_STATE_KEY] = SessionState(connection=connection)
            if self.resumed_session_id is not None:
                state.local_id, self.resumed_session_id = self.resumed_session_id, None
            if self.keeper is not None:
                self.keeper.restore(state)  # a session resumed from its record (ADR 0109)
            if isinstance(hub, Hub):
                hub.track(state)
        return state

    def _session(self, ctx: Ctx) -> tuple[SessionInfo, SessionState | None]:
        # The session hook is user code, run before a request's work: contained the same way.
        with _as_wire_errors():
            state = self._state(ctx)
            if state is None:
                return session_info_of(ctx, None, self._hook), None
            if state.info is None:
                state.info = session_info_of(ctx, state, self._hook)
        return state.info, state

    def _gateway(self, ctx: Ctx) -> ServerGateway:
        info, state = self._session(ctx)
        return ServerGateway(ctx, info, log_level=state.log_level if state is not None else None)

    @staticmethod
    async def _answer(work: Awaitable[_T]) -> _T:
        with _as_wire_errors():
            return await work
