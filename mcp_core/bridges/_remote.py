"""RemoteSource: a remote MCP server's elements, reached with the official client.

The remote is listed by walking every page of its lists; each element's handler forwards the call,
read, prompt get or completion to the remote, and relays what the remote sends back to the client
while it works — log messages, progress, sampling, elicitation and roots requests — through the
request's :class:`~mcp_core.handlers.ClientGateway`, so they reach the client that caused them.

Connections. Over streamable HTTP each forwarded request gets its own client session, whose
callbacks belong to that request alone (concurrent requests never see each other's relays). A
stdio server is one process and one session: forwarded requests take turns on it, so that what
the remote sends mid-request unambiguously belongs to the request in progress; a request waits
for its turn within its own timeout (a tool call's answer has what is left of ``call_timeout``).

Eras. In the default mode an HTTP (or in-process) remote is probed with ``server/discover`` and
spoken to at 2026-07-28 when it can; each forwarded request of a handshake-era client uses the
handshake when the remote accepts it, so what the remote asks mid-request is asked in the era the
client speaks. A stdio server is one session for every client, so it is spoken to in the era its
handshake gives (``initialize``), where each of its questions is a request that either era's
client can answer through the gateway; only a remote that refuses the handshake is spoken to at
2026-07-28.

Running. Outside :meth:`RemoteSource.running`, every ``provide()`` and every forwarded request
opens its own connection (a stdio server is started for each: correct, but slow). While running
(``App`` runs its sources for each server run), a background task keeps one connection to the
remote: it lists the remote when it connects, then follows its changes the way the remote's
capabilities offer — ``list_changed`` notifications (handshake era) or a ``subscriptions/listen``
stream (2026-07-28) for the kinds whose ``listChanged`` it declares, and a new listing every
``poll_interval`` seconds for the kinds it does not (or when it refuses to be listened to). It
checks the connection every ``health_interval`` seconds, and on failure reconnects with backoff.
``subscribe(listener)`` is told each time the catalogue changes, the remote goes down or comes
back, so the registry provides again.

Bounds. A remote costs the gateway only itself: a listing reads at most ``max_elements``
elements, ``max_bytes`` bytes and ``max_listing_time`` seconds, with a running budget across its
pages and kinds; past a bound it serves what it read, with a diagnostic saying which bound to
raise. No single message from an HTTP or stdio remote may exceed ``max_message_bytes`` (a larger
answer becomes an error for that request alone, unread; over stdio, for the request in progress):
the official client turns one message into models taking up to about 50 times its size while it
is read, so this bounds what one remote can make the process hold at once (``_metering``). The
elements are made from what was read a stretch at a time, with the event loop free between
stretches, and each element that cannot be made (too deep, an invalid name, schema or ``$ref``) is
skipped with one diagnostic line. The remote's ``list_changed`` notifications never make it list
more than about half the time: the next listing waits at least a second, and at least as long as
the last one took.

Optional features. Whatever the remote does not offer costs only that feature: a list method or
``subscriptions/listen`` it refuses (-32601, say) is skipped with a diagnostic naming the remote
and the method, and the connection stays up; an error answer to a health check still proves the
connection works.

Down. ``provide()`` raises :class:`~mcp_core.errors.SourceUnavailableError` while the remote is
unreachable (the registry keeps serving its last good catalogue and reports it unavailable), and a
forwarded request fails at once with a clear, retryable error instead of waiting on the network.
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, TypeVar, final

import anyio
import anyio.abc
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.session import ClientRequestContext, IncomingMessage
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import SubscriptionLost
from mcp.server import Server
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from mcp_core._stretches import pause
from mcp_core.bridges._common import Backend, SharedRun, bridged, wire_of
from mcp_core.bridges._metering import READABLE_DEPTH, Meter, Metered, metered_stdio
from mcp_core.elements import Element, ElementCollection, ElementKind, ElementRef
from mcp_core.elements._json import JsonValue
from mcp_core.errors import (
    ElementNotFoundError,
    InvalidElementError,
    SourceUnavailableError,
    ToolError,
)
from mcp_core.handlers import ClientGateway, EmbeddedResource, ToolResult
from mcp_core.handlers._wire import resource_contents_from_wire, tool_result_from_wire
from mcp_core.server._context import sample_through
from mcp_core.sources import ChangeListeners, SourceDiagnostic

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ELEMENTS",
    "DEFAULT_MAX_LISTING_TIME",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "RemoteSource",
]

_log = logging.getLogger("mcp_core.bridges")

_T = TypeVar("_T")
_C = TypeVar("_C")
ConnectMode = Literal["auto", "legacy", "2026-07-28"]

_KIND_CAPABILITY: Final = (
    (ElementKind.TOOL, "tools"),
    (ElementKind.RESOURCE | ElementKind.RESOURCE_TEMPLATE, "resources"),
    (ElementKind.PROMPT, "prompts"),
)
_LIST_CHANGED: Final = (
    types.ToolListChangedNotification,
    types.ResourceListChangedNotification,
    types.PromptListChangedNotification,
)
_RESOURCE_NOT_FOUND: Final = -32002  # MCP's code for resources/read of an unknown URI
_URL_ELICITATION_REQUIRED: Final = -32042  # MCP's code: the user must open a URL first
_SSE_READ_TIMEOUT: Final = 300.0  # seconds: a server may hold a response stream open this long
DEFAULT_MAX_ELEMENTS: Final = 10_000
DEFAULT_MAX_BYTES: Final = 16 * 1024 * 1024
DEFAULT_MAX_MESSAGE_BYTES: Final = 4 * 1024 * 1024
DEFAULT_MAX_LISTING_TIME: Final = 30.0
_STRETCH: Final = 256  # elements made between two checkpoints
_RELIST_GAP: Final = 1.0  # seconds at least between the end of a listing and the next
_TRANSPORT_ERRORS: Final = (
    OSError,
    TimeoutError,
    httpx2.HTTPError,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
)


class _Down(Exception):  # noqa: N818 -- internal signal, never escapes this module
    """The remote could not be reached; the message says why (for a diagnostic)."""


@final
@dataclass(slots=True, eq=False)
class _Relay:
    """The request a remote's messages belong to: where its logs and requests are relayed."""

    gateway: ClientGateway
    within: float | None = None  # the request's own timeout, in seconds
    deadline: float = field(init=False)  # (anyio.current_time) when it runs out

    def __post_init__(self) -> None:
        within = self.within
        self.deadline = math.inf if within is None else anyio.current_time() + within

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        await self.gateway.progress(progress, total, message)

    def left(self) -> float | None:
        """Seconds left of the request's own timeout (None: it has none)."""
        if self.deadline == math.inf:
            return None
        return max(0.001, self.deadline - anyio.current_time())


