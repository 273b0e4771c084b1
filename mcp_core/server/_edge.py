"""The HTTP edge: what one client may hold of a public endpoint, and for how long.

The SDK bounds a request body's size and the number of sessions in total. On a public endpoint
that still lets one client (one token, or one address without a token) take everything: open
every session slot and keep them busy, or start many request bodies and never finish them. Here
(ADR 0070):

- **Who a client is**: the principal of its verified bearer token, else its remote address. A
  ``X-Forwarded-For`` header is believed only from a configured trusted proxy (e.g. the
  documented HAProxy with ``option forwardfor``): its last entry not itself a trusted proxy.
- **Session slots** (:class:`SessionSlots`): at most ``max_sessions_per_client`` handshake-era
  sessions per client, as well as the SDK's ``max_sessions`` in total. A new session beyond
  either first reclaims the least recently used *idle* session (no request in flight) of that
  client, or of anyone when the total is reached; only when every such session is busy is it
  refused: ``429`` (the client's own limit) or ``503`` (the server's), each with
  ``Retry-After``. A reclaimed session's id then answers ``404``, so its client starts anew, as
  the protocol says.
- **Bodies** (:class:`HttpEdge`): a request body must arrive within ``body_timeout`` seconds
  (``408`` and the connection closed beyond) and the bodies of one client's requests in flight
  (being received or served) may hold at most ``max_client_body_bytes`` (``429`` beyond). What
  a stalled body pinned is released when its deadline passes.
- **Headers** (:func:`header_deadline`): a connection must deliver a request's complete headers
  within ``header_timeout`` seconds of opening (or of its previous answer); otherwise it is
  answered ``408`` and closed. That guard lives in the HTTP protocol itself (uvicorn offers no
  such timeout), so it applies where mcp-core runs uvicorn (``run_http``, ``mcp-core run``);
  an app mounted elsewhere relies on that server's (or the proxy's) header timeout.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import ipaddress
import json
import logging
import math
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, final

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import principal_components
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_HEADER_TIMEOUT",
    "DEFAULT_MAX_CLIENT_BODY_BYTES",
    "DEFAULT_MAX_SESSIONS_PER_CLIENT",
    "HttpEdge",
    "SessionSlots",
    "client_identity",
    "header_deadline",
]

_log = logging.getLogger("mcp_core.server")

DEFAULT_MAX_SESSIONS_PER_CLIENT: Final = 100
DEFAULT_BODY_TIMEOUT: Final = 30.0
DEFAULT_HEADER_TIMEOUT: Final = 10.0
DEFAULT_MAX_CLIENT_BODY_BYTES: Final = 16 * 1024 * 1024
"""Bytes of request bodies one client may have in flight at once (four full-size bodies)."""

# Seconds a refused client is told to wait: a busy session may end by then, a body finish.
_RETRY_SESSIONS: Final = 5
_RETRY_BODIES: Final = 1

_SESSION_HEADER: Final = b"mcp-session-id"
_VERSION_HEADER: Final = b"mcp-protocol-version"

CLIENT: Final[ContextVar[str | None]] = ContextVar("mcp_core.edge_client", default=None)
"""The identity of the client whose request is being served (set by :class:`HttpEdge`)."""
_TICKET: Final[ContextVar[_Ticket | None]] = ContextVar("mcp_core.edge_ticket", default=None)


def client_identity(scope: Scope, trusted_proxies: frozenset[str]) -> str:
    """Who sent this request: its token's principal, else its address (see the module doc)."""
    user = scope.get("user")
    if isinstance(user, AuthenticatedUser):
        principal = repr(principal_components(user.access_token)).encode()
        return "token:" + hashlib.sha256(principal).hexdigest()[:32]
    client = scope.get("client")
    address = str(client[0]) if client else "unknown"
    if address in trusted_proxies:
        forwarded = [
            value.decode("latin-1")
            for name, value in scope.get("headers", ())
            if name == b"x-forwarded-for"
        ]
        hops = [hop.strip() for value in forwarded for hop in value.split(",") if hop.strip()]
        for hop in reversed(hops):
            if hop not in trusted_proxies:
                address = hop
                break
    return "address:" + address[:64]


