"""The client gateway a handler gets, and who the session is: both built over the SDK's context."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, cast, final, get_args

import mcp_types as types
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.connection import Connection, allowed_log_levels
from mcp.server.context import ServerRequestContext
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.requests import HTTPConnection

from mcp_core.errors import ClientCapabilityError
from mcp_core.handlers import LogLevel
from mcp_core.handlers._current_element import serving_element
from mcp_core.handlers._encodable import unencodable
from mcp_core.server._lifecycle import Draining
from mcp_core.visibility import SessionInfo

if TYPE_CHECKING:
    from mcp_core.elements import Element
    from mcp_core.server._rounds import InputRounds

__all__ = ["LOG_LEVELS", "ServerGateway", "SessionHook", "SessionState", "session_info_of"]

_log = logging.getLogger("mcp_core.server")

LOG_LEVELS: Final[tuple[LogLevel, ...]] = get_args(LogLevel)
"""RFC 5424 severities, least severe first (the order ``logging/setLevel`` thresholds use)."""

SessionHook: TypeAlias = Callable[[SessionInfo], SessionInfo]
"""Refines the SessionInfo the transport gave (e.g. scopes from a client name or a header).

It receives the transport's view: ``session_id``, the bearer token's ``principal``,
``client_id``, ``scopes`` and ``claims`` when the HTTP transport authenticated the client, and in
``attributes`` the client's ``client_name`` / ``client_version`` and the ``protocol_version``.
"""

Ctx: TypeAlias = ServerRequestContext[Any, Any]


@dataclass(slots=True, eq=False, kw_only=True)
class SessionState:
    """What the server remembers about one client connection (handshake-era protocols).

    ``info`` is built on the connection's first request after the handshake; ``log_level`` is the
    ``logging/setLevel`` threshold (None: everything); ``subscriptions`` the subscribed URIs.
    """

    connection: Connection
    info: SessionInfo | None = None
    log_level: LogLevel | None = None
    subscriptions: set[str] = field(default_factory=set)
    shared_at: float = 0.0
    """When the session's record was last written to a deployment's store (monotonic)."""
    local_id: str = field(default_factory=lambda: uuid.uuid4().hex)


def connection_of(ctx: Ctx) -> Connection | None:
    """The SDK connection a request arrived on.

    The SDK's request context does not expose it yet (its own ``TODO(L54)`` context rework), so
    this reads the session's private field, in this one place; if the SDK moves it, per-session
    state degrades to per-request state instead of failing.
    """
    connection = getattr(ctx.session, "_connection", None)
    return connection if isinstance(connection, Connection) else None


def session_info_of(ctx: Ctx, state: SessionState | None, hook: SessionHook | None) -> SessionInfo:
    """The transport's SessionInfo for this request's session, refined by ``hook``."""
    token = _access_token(ctx)
    client = ctx.session.client_params
    attributes: dict[str, Any] = {"protocol_version": ctx.protocol_version}
    if client is not None:
        attributes["client_name"] = client.client_info.name
        attributes["client_version"] = client.client_info.version
    session_id = None
    if state is not None:
        session_id = state.connection.session_id or state.local_id
    info = SessionInfo(
        session_id=session_id,
        principal=(token.subject or token.client_id) if token is not None else None,
        client_id=token.client_id if token is not None else None,
        scopes=frozenset(token.scopes) if token is not None else frozenset(),
        claims=dict(token.claims or {}) if token is not None else {},
        attributes=attributes,
    )
    return hook(info) if hook is not None else info


def _access_token(ctx: Ctx) -> AccessToken | None:
    # The HTTP request that carried this message knows its authenticated user; the contextvar
    # covers transports that only set that.
    request = http_request_of(ctx)
    user = request.scope.get("user") if request is not None else None
    if isinstance(user, AuthenticatedUser):
        return user.access_token
    return get_access_token()


@final
class ServerGateway:
    """The :class:`~mcp_core.handlers.ClientGateway` of one request, over the SDK's request context.

    Everything it sends is tied to the request: log messages and progress ride the request's own
    stream (on streamable HTTP, the POST's SSE response), and log messages are sent on
    2026-07-28 only when the request opted in via ``_meta``. On 2026-07-28 a log message or
    progress report that an earlier round of the request already sent is not sent again.

    Questions to the client (``sample``, ``elicit``, ``elicit_url``, ``list_roots``) take the
    negotiated era's route with one code path for handlers: a standalone server-to-client request
    carrying the request's id as ``related_request_id`` on 2025-11-25 and earlier; on 2026-07-28,
    ``rounds`` (the request's :class:`~mcp_core.server._rounds.InputRounds`) answers from an
    earlier round or stops the handler and asks through an ``InputRequiredResult``. Each first
    checks that the client declared the capability, raising
    :class:`~mcp_core.errors.ClientCapabilityError` otherwise.
    """

    __slots__ = ("_ctx", "_levels", "_log_level", "_rounds", "_session")

    def __init__(
        self,
        ctx: Ctx,
        session: SessionInfo,
        *,
        log_level: LogLevel | None = None,
        rounds: InputRounds | None = None,
    ) -> None:
        self._ctx = ctx
        self._session = session
        self._rounds = rounds
        self._log_level = log_level
        self._levels: frozenset[str] | None = None  # worked out at the first log(): most never do

    def _passing(self) -> frozenset[str]:
        """The levels a log message may have to be sent: the session's threshold and the era's."""
        if self._levels is None:
            allowed = allowed_log_levels(self._ctx.protocol_version, self._ctx.meta)
            log_level = self._log_level
            threshold = LOG_LEVELS.index(log_level) if log_level is not None else 0
            self._levels = frozenset(level for level in LOG_LEVELS[threshold:] if level in allowed)
        return self._levels

    @property
    def session(self) -> SessionInfo:
        """Who is asking."""
        return self._session

    @property
    def request_id(self) -> str | int | None:
        """The JSON-RPC id of the current request."""
        return self._ctx.request_id

    @property
    def request_context(self) -> Ctx:
        """The SDK's request context this gateway answers for (the SDK's own API, for adapters)."""
        return self._ctx

    @property
    def element(self) -> Element:
        """The element being served (see :class:`~mcp_core.handlers.ClientGateway`)."""
        return serving_element()

    async def log(self, level: LogLevel, data: Any, *, logger: str | None = None) -> None:
        """Send ``notifications/message`` if ``level`` passes the session's threshold."""
        if level not in self._passing():
            return
        _check_sendable({"data": data, "logger": logger}, "gateway.log()")
        said = {"method": "notifications/message", "level": level, "data": data, "logger": logger}
        if self._rounds is not None and self._rounds.replayed(said):
            return  # an earlier round of this request sent it
        params = types.LoggingMessageNotificationParams(level=level, data=data, logger=logger)
        await self._ctx.session.send_notification(
            types.LoggingMessageNotification(params=params), related_request_id=self._ctx.request_id
        )

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress on the request's progress token (no-op when the client sent none)."""
        _check_sendable(
            {"progress": progress, "total": total, "message": message}, "gateway.progress()"
        )
        said = {"method": "notifications/progress", "progress": progress, "total": total}
        if self._rounds is not None and self._rounds.replayed({**said, "message": message}):
            return  # an earlier round of this request reported it
        await self._ctx.session.report_progress(progress, total, message)

    async def sample(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: Mapping[str, Any] | None = None,
        include_context: Literal["none", "thisServer", "allServers"] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Mapping[str, Any]:
        """Ask the client's model (``sampling/createMessage``); returns the result's wire shape."""
        optional = {
            "systemPrompt": system_prompt,
            "temperature": temperature,
            "stopSequences": list(stop_sequences) if stop_sequences is not None else None,
            "modelPreferences": dict(model_preferences) if model_preferences is not None else None,
            "includeContext": include_context,
            "metadata": dict(metadata) if metadata is not None else None,
        }
        wire: dict[str, Any] = {"messages": [dict(m) for m in messages], "maxTokens": max_tokens}
        wire.update({key: value for key, value in optional.items() if value is not None})
        _check_sendable(wire, "gateway.sample()")
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams.model_validate(wire, by_name=False)
        )
        self._require("sampling")
        return await self._ask(request, types.CreateMessageResult)

    async def elicit(self, message: str, requested_schema: Mapping[str, Any]) -> Mapping[str, Any]:
        """Ask the user to fill a form (``elicitation/create``, form mode): ``{"action", "content"?}``."""
        _check_sendable(
            {"message": message, "requestedSchema": requested_schema}, "gateway.elicit()"
        )
        params = types.ElicitRequestFormParams(
            message=message, requested_schema=dict(requested_schema)
        )
        self._require("elicitation.form")
        return await self._ask(types.ElicitRequest(params=params), types.ElicitResult)

    async def elicit_url(
        self, message: str, url: str, *, elicitation_id: str | None = None
    ) -> Mapping[str, Any]:
        """Send the user to ``url`` (``elicitation/create``, URL mode): ``{"action"}``.

        2025-11-25 requires an elicitation id (a fresh one is made when none is given); 2026-07-28
        has none, so ``elicitation_id`` is not sent there.
        """
        if self._modern:
            elicitation_id = None
        elif elicitation_id is None:
            elicitation_id = uuid.uuid4().hex
        params = types.ElicitRequestURLParams(
            message=message, url=url, elicitation_id=elicitation_id
        )
        self._require("elicitation.url")
        return await self._ask(types.ElicitRequest(params=params), types.ElicitResult)

    async def list_roots(self) -> Sequence[Mapping[str, Any]]:
        """The client's roots (``roots/list``), in wire shape."""
        self._require("roots")
        result = await self._ask(types.ListRootsRequest(), types.ListRootsResult)
        return cast("list[Mapping[str, Any]]", result.get("roots", []))

    async def close_sse_stream(self) -> bool:
        """Close the SSE stream carrying this request's response, so the client resumes it.

        Streamable HTTP only, with an event store and a client at protocol 2025-11-25 or later
        (SSE polling): the client reconnects after the advertised retry interval and receives
        what was sent meanwhile. Returns whether the stream was closed: not when there is none,
        nor while the server drains (ADR 0095), whose port no longer takes the reconnection.
        """
        close = self._ctx.close_sse_stream
        if close is None or _draining(self._ctx.lifespan_context):
            return False
        await close()
        return True

    @property
    def _modern(self) -> bool:
        return self._ctx.protocol_version in MODERN_PROTOCOL_VERSIONS

    async def _ask(
        self, request: types.InputRequest, result_type: type[types.Result]
    ) -> dict[str, Any]:
        if self._rounds is not None:
            return await self._rounds.ask(request)
        # Handshake era: a standalone request on the request's own stream. (On 2026-07-28 outside
        # tools/call, prompts/get and resources/read there are no rounds, and the SDK refuses.)
        result = await self._ctx.session.send_request(
            request,
            result_type,
            metadata=ServerMessageMetadata(related_request_id=self._ctx.request_id),
        )
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)

    def _require(self, capability: str) -> None:
        """Raise ClientCapabilityError unless the client declared ``capability``."""
        declared = self._ctx.session.client_capabilities
        elicitation = declared.elicitation if declared is not None else None
        if capability == "sampling":
            present = declared is not None and declared.sampling is not None
            required: dict[str, Any] = {"sampling": {}}
        elif capability == "roots":
            present = declared is not None and declared.roots is not None
            required = {"roots": {}}
        elif capability == "elicitation.url":
            present = elicitation is not None and elicitation.url is not None
            required = {"elicitation": {"url": {}}}
        else:
            # A bare `elicitation: {}` (from before modes existed) means form support.
            present = elicitation is not None and (
                elicitation.form is not None or elicitation.url is None
            )
            required = {"elicitation": {"form": {}}}
        if not present:
            raise ClientCapabilityError(
                f"the client did not declare the {capability} capability this request needs; "
                f"connect with a client that supports {capability}",
                capability=capability,
                required=required,
            )


def _check_sendable(value: object, call: str) -> None:
    # What a handler sends through the gateway is encoded later, by the transport's writer, where
    # a failure would end the connection: refuse it here, as the handler's own error.
    problem = unencodable(value)
    if problem is not None:
        raise ValueError(f"{call} was given something that cannot be sent as JSON: {problem}")


def _draining(hub: object) -> bool:
    """Whether the server behind a lifespan's hub is draining (stopping)."""
    return isinstance(hub, Draining) and hub.draining


def http_request_of(ctx: Ctx) -> HTTPConnection | None:
    """The HTTP request that carried this message (None over stdio or in memory)."""
    request = ctx.request
    return request if isinstance(request, HTTPConnection) else None