@final
@dataclass(slots=True, eq=False)
class _Status:
    """What the running source knows about its remote."""

    catalogue: ElementCollection | None = None
    down: str | None = None  # why it is unreachable, while it is
    protocol: str | None = None
    discover: types.DiscoverResult | None = None
    capabilities: types.ServerCapabilities | None = None
    tools: types.ListToolsResult | None = None  # the remote's tools as listed, for new sessions
    handshake: bool = True  # whether a 2026-07-28 remote may be spoken to with the handshake
    settled: anyio.Event = field(default_factory=anyio.Event)  # the first attempt ended
    next_listing: float = 0.0  # (time.monotonic) a listing on list_changed starts no sooner


@final
class RemoteSource:
    """The elements of a remote MCP server (see the module documentation).

    ``target`` is a streamable HTTP URL, ``StdioServerParameters``, or an SDK low-level
    ``Server`` in this process (reached through the official client's in-memory transport, as
    :class:`FastMCPSource` does); prefer the constructors :meth:`http` and :meth:`stdio`.
    Options:

    - ``name``: how errors and diagnostics name the remote (default: the URL's host or the
      command); messages sent to clients use this, never the address;
    - ``mode``: ``"auto"`` (the default: the 2026-07-28 protocol when the remote speaks it, else
      the handshake), ``"legacy"`` (2025-11-25) or ``"2026-07-28"``;
    - ``headers``: sent with every HTTP request (a service token, say);
    - ``timeout``: seconds allowed for connecting and for each list, read, prompt or completion
      request; ``call_timeout`` for each tool call (None: no limit);
    - ``poll_interval``: while running, seconds between listings of a remote that does not
      announce its changes (no ``listChanged`` capability, or ``subscriptions/listen``
      refused); None: never (such a remote's changes are seen when it reconnects);
    - ``health_interval``: seconds between connection checks while running (a request the
      remote answers; one unanswered within ``min(timeout, max(1, 4 * health_interval))``
      seconds marks it down, as does a forwarded request's own handshake unanswered within that
      bound); ``max_backoff``: the longest wait between reconnection attempts
      (it doubles from ``health_interval``, or one second if that is longer);
    - ``max_pages``: pages read per list before giving up on a remote that never ends one;
    - ``max_elements`` (10,000), ``max_bytes`` (16 MiB) and ``max_listing_time`` (30 s): what
      one listing may read in all (elements across every page and kind; bytes received) and
      how long it may take; past one, the elements read so far are served with a diagnostic;
      ``max_message_bytes`` (4 MiB): the largest message read from the remote (see the
      module docs);
    - ``kinds``: the kinds to take from the remote (default: all it has);
    - ``tags``: tags given to every element (``{"scope:weather"}`` with ``scoped_by_tag``
      makes the whole remote visible only to sessions with that scope).
    """

    __slots__ = (
        "_call_timeout",
        "_diagnostics",
        "_headers",
        "_health_interval",
        "_kinds",
        "_listeners",
        "_lock",
        "_max_backoff",
        "_max_bytes",
        "_max_elements",
        "_max_listing_time",
        "_max_message_bytes",
        "_max_pages",
        "_meter",
        "_mode",
        "_name",
        "_notes",
        "_pending",
        "_poll_interval",
        "_relay",
        "_run",
        "_shared",
        "_status",
        "_tags",
        "_target",
        "_timeout",
    )

    def __init__(
        self,
        target: str | StdioServerParameters | Server[Any],
        *,
        name: str | None = None,
        mode: ConnectMode = "auto",
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        call_timeout: float | None = 300.0,
        health_interval: float = 5.0,
        poll_interval: float | None = 60.0,
        max_backoff: float = 30.0,
        max_pages: int = 1000,
        max_elements: int = DEFAULT_MAX_ELEMENTS,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_listing_time: float = DEFAULT_MAX_LISTING_TIME,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        kinds: ElementKind = ElementKind.ALL,
        tags: Iterable[str] = (),
    ) -> None:
        if isinstance(target, str):
            if not target.startswith(("http://", "https://")):
                raise ValueError(
                    f"RemoteSource needs an http(s) URL or StdioServerParameters, got {target!r}; "
                    "use RemoteSource.stdio(command, args) for a local server"
                )
        elif not isinstance(target, StdioServerParameters | Server):
            raise TypeError(
                f"RemoteSource needs an http(s) URL, StdioServerParameters or an SDK Server, "
                f"got {type(target).__name__}"
            )
        _check_settings(
            seconds={
                "timeout": timeout,
                "health_interval": health_interval,
                "max_listing_time": max_listing_time,
            },
            optional_seconds={"call_timeout": call_timeout, "poll_interval": poll_interval},
            counts={
                "max_pages": max_pages,
                "max_elements": max_elements,
                "max_bytes": max_bytes,
                "max_message_bytes": max_message_bytes,
            },
        )
        if headers is not None and not isinstance(target, str):
            raise ValueError("RemoteSource headers apply to HTTP remotes only")
        self._target = target
        self._name = name or _default_name(target)
        self._mode = mode
        self._headers = dict(headers or {})
        self._timeout = timeout
        self._call_timeout = call_timeout
        self._health_interval = health_interval
        self._poll_interval = poll_interval
        self._max_backoff = max_backoff
        self._max_pages = max_pages
        self._max_elements = max_elements
        self._max_bytes = max_bytes
        self._max_listing_time = max_listing_time
        self._max_message_bytes = max_message_bytes
        self._meter = Meter(max_message_bytes)
        self._kinds = kinds
        self._tags = frozenset(tags)
        self._listeners = ChangeListeners()
        self._diagnostics: tuple[SourceDiagnostic, ...] = ()  # of the last listing
        self._notes: tuple[SourceDiagnostic, ...] = ()  # of the running connection
        self._status = _Status()
        self._run: SharedRun[None] = SharedRun(self._supervise)
        self._shared: Client | None = None  # the running stdio session, taken in turns
        self._relay: _Relay | None = None  # the request whose turn it is on that session
        self._lock = anyio.Lock()
        self._pending = anyio.Event()  # the remote said its lists changed: list it again

    @classmethod
    def http(cls, url: str, **options: Any) -> RemoteSource:
        """A remote served over streamable HTTP at ``url`` (options as for the class)."""
        return cls(url, **options)

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        **options: Any,
    ) -> RemoteSource:
        """A server started as ``command args...`` and spoken to over its stdin and stdout."""
        parameters = StdioServerParameters(
            command=command, args=list(args), env=dict(env) if env is not None else None, cwd=cwd
        )
        return cls(parameters, **options)

    def __repr__(self) -> str:
        return f"RemoteSource({self._name!r})"

    @property
    def name(self) -> str:
        """How messages name the remote."""
        return self._name

    @property
    def available(self) -> bool | None:
        """While running: whether the remote is reachable (None before the first attempt)."""
        if not self._run.running or not self._status.settled.is_set():
            return None
        return self._status.down is None

    # -- ElementSource -------------------------------------------------------------------------

    def kinds(self) -> ElementKind:
        """The declared kinds, narrowed to what the remote offers once that is known."""
        capabilities = self._status.capabilities
        if capabilities is None:
            return self._kinds
        offered = ElementKind.NONE
        for kinds, name in _KIND_CAPABILITY:
            if getattr(capabilities, name) is not None:
                offered |= kinds
        return self._kinds & offered

    def diagnostics(self) -> Sequence[SourceDiagnostic]:
        """What the last listing skipped, and what the running connection does without.

        Skipped: invalid definitions, endless or refused lists; done without: a refused
        ``subscriptions/listen`` (the remote is polled instead).
        """
        return self._diagnostics + self._notes

    def cache_inputs(self) -> Mapping[str, object]:
        """What identifies the remote (its address and the options that change the catalogue)."""
        target = self._target
        where: object
        if isinstance(target, Server):
            where = f"in-process:{target.name}"
        else:
            where = target if isinstance(target, str) else [target.command, *target.args]
        return {"target": where, "kinds": self._kinds.label, "tags": sorted(self._tags)}

    async def provide(self) -> ElementCollection:
        """The remote's elements: the running connection's catalogue, or a fresh listing.

        Raises:
            SourceUnavailableError: the remote cannot be reached (or could not, at the last try
                of the running connection).
        """
        status = self._status
        if self._run.running:
            with anyio.move_on_after(self._timeout + 1):
                await status.settled.wait()
            if status.down is not None or status.catalogue is None:
                raise self._unavailable(status.down or "still connecting")
            return status.catalogue
        try:
            async with self._connect(None) as client:
                return await self._list(client)
        except Exception as exc:  # a listing's failure may come wrapped in the client's groups
            if not _expected(exc):
                raise
            raise self._unavailable(_reason(exc)) from None

    def subscribe(self, listener: Callable[[ElementKind], object]) -> Callable[[], None]:
        """Call ``listener(kinds)`` when the catalogue changes or the remote goes down or returns."""
        return self._listeners.subscribe(listener)

    def running(self) -> AbstractAsyncContextManager[object]:
        """Keep a connection to the remote, listen for its changes, reconnect when it drops."""
        return self._run.enter()

    # -- connections ---------------------------------------------------------------------------

    def _unavailable(self, why: str) -> SourceUnavailableError:
        return SourceUnavailableError(
            f"the remote MCP server {self._name!r} is unavailable ({why}); retry later",
            source=self,
        )

    @asynccontextmanager
    async def _connect(self, relay: _Relay | None) -> AsyncIterator[Client]:
        """A connected client whose callbacks relay to ``relay`` (or to the request in turn).

        A request's own connection (``relay`` given) must complete its handshake within the
        check's bound, as a check must: a remote that froze since its last check held a call for
        the whole ``timeout``, past the call's own ``call_timeout``.

        Raises:
            _Down: the remote cannot be reached or did not complete the handshake.
        """
        status = self._status
        within = self._check_bound if relay is not None else None
        attempts = self._attempts(relay)
        current: Callable[[], _Relay | None] = (
            (lambda: relay) if relay is not None else (lambda: self._relay)
        )
        for index, (mode, prior) in enumerate(attempts):
            # The scope holds the whole connection (its tasks live in it); only the handshake has
            # a deadline.
            with anyio.CancelScope() as waited:
                if within is not None:
                    waited.deadline = anyio.current_time() + within
                async with AsyncExitStack() as stack:
                    try:
                        client = await self._open(stack, mode, prior, current, listen=relay is None)
                    except _Down:
                        if waited.cancel_called:
                            break  # silent, not refusing this era: no other era is tried
                        if index + 1 == len(attempts):
                            raise
                        status.handshake = False
                        continue
                    waited.deadline = math.inf
                    if (
                        self._mode in MODERN_PROTOCOL_VERSIONS
                        and client.protocol_version != self._mode
                    ):
                        raise _Down(f"it speaks {client.protocol_version}, not {self._mode}")
                    if relay is not None and status.tools is not None:
                        _know_tools(client, status.tools)
                    yield client
                    return
            break  # the handshake's deadline passed
        raise _Down(f"it did not answer a handshake within {within:g} s")

    def _attempts(self, relay: _Relay | None) -> list[tuple[str, types.DiscoverResult | None]]:
        """The eras to try connecting in, in turn, each with the discovery to adopt (if any)."""
        status = self._status
        # A pinned 2026-07-28 still probes (server/discover): adopting without it would leave the
        # remote's capabilities unknown. What was negotiated is checked once connected.
        attempts: list[tuple[str, types.DiscoverResult | None]] = [
            ("auto" if self._mode in MODERN_PROTOCOL_VERSIONS else self._mode, None)
        ]
        if self._mode == "auto" and isinstance(self._target, StdioServerParameters):
            # One session serves every client: the handshake's era, where the remote's questions
            # are requests either era's client can answer (2026-07-28 if it refuses the handshake).
            attempts.insert(0, ("legacy", None))
        elif relay is not None and status.protocol in MODERN_PROTOCOL_VERSIONS:
            # A per-request session of a remote known to speak 2026-07-28 adopts that version
            # without probing again. For a handshake-era client it first tries the handshake,
            # so that what the remote asks mid-request is asked the same way on both legs (a
            # remote that refuses it is not asked again).
            attempts = [(status.protocol, status.discover)]
            era = relay.gateway.session.attributes.get("protocol_version")
            if self._mode == "auto" and era in HANDSHAKE_PROTOCOL_VERSIONS and status.handshake:
                attempts.insert(0, ("legacy", None))
        return attempts

    async def _open(
        self,
        stack: AsyncExitStack,
        mode: str,
        prior: types.DiscoverResult | None,
        current: Callable[[], _Relay | None],
        *,
        listen: bool,
    ) -> Client:
        try:
            transport: Any
            if isinstance(self._target, Server):
                transport = self._target  # in process: the official client's in-memory path
            elif isinstance(self._target, str):
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(
                        # Bodies as sent: a bound on bytes received is a bound on what is held.
                        headers={**self._headers, "Accept-Encoding": "identity"},
                        timeout=httpx2.Timeout(self._timeout, read=_SSE_READ_TIMEOUT),
                        transport=Metered(httpx2.AsyncHTTPTransport(), self._meter),
                    )
                )
                transport = streamable_http_client(
                    self._target, http_client=http, max_sse_event_size=self._max_message_bytes
                )
            else:
                transport = metered_stdio(self._target, self._meter)
            return await stack.enter_async_context(
                Client(
                    transport,
                    mode=mode,
                    prior_discover=prior,
                    read_timeout_seconds=self._timeout,
                    sampling_callback=_relayed("sampling/createMessage", current, _sample),
                    elicitation_callback=_relayed("elicitation/create", current, _elicit),
                    list_roots_callback=_relayed("roots/list", current, _list_roots),
                    logging_callback=_logging(current),
                    log_level="debug",
                    message_handler=self._on_message if listen else None,
                    client_info=types.Implementation(name="mcp-core", version=""),
                    cache=None,
                )
            )
        except Exception as exc:  # any failure to connect means "down", with its reason
            raise _Down(_reason(exc)) from exc

    async def _forward(
        self,
        gateway: ClientGateway,
        request: Callable[[Client, _Relay], Awaitable[_T]],
        within: float | None,
    ) -> _T:
        """Run ``request`` on the remote for the request ``gateway`` answers.

        ``within`` is the request's own timeout (None: none). On a stdio session, where requests
        take turns, it bounds the wait for the turn too: a tool call's answer then has what is
        left of it (``_Relay.left``), any other request the session's ``timeout``.

        Raises:
            SourceUnavailableError: the remote is known to be down, or the connection failed.
            MCPError: the remote answered with an error (passed on as it is), or the request's
                turn on a stdio session did not come within its timeout (``REQUEST_TIMEOUT``).
        """
        status = self._status
        if self._run.running and status.down is not None:
            raise self._unavailable(status.down)  # fail fast: the supervisor is reconnecting
        relay = _Relay(gateway, within)
        try:
            try:
                if self._shared is not None:
                    async with self._turn(relay):
                        shared = self._shared  # the session of now: it may have been replaced
                        if status.down is not None or shared is None:  # while this one waited
                            raise self._unavailable(status.down or "the connection closed")
                        self._relay = relay
                        try:
                            return await request(shared, relay)
                        finally:
                            self._relay = None
                async with _closed_within(self._check_bound, self._connect(relay)) as client:
                    return await request(client, relay)
            except ExceptionGroup as group:
                # A transport's task group wraps what failed in it (a 2026-07-28 session opens
                # without a round trip, so a remote that died fails at the first request).
                raise _sole(group) from None
        except _Down as exc:
            self._went_down(str(exc))
            raise self._unavailable(str(exc)) from None
        except MCPError as exc:
            if exc.code != types.CONNECTION_CLOSED:
                raise
            self._went_down("the connection closed")
            raise self._unavailable("the connection closed") from None
        except _TRANSPORT_ERRORS as exc:
            self._went_down(_reason(exc))
            raise self._unavailable(_reason(exc)) from None

    @asynccontextmanager
    async def _turn(self, relay: _Relay) -> AsyncIterator[None]:
        """The stdio session's turn, waited for within the request's own timeout (if it has one).

        Raises:
            MCPError: ``REQUEST_TIMEOUT``, the turn did not come in time (the session is busy
                with other requests: the remote is not down for it).
        """
        with anyio.move_on_after(relay.deadline - anyio.current_time()) as waiting:
            await self._lock.acquire()
        if waiting.cancelled_caught:
            raise MCPError(
                types.REQUEST_TIMEOUT,
                f"its one session was busy with other requests for {relay.within:g} s, this "
                "request's timeout, before its turn came",
            )
        try:
            yield
        finally:
            self._lock.release()

    # -- listing -------------------------------------------------------------------------------

    async def _list(self, client: Client) -> ElementCollection:
        """The remote's elements, every page of every list walked within the listing's bounds.

        Raises:
            _Down: a page could not be read (the remote's error, or a message over
                ``max_message_bytes``).
        """
        capabilities = client.server_capabilities
        self._status.capabilities = capabilities
        notes: list[SourceDiagnostic] = []
        wanted = self.kinds()
        backend = Backend(
            source=self,
            call=_call,
            read=_read,
            get=_get,
            complete=_complete if capabilities.completions is not None else None,
        )
        lists: tuple[tuple[ElementKind, str, Callable[..., Awaitable[Any]], object], ...] = (
            (ElementKind.TOOL, "tools", client.list_tools, capabilities.tools),
            (ElementKind.RESOURCE, "resources", client.list_resources, capabilities.resources),
            (
                ElementKind.RESOURCE_TEMPLATE,
                "resource_templates",
                client.list_resource_templates,
                capabilities.resources,
            ),
            (ElementKind.PROMPT, "prompts", client.list_prompts, capabilities.prompts),
        )
        budget = _Budget(self._max_elements, self._meter)
        listed: list[tuple[ElementKind, list[Any]]] = []
        with anyio.move_on_after(self._max_listing_time) as clock:
            for kind, key, fetch, offered in lists:
                if not wanted & kind or offered is None or budget.spent:
                    continue
                models: list[Any] = []
                listed.append((kind, models))
                await self._walk(fetch, key, models, budget, notes)
        if clock.cancelled_caught:
            notes.append(
                self._note(
                    "skipped",
                    f"its listing did not finish within {self._max_listing_time:g} s; serving "
                    f"the {budget.taken} elements read by then (raise max_listing_time if the "
                    "remote is that slow)",
                )
            )
        found: dict[ElementRef, Element] = {}
        schemas: dict[str, JsonValue] = {}  # equal schemas held once (see bridged)
        made = 0
        for kind, models in listed:
            if kind is ElementKind.TOOL:
                self._status.tools = types.ListToolsResult(tools=models)
            for model in models:
                note = _admit(found, kind, model, backend, self._tags, schemas=schemas)
                if note is not None:
                    notes.append(self._note("skipped", *note))
                made += 1
                if made % _STRETCH == 0:  # requests are served between stretches
                    await pause(cancellable=True)
        self._diagnostics = tuple(notes)
        return ElementCollection(found.values())

    async def _walk(
        self,
        fetch: Callable[..., Awaitable[Any]],
        key: str,
        items: list[Any],
        budget: _Budget,
        notes: list[SourceDiagnostic],
    ) -> None:
        """Read the pages of one list into ``items`` until it ends or a bound is reached."""
        cursor: str | None = None
        what = key.replace("_", " ")
        for _ in range(self._max_pages):
            try:
                page = await self._page(fetch, cursor, what)
            except MCPError as exc:  # the remote's own refusal: it costs only this list
                method = f"{key.replace('resource_templates', 'resources/templates')}/list"
                notes.append(self._note("skipped", _refusal(method, exc, "serving none")))
                return
            if self._meter.dropped:
                dropped, self._meter.dropped = self._meter.dropped, 0
                notes.append(
                    self._note(
                        "skipped",
                        f"{dropped} elements of its {what} list nest JSON more than "
                        f"{READABLE_DEPTH} levels deep, too deep to be read; skipped",
                    )
                )
            listed = getattr(page, key)
            room = budget.take(len(listed))
            items.extend(listed if room == len(listed) else listed[:room])
            if room < len(listed):
                notes.append(
                    self._note(
                        "skipped",
                        f"it lists more than max_elements={self._max_elements} elements; "
                        f"serving the first {budget.taken} (raise max_elements if the remote "
                        "is that large)",
                    )
                )
                return
            if budget.received > self._max_bytes:
                budget.spent = True
                notes.append(
                    self._note(
                        "skipped",
                        f"its listing took more than max_bytes={self._max_bytes} bytes; serving "
                        f"the {budget.taken} elements of the pages read by then (raise "
                        "max_bytes if the remote is that large)",
                    )
                )
                return
            cursor = page.next_cursor
            if cursor is None:
                return
        notes.append(
            self._note(
                "skipped",
                f"its {what} list did not end after {self._max_pages} pages; "
                f"serving the first {len(items)} (raise max_pages if the remote is that large)",
            )
        )

    async def _page(
        self, fetch: Callable[..., Awaitable[Any]], cursor: str | None, what: str
    ) -> Any:
        """One page of a list (asked for again, its too-deep elements left out, if need be).

        The official client parses a message whole: one element nested deeper than its JSON
        parser allows (about 200 levels) makes the whole page unreadable. Once a remote has sent
        such a page, its answers are read here first and such elements left out
        (each skipped with a diagnostic), so the others are served.
        """
        meter = self._meter
        meter.refused = False  # of this page (a call's answer refused before is not its)
        try:
            return await fetch(cursor=cursor, cache_mode="bypass")
        except MCPError as exc:
            if exc.code == types.PARSE_ERROR and not meter.deep and "recursion" in str(exc):
                pass  # too deep for the client's parser: asked again below, mended
            elif meter.refused or exc.code == types.PARSE_ERROR or not _refused(exc):
                raise _Down(self._page_failed(what, exc)) from None
            else:
                raise  # the remote's own answer: a list it does not serve costs only that list
        meter.deep = True
        try:
            return await fetch(cursor=cursor, cache_mode="bypass")
        except MCPError as exc:
            raise _Down(self._page_failed(what, exc)) from None

    def _page_failed(self, what: str, exc: MCPError) -> str:
        """Why a page of the ``what`` list could not be read (for the diagnostic)."""
        if self._meter.refused:
            self._meter.refused = False
            return (
                f"a page of its {what} list is larger than max_message_bytes="
                f"{self._max_message_bytes} bytes (raise max_message_bytes if the remote's "
                "pages are that large)"
            )
        return f"reading its {what} list failed: {_reason(exc)}"

    def _note(
        self, kind: Literal["skipped", "stale"], message: str, ref: ElementRef | None = None
    ) -> SourceDiagnostic:
        diagnostic = SourceDiagnostic(source=repr(self), kind=kind, message=message, ref=ref)
        _log.warning("%s", diagnostic)
        return diagnostic

    # -- running -------------------------------------------------------------------------------

    @asynccontextmanager
    async def _supervise(self) -> AsyncIterator[None]:
        self._status = _Status()
        self._pending = anyio.Event()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._keep_connected)
            try:
                yield
            finally:
                tasks.cancel_scope.cancel()
                self._shared = None

    async def _keep_connected(self) -> None:
        first = min(1.0, self._health_interval)  # reconnecting is no slower than checking
        backoff = first
        status = self._status
        while True:
            handled = False
            try:
                async with _closed_within(self._check_bound, self._connect(None)) as client:
                    try:
                        self._notes = ()
                        status.protocol = client.protocol_version
                        status.discover = client.session.discover_result
                        await self._refresh(client)
                        if isinstance(self._target, StdioServerParameters):
                            self._shared = client
                        backoff = first
                        await self._watch(client)
                    except Exception as exc:
                        handled = True  # said down at once: the close may wait on the remote
                        self._lost(exc)
                        raise
            except Exception as exc:  # noqa: BLE001 -- the supervisor outlives any failure
                if not handled:
                    self._lost(exc)
            finally:
                self._shared = None
            _log.info("%r: connecting again in %g s", self, backoff)
            await anyio.sleep(backoff)
            backoff = min(backoff * 2, self._max_backoff)

    def _lost(self, exc: Exception) -> None:
        """The connection failed with ``exc``: down, with the reason (an unexpected one logged)."""
        if not _expected(exc):  # what the remote did is said in one line, by _went_down
            _log.error("%r: the connection failed unexpectedly", self, exc_info=exc)
        self._went_down(_reason(exc))

    async def _refresh(self, client: Client) -> None:
        status = self._status
        wait = status.next_listing - time.monotonic()
        if wait > 0:  # a storm of list_changed lists again at most about half the time
            await anyio.sleep(wait)
        began = time.monotonic()
        try:
            catalogue = await self._list(client)
        finally:
            ended = time.monotonic()
            status.next_listing = ended + max(_RELIST_GAP, ended - began)
        changed = status.down is not None or catalogue != status.catalogue
        status.catalogue, status.down = catalogue, None
        status.settled.set()
        if changed:
            self._listeners.announce(self.kinds())

    async def _watch(self, client: Client) -> None:
        """Until the connection fails: check it periodically, list again on the remote's changes.

        Changes are followed as the remote's capabilities offer (see the module documentation).
        A check that does not answer within ``min(timeout, max(1, 4 * health_interval))`` seconds
        counts as a lost connection (a request to a server that died may otherwise wait for its
        whole read timeout).
        """
        bound = self._check_bound
        announced, silent = self._announcing(client.server_capabilities)
        async with anyio.create_task_group() as tasks:
            if silent:
                _log.info(
                    "%r does not announce changes to its %s; %s",
                    self,
                    " and ".join(sorted(silent)),
                    self._polling_phrase(),
                )
                tasks.start_soon(self._poll)
            if announced and client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                tasks.start_soon(self._listen, client, announced, bool(silent))
            while True:
                with anyio.move_on_after(self._health_interval):
                    await self._pending.wait()
                # The check takes its turn with the requests forwarded on a stdio session: a
                # remote busy with a long call may not answer a ping in time, but one that froze
                # must be found even while requests keep coming (each waited for its turn and
                # then its call_timeout, and the remote was never checked).
                async with self._lock:
                    try:
                        with anyio.fail_after(bound):
                            await _check(client)
                    except TimeoutError:
                        why = f"it did not answer a check within {bound:g} s"
                        self._went_down(why)  # before the next request takes its turn
                        raise _Down(why) from None
                if self._pending.is_set() or self._status.down is not None:
                    # The remote changed, or a forwarded request failed while this connection
                    # works: list again (which also clears "down").
                    self._pending = anyio.Event()
                    await self._refresh(client)

    @property
    def _check_bound(self) -> float:
        """Seconds a connection check (or closing a connection) may take before it has failed."""
        return min(self._timeout, max(1.0, 4 * self._health_interval))

    def _announcing(self, capabilities: types.ServerCapabilities) -> tuple[set[str], set[str]]:
        """The lists (of those taken) whose changes the remote announces, and those it does not."""
        announced: set[str] = set()
        silent: set[str] = set()
        for kinds, name in _KIND_CAPABILITY:
            offered = getattr(capabilities, name)
            if offered is None or not self._kinds & kinds:
                continue
            (announced if offered.list_changed else silent).add(name)
        return announced, silent

    async def _listen(self, client: Client, announced: set[str], polled: bool) -> None:
        """List again on each change the ``subscriptions/listen`` stream announces.

        Only the lists the remote declares ``listChanged`` for are asked (the others are polled).
        A remote that refuses to be listened to is polled instead, and stays connected; so is
        one that ends the stream gracefully; a stream cut without the remote's close counts as a
        lost connection, and is reconnected.
        """
        try:
            async with client.listen(
                tools_list_changed="tools" in announced,
                prompts_list_changed="prompts" in announced,
                resources_list_changed="resources" in announced,
            ) as subscription:
                async for _ in subscription:
                    self._pending.set()
        except SubscriptionLost:
            # Ended without the remote's close: the connection is checked again from scratch.
            raise _Down("its subscriptions/listen stream was cut") from None
        except MCPError as exc:
            if not _refused(exc):
                raise
            how = self._polling_phrase()
            self._notes += (self._note("skipped", _refusal("subscriptions/listen", exc, how)),)
        else:
            _log.info("%r ended its subscriptions/listen stream; %s", self, self._polling_phrase())
        if not polled:
            await self._poll()

    def _polling_phrase(self) -> str:
        if self._poll_interval is None:
            return "its changes are seen when it reconnects (poll_interval=None)"
        return f"listing it again every {self._poll_interval:g} s"

    async def _poll(self) -> None:
        """List the remote again every ``poll_interval`` seconds (never, when that is None)."""
        interval = self._poll_interval
        if interval is None:
            return
        while True:
            await anyio.sleep(interval)
            self._pending.set()

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, _LIST_CHANGED):
            self._pending.set()
        await anyio.lowlevel.checkpoint()

    def _went_down(self, why: str) -> None:
        status = self._status
        was_up = status.down is None and status.settled.is_set()
        status.down = why
        status.settled.set()
        if was_up:
            _log.warning("%r went down: %s", self, why)
            self._listeners.announce(self.kinds())