def trusted(proxies: Iterable[str]) -> frozenset[str]:
    """The trusted proxy addresses, checked: ValueError naming one that is not an IP address."""
    if isinstance(proxies, str):
        raise TypeError(
            f"trusted_proxies is a list of addresses, got the string {proxies!r}; write "
            f"[{proxies!r}]"
        )
    checked = set()
    for proxy in proxies:
        try:
            checked.add(str(ipaddress.ip_address(proxy)))
        except ValueError:
            raise ValueError(
                f"trusted_proxies: {proxy!r} is not an IP address; give the address the proxy "
                "connects from, e.g. 127.0.0.1"
            ) from None
    return frozenset(checked)


@dataclass(slots=True)
class _Ticket:
    """An admitted request's claim on a session slot, until its session opens or it ends."""

    client: str
    spent: bool = False


@dataclass(slots=True)
class _Slot:
    client: str
    busy: int = 0


@final
class SessionSlots:
    """Which client holds each open session, which sessions are idle, and who may open another.

    The session table (:func:`~mcp_core.server._events.bind_sessions`) calls :meth:`opened` and
    :meth:`closed`; :class:`HttpEdge` calls :meth:`admit` before a request may open a session and
    :meth:`using` around every request of one. ``reclaim(session_id)`` ends a session (set by
    the binding, which owns the SDK's session manager).
    """

    __slots__ = ("_held", "_lock", "_lru", "_per_client", "_reserved", "_total", "reclaim")

    def __init__(self, *, per_client: int | None, total: int | None) -> None:
        for name, value in (("max_sessions_per_client", per_client), ("max_sessions", total)):
            if value is not None and (isinstance(value, bool) or value <= 0):
                raise ValueError(f"{name} must be a positive number of sessions or None")
        self._per_client = per_client
        self._total = total
        # Open sessions, least recently used first.
        self._lru: OrderedDict[str, _Slot] = OrderedDict()
        # Admitted requests that have not opened their session yet, per client.
        self._reserved: dict[str, int] = {}
        # Open sessions per client.
        self._held: dict[str, int] = {}
        self._lock = anyio.Lock()
        self.reclaim: Callable[[str], Awaitable[None]] | None = None

    def __len__(self) -> int:
        return len(self._lru)

    def held_by(self, client: str) -> int:
        """How many sessions ``client`` holds (or is opening) now."""
        return self._held.get(client, 0) + self._reserved.get(client, 0)

    def opened(self, session_id: str) -> None:
        """A session was registered, by the request being served."""
        ticket = _TICKET.get()
        if ticket is not None and not ticket.spent:
            self._spend(ticket)
        client = ticket.client if ticket is not None else CLIENT.get() or "unknown"
        if session_id not in self._lru:
            self._held[client] = self._held.get(client, 0) + 1
        self._lru[session_id] = _Slot(client)

    def closed(self, session_id: str) -> None:
        """A session ended (DELETE, idle timeout, crash, reclaimed, shutdown)."""
        slot = self._lru.pop(session_id, None)
        if slot is not None:
            left = self._held[slot.client] - 1
            if left > 0:
                self._held[slot.client] = left
            else:
                del self._held[slot.client]

    @contextmanager
    def using(self, session_id: str) -> Iterator[None]:
        """Around one request of a session: it is busy, then the most recently used."""
        slot = self._lru.get(session_id)
        if slot is None:
            yield
            return
        slot.busy += 1
        self._lru.move_to_end(session_id)
        try:
            yield
        finally:
            slot.busy -= 1
            if session_id in self._lru:
                self._lru.move_to_end(session_id)

    async def admit(self, client: str) -> _Ticket | tuple[int, str]:
        """Make room for ``client`` to open a session: its ticket, or the (status, reason) refusing it.

        The ticket holds a slot until the session opens or the request ends (:meth:`holding`).
        """
        async with self._lock:
            if self._per_client is not None and self.held_by(client) >= self._per_client:
                victim = self._idle(client)
                if victim is None:
                    return 429, (
                        f"Too many open sessions for this client: it holds "
                        f"{self._per_client}, all busy; end one (DELETE) or retry later"
                    )
                await self._reclaim(victim, "its client opened another beyond its limit")
            open_now = len(self._lru) + sum(self._reserved.values())
            if self._total is not None and open_now >= self._total:
                victim = self._idle(None)
                if victim is None:
                    return 503, "Too many open sessions on this server, all busy; retry later"
                await self._reclaim(victim, "the server is at its session limit")
            self._reserved[client] = self._reserved.get(client, 0) + 1
        return _Ticket(client)

    @contextmanager
    def holding(self, ticket: _Ticket) -> Iterator[None]:
        """Around the admitted request: the session it opens spends ``ticket``; else it is freed."""
        token = _TICKET.set(ticket)
        try:
            yield
        finally:
            _TICKET.reset(token)
            if not ticket.spent:
                self._spend(ticket)

    def _spend(self, ticket: _Ticket) -> None:
        ticket.spent = True
        left = self._reserved.get(ticket.client, 0) - 1
        if left > 0:
            self._reserved[ticket.client] = left
        else:
            self._reserved.pop(ticket.client, None)

    def _idle(self, client: str | None) -> str | None:
        for session_id, slot in self._lru.items():
            if slot.busy == 0 and (client is None or slot.client == client):
                return session_id
        return None

    async def _reclaim(self, session_id: str, why: str) -> None:
        self.closed(session_id)
        _log.info("reclaiming idle session %s: %s", session_id[:16], why)
        if self.reclaim is not None:
            with anyio.CancelScope(shield=True):
                await self.reclaim(session_id)