@final
@dataclass(slots=True, eq=False)
class _Budget:
    """What one listing may still read: elements left, and bytes received since it began."""

    elements: int
    meter: Meter
    taken: int = 0
    spent: bool = False
    start: int = field(init=False)

    def __post_init__(self) -> None:
        self.start = self.meter.received

    @property
    def received(self) -> int:
        """Bytes received from the remote since the listing began."""
        return self.meter.received - self.start

    def take(self, count: int) -> int:
        """Take up to ``count`` elements; how many there was room for."""
        room = min(count, self.elements - self.taken)
        self.taken += room
        self.spent = self.spent or room < count
        return room


def _admit(
    found: dict[ElementRef, Element],
    kind: ElementKind,
    model: Any,
    backend: Backend,
    tags: frozenset[str],
    *,
    schemas: dict[str, JsonValue] | None = None,
) -> tuple[str, ElementRef | None] | None:
    """Add the remote's ``model`` to ``found``; or why it was skipped (and which element)."""
    try:
        element = bridged(kind, model, backend, tags, schemas=schemas)
    except InvalidElementError as exc:
        key = getattr(model, "name", None) or getattr(model, "uri_template", None)
        key = str(key or getattr(model, "uri", ""))
        named = f"{key[:80]!r}{'...' if len(key) > 80 else ''}"  # noqa: PLR2004 -- a log line's share
        return f"remote {kind.label} {named} skipped: {_clipped(str(exc))}", None
    if element.ref in found:
        return "listed twice by the remote; the first kept", element.ref
    found[element.ref] = element
    return None


# -- handlers -------------------------------------------------------------------------------------


async def _call(
    source: RemoteSource, name: str, arguments: Mapping[str, Any], gateway: ClientGateway
) -> ToolResult:
    """``tools/call`` forwarded (progress relayed by the call's token)."""

    async def call(client: Client, relay: _Relay) -> types.CallToolResult:
        return await client.call_tool(
            name,
            dict(arguments),
            read_timeout_seconds=relay.left(),  # what is left of call_timeout after its turn
            progress_callback=relay.progress,
        )

    try:
        result = await source._forward(gateway, call, source._call_timeout)  # noqa: SLF001 -- the source's own path and option
    except SourceUnavailableError as exc:  # for the model to read: retry later
        raise ToolError(str(exc)) from exc
    except MCPError as exc:
        if exc.code == _URL_ELICITATION_REQUIRED:
            raise  # the URL the user must open: the client's answer, as the remote gave it
        # The remote refused the call, or did not answer it in time: say so, as a tool error.
        said = "did not answer" if exc.code == types.REQUEST_TIMEOUT else "answered"
        raise ToolError(f"the remote MCP server {source.name!r} {said}: {exc}") from exc
    return tool_result_from_wire(_own_leg(result))


async def _read(
    source: RemoteSource, original: str, requested: str, gateway: ClientGateway
) -> list[EmbeddedResource]:
    """``resources/read`` forwarded."""

    async def read(client: Client, _relay: _Relay) -> types.ReadResourceResult:
        return await client.read_resource(original, cache_mode="bypass")

    try:
        result = await source._forward(gateway, read, source._timeout)  # noqa: SLF001 -- the source's own path and option
    except MCPError as exc:
        if exc.code in (_RESOURCE_NOT_FOUND, types.INVALID_PARAMS):
            ref = ElementRef(ElementKind.RESOURCE, requested)
            raise ElementNotFoundError(f"{ref} not found on the remote", ref=ref) from exc
        raise
    # The contents of the URI asked for carry the URI the client knows (it may be renamed).
    return [
        resource_contents_from_wire(item, uri=requested if item.get("uri") == original else None)
        for item in map(wire_of, result.contents)
    ]