@final
class _Budget:
    """Bytes of request bodies in flight, per client."""

    __slots__ = ("_held", "limit")

    def __init__(self, limit: int | None) -> None:
        if limit is not None and (isinstance(limit, bool) or limit <= 0):
            raise ValueError("max_client_body_bytes must be a positive number of bytes or None")
        self.limit = limit
        self._held: dict[str, int] = {}

    def take(self, client: str, size: int) -> bool:
        held = self._held.get(client, 0) + size
        if self.limit is not None and held > self.limit:
            return False
        self._held[client] = held
        return True

    def give_back(self, client: str, size: int) -> None:
        held = self._held.get(client, 0) - size
        if held > 0:
            self._held[client] = held
        else:
            self._held.pop(client, None)


@final
class HttpEdge:
    """ASGI wrapper of the MCP endpoint: client identity, session slots, body deadline and budget.

    ``slots`` is None for a stateless endpoint (no sessions to share out). ``requires_auth``:
    the endpoint behind is guarded by bearer authentication, so an unauthenticated request is
    passed straight on (to be refused there) without reading its body.
    """

    __slots__ = (
        "_app",
        "_body_timeout",
        "_budget",
        "_max_body",
        "_proxies",
        "_requires_auth",
        "_slots",
    )

    def __init__(
        self,
        app: ASGIApp,
        *,
        slots: SessionSlots | None,
        body_timeout: float | None,
        max_client_body_bytes: int | None,
        max_request_body_size: int,
        trusted_proxies: Iterable[str] = (),
        requires_auth: bool = False,
    ) -> None:
        if body_timeout is not None and not (math.isfinite(body_timeout) and body_timeout > 0):
            raise ValueError("body_timeout must be a positive, finite number of seconds or None")
        self._app = app
        self._slots = slots
        self._body_timeout = body_timeout
        self._budget = _Budget(max_client_body_bytes)
        self._max_body = max_request_body_size
        self._proxies = trusted(trusted_proxies)
        self._requires_auth = requires_auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        if self._requires_auth and not isinstance(scope.get("user"), AuthenticatedUser):
            await self._app(scope, receive, send)
            return
        client = client_identity(scope, self._proxies)
        token = CLIENT.set(client)
        try:
            await self._serve(client, scope, receive, send)
        finally:
            CLIENT.reset(token)

    async def _serve(self, client: str, scope: Scope, receive: Receive, send: Send) -> None:
        held = 0
        try:
            if scope.get("method") == "POST" and not self._declared_too_large(scope):
                read = await self._read_body(client, receive, send)
                if read is None:
                    return
                messages, held = read
                receive = _replaying(messages, receive)
            await self._sessions(client, scope, receive, send)
        finally:
            self._budget.give_back(client, held)

    def _declared_too_large(self, scope: Scope) -> bool:
        """Whether the body's declared length is over the limit (the SDK then answers 413 unread)."""
        declared = _header(scope, b"content-length")
        try:
            return declared is not None and int(declared) > self._max_body
        except ValueError:
            return False

    async def _sessions(self, client: str, scope: Scope, receive: Receive, send: Send) -> None:
        slots = self._slots
        if slots is None:
            await self._app(scope, receive, send)
            return
        session_id = _header(scope, _SESSION_HEADER)
        if session_id is not None:
            with slots.using(session_id.decode("latin-1")):
                await self._app(scope, receive, send)
            return
        version = _header(scope, _VERSION_HEADER)
        opens = scope.get("method") == "POST" and (
            version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS
        )
        if not opens:
            await self._app(scope, receive, send)
            return
        admitted = await slots.admit(client)
        if isinstance(admitted, tuple):
            status, reason = admitted
            _log.warning("refusing a new session (%d): %s [%s]", status, reason, client[:48])
            await _refuse(send, status, reason, _RETRY_SESSIONS, INTERNAL_ERROR)
            return
        with slots.holding(admitted):
            await self._app(scope, receive, send)

    async def _read_body(
        self, client: str, receive: Receive, send: Send
    ) -> tuple[list[Message], int] | None:
        """The request's body messages and the bytes they hold, or None once refused."""
        messages: list[Message] = []
        held = 0
        complete = False
        with anyio.move_on_after(self._body_timeout or math.inf):
            while not complete:
                message = await receive()
                messages.append(message)
                if message["type"] != "http.request":
                    complete = True  # a disconnect: the app behind sees it
                    break
                body = message.get("body", b"")
                if body:
                    if not self._budget.take(client, len(body)):
                        self._budget.give_back(client, held)
                        _log.warning(
                            "refusing a request body: its client has %d bytes of bodies in "
                            "flight [%s]",
                            self._budget.limit,
                            client[:48],
                        )
                        await _refuse(
                            send,
                            429,
                            "Too many request bodies in flight for this client; finish one "
                            "first, or retry later",
                            _RETRY_BODIES,
                            INVALID_REQUEST,
                            close=True,
                        )
                        return None
                    held += len(body)
                complete = not message.get("more_body", False)
                if held > self._max_body:
                    break  # the SDK's body limit answers 413 from what was read
        if complete or held > self._max_body:
            return messages, held
        self._budget.give_back(client, held)
        messages.clear()
        _log.warning(
            "a request body did not arrive within %ss: 408, connection closed [%s]",
            self._body_timeout,
            client[:48],
        )
        await _refuse(
            send,
            408,
            f"Request body not received within {self._body_timeout:g} seconds",
            None,
            INVALID_REQUEST,
            close=True,
        )
        return None