async def _get(
    source: RemoteSource, name: str, arguments: Mapping[str, str], gateway: ClientGateway
) -> list[dict[str, Any]]:
    """``prompts/get`` forwarded."""

    async def get(client: Client, _relay: _Relay) -> types.GetPromptResult:
        return await client.get_prompt(name, dict(arguments))

    result = await source._forward(gateway, get, source._timeout)  # noqa: SLF001 -- the source's own path and option
    messages: list[dict[str, Any]] = _own_leg(result).get("messages", [])
    return messages


async def _complete(
    source: RemoteSource, params: types.CompleteRequestParams, gateway: ClientGateway
) -> list[str]:
    """``completion/complete`` forwarded."""
    context = params.context.arguments if params.context is not None else None

    async def complete(client: Client, _relay: _Relay) -> types.CompleteResult:
        argument = {"name": params.argument.name, "value": params.argument.value}
        return await client.complete(params.ref, argument, context)

    result = await source._forward(gateway, complete, source._timeout)  # noqa: SLF001 -- the source's own path and option
    return list(result.completion.values)


# -- relaying the remote's requests and notifications ---------------------------------------------


_NO_REQUEST: Final = types.ErrorData(
    code=types.INVALID_REQUEST,
    message="no client request is in progress to relay this to",
)