def _replaying(messages: list[Message], receive: Receive) -> Receive:
    """``receive`` giving ``messages`` first, each let go once given (they are taken over)."""
    messages.reverse()

    async def replay() -> Message:
        if messages:
            return messages.pop()
        return await receive()

    return replay


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value)
    return None


async def _refuse(
    send: Send,
    status: int,
    message: str,
    retry_after: int | None,
    code: int,
    *,
    close: bool = False,
) -> None:
    """Answer with a JSON-RPC error; ``close``: the body was not read, end the connection."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@functools.cache
def _deadline_protocol() -> type[asyncio.Protocol]:  # noqa: C901 -- one class, made on first use
    """The h11 protocol of uvicorn with a deadline on request headers (see :func:`header_deadline`).

    Made on first use: h11 and uvicorn's protocol are imported only by a server that serves HTTP.
    """
    import h11  # noqa: PLC0415
    from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: PLC0415

    class _HeaderDeadline(H11Protocol):
        header_timeout: float = DEFAULT_HEADER_TIMEOUT
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state is not h11.IDLE:
                self._disarm()  # this request's headers are in

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._arm()

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(self.header_timeout, self._expired)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _expired(self) -> None:
            self._header_timer = None
            if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
                return
            if self.cycle is None or self.cycle.response_complete:
                self.transport.write(
                    b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                )
            self.transport.close()

    return _HeaderDeadline


def header_deadline(timeout: float | None) -> type[asyncio.Protocol]:
    """The HTTP protocol for uvicorn: h11, closing a connection whose headers take over ``timeout``.

    The deadline runs from the connection's opening, and again from each answer on a kept-alive
    connection, until a request's headers are complete; then it is off until that request is
    answered (the body has its own deadline, see :class:`HttpEdge`). None: uvicorn's own h11
    protocol, without a deadline.
    """
    if timeout is None:
        from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: PLC0415 -- see above

        return H11Protocol
    if not (math.isfinite(timeout) and timeout > 0):
        raise ValueError("header_timeout must be a positive, finite number of seconds or None")
    return type("HeaderDeadline", (_deadline_protocol(),), {"header_timeout": timeout})