def _relayed(
    what: str, current: Callable[[], _Relay | None], answer: Callable[..., Awaitable[Any]]
) -> Any:
    """The official client's callback for the remote's request ``what``: ``answer(gateway, ...)``.

    The gateway is the one of the client request in progress; with none, or when the client fails
    to answer, the remote gets an error saying so (and never a traceback of ours).
    """

    async def callback(_context: ClientRequestContext, *params: Any) -> Any:
        relay = current()
        if relay is None:
            return _NO_REQUEST
        try:
            return await answer(relay.gateway, *params)
        except Exception as exc:  # noqa: BLE001 -- the remote is told the client could not answer
            _log.info("relaying %s to the client failed: %r", what, exc)
            message = f"the client could not answer {what}"
            return types.ErrorData(code=types.INTERNAL_ERROR, message=message)

    return callback


async def _sample(
    gateway: ClientGateway, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    answer = await sample_through(gateway, params)
    return types.CreateMessageResult.model_validate(dict(answer), by_name=False)


async def _elicit(gateway: ClientGateway, params: types.ElicitRequestParams) -> types.ElicitResult:
    if isinstance(params, types.ElicitRequestURLParams):
        answer = await gateway.elicit_url(
            params.message, params.url, elicitation_id=params.elicitation_id
        )
    else:
        answer = await gateway.elicit(params.message, params.requested_schema)
    return types.ElicitResult.model_validate(dict(answer), by_name=False)


async def _list_roots(gateway: ClientGateway) -> types.ListRootsResult:
    found = await gateway.list_roots()
    return types.ListRootsResult.model_validate({"roots": list(found)}, by_name=False)


def _logging(current: Callable[[], _Relay | None]) -> Any:
    async def logging_callback(params: types.LoggingMessageNotificationParams) -> None:
        relay = current()
        if relay is not None:
            await relay.gateway.log(params.level, params.data, logger=params.logger)

    return logging_callback


def _own_leg(result: types.Result) -> dict[str, Any]:
    """A remote's result in wire shape, without what describes only its own protocol leg.

    Keys of ``_meta`` under ``io.modelcontextprotocol/`` (the remote's server-info stamp, say)
    describe the connection to the remote; the gateway's client gets the gateway's own.
    """
    wire = wire_of(result)
    meta = wire.pop("_meta", None)
    if isinstance(meta, dict):
        kept = {k: v for k, v in meta.items() if not k.startswith("io.modelcontextprotocol/")}
        if kept:
            wire["_meta"] = kept
    return wire


# -- small helpers --------------------------------------------------------------------------------


def _know_tools(client: Client, tools: types.ListToolsResult) -> None:
    """Tell a new session the remote's tools, as a listing would.

    The client checks each result against the tool's output schema (and, at 2026-07-28, mirrors
    argument headers), for which it lists the remote's tools first; a per-request session is told
    them instead of asking again. The SDK keeps that state behind a private method: when it is
    gone, the session simply lists for itself.
    """
    absorb = getattr(client.session, "_absorb_tool_listing", None)
    if callable(absorb):
        absorb(tools.model_copy(deep=True), complete=False)


def _check_settings(
    *,
    seconds: Mapping[str, float],
    optional_seconds: Mapping[str, float | None],
    counts: Mapping[str, int],
) -> None:
    """Refuse a setting out of its range, naming it (a ValueError)."""
    for label, value in seconds.items():
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"RemoteSource {label} must be a positive number of seconds")
    for label, optional in optional_seconds.items():
        if optional is not None and not (math.isfinite(optional) and optional > 0):
            raise ValueError(
                f"RemoteSource {label} must be a positive number of seconds or None, "
                f"got {optional!r}"
            )
    for label, count in counts.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"RemoteSource {label} must be at least 1, got {count!r}")


async def _check(client: Client) -> None:
    """One cheap request proving the connection works (raises when it does not).

    Any answer proves it, an error too (a remote that refuses ``ping`` still answers).
    """
    try:
        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
            # A request on the wire: the session's discover() answers from what it adopted.
            await client.session.send_discover(client.protocol_version)
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)  # ping is handshake-era only
            await client.send_ping()
    except MCPError as exc:
        if not _refused(exc):
            raise


@asynccontextmanager
async def _closed_within(
    seconds: float, connection: AbstractAsyncContextManager[_C]
) -> AsyncIterator[_C]:
    """``connection``, whose closing may take at most ``seconds`` once the block has ended.

    Closing talks to the remote (a request's cancellation, a handshake-era session's end): one
    that stopped answering must not hold what the block already has, an answer or the failure
    to report (a forwarded call waited its read timeout, minutes, past its ``call_timeout``).
    A close cut short still raises what the block raised.
    """
    raised: BaseException | None = None
    with anyio.CancelScope() as closing:
        async with connection as value:
            try:
                yield value
            except BaseException as exc:
                raised = exc
                raise
            finally:
                closing.deadline = anyio.current_time() + seconds
    if raised is not None and closing.cancelled_caught:
        raise raised


def _sole(group: ExceptionGroup[Exception]) -> Exception:
    """What failed in ``group``.

    Its one leaf; a lost connection when every leaf is a transport failure; else the group.
    """
    leaves: list[Exception] = []
    pending: list[Exception] = [group]
    while pending:
        exc = pending.pop()
        if isinstance(exc, ExceptionGroup):
            pending.extend(exc.exceptions)
        else:
            leaves.append(exc)
    if len(leaves) == 1:
        return leaves[0]
    if all(isinstance(leaf, _TRANSPORT_ERRORS) for leaf in leaves):
        return _Down(_reason(group))
    return group


def _refused(exc: MCPError) -> bool:
    """Whether the remote answered ``exc`` itself (rather than the connection failing)."""
    return exc.code not in (types.CONNECTION_CLOSED, types.REQUEST_TIMEOUT)


def _refusal(method: str, exc: MCPError, instead: str) -> str:
    return f"the remote refused {method} (error {exc.code}: {exc}); {instead}"


def _clipped(text: str, limit: int = 400) -> str:
    """``text``, cut to ``limit`` characters: a remote's values may be of any size."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _expected(exc: BaseException) -> bool:
    """Whether ``exc`` (or every exception in its group) is a way a remote can fail us."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_expected(inner) for inner in exc.exceptions)
    return isinstance(exc, (_Down, MCPError, *_TRANSPORT_ERRORS))


def _reason(exc: BaseException) -> str:
    """A short, address-free account of a connection failure."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_reason(inner) for inner in exc.exceptions)
    if isinstance(exc, _Down):
        return str(exc)
    if isinstance(exc, MCPError):
        return f"error {exc.code}: {exc}"
    for kinds, reason in _REASONS:
        if isinstance(exc, kinds):
            return reason
    if isinstance(exc, OSError):
        return f"{type(exc).__name__}: {exc.strerror or exc}"
    return type(exc).__name__


_REASONS: Final[tuple[tuple[tuple[type[BaseException], ...], str], ...]] = (
    ((httpx2.ConnectError, ConnectionError), "connection refused"),
    ((httpx2.TimeoutException, TimeoutError), "timed out"),
    (
        (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream),
        "the connection closed",
    ),
)


def _default_name(target: str | StdioServerParameters | Server[Any]) -> str:
    if isinstance(target, Server):
        return target.name
    if isinstance(target, str):
        return httpx2.URL(target).host or target
    command = Path(target.command).name
    if command.startswith(("python", "node", "npx", "uvx")):
        # What the launcher runs: its first argument that is not an option (a script, a module
        # after -m, a package).
        launched = next((arg for arg in target.args if not arg.startswith("-")), None)
        if launched is not None:
            return Path(launched).stem
    return command
