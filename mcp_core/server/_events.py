"""Event streams that belong to sessions: how a streamable HTTP client resumes its own SSE streams.

The SDK's ``EventStore`` interface sees a stream id and a message, never a session: the stream
ids are JSON-RPC request ids (``"1"`` in every session) and one store serves every session of a
process. Keyed that way, one session could resume another's stream and read its results. Here a
store is told whose stream it is (:class:`SessionEventStore`), and the server hands each SDK
transport a view bound to its own session (:func:`bind_sessions`), so ownership is decided in one
place for every store: a replay only ever looks inside the session that asks.
"""

from __future__ import annotations

import logging
import math
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Protocol, final, runtime_checkable

from mcp.server.streamable_http import (
    EventCallback,
    EventId,
    EventMessage,
    EventStore,
    StreamableHTTPServerTransport,
    StreamId,
)
from mcp_types import JSONRPCMessage, jsonrpc_message_adapter

from mcp_core.server._responses import DeferredResponses, ResumableStreams

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from mcp_core.server._edge import SessionSlots

__all__ = [
    "DEFAULT_EVENT_MAX_AGE",
    "DEFAULT_EVENT_MAX_BYTES",
    "DEFAULT_EVENT_MAX_EVENTS",
    "InMemoryEventStore",
    "RetainedBytes",
    "SessionEventStore",
    "bind_sessions",
]

_log = logging.getLogger("mcp_core.server")

DEFAULT_EVENT_MAX_EVENTS: Final = 10_000
DEFAULT_EVENT_MAX_BYTES: Final = 32 * 1024 * 1024
DEFAULT_EVENT_MAX_AGE: Final = 600.0
"""Seconds an event stays replayable: far longer than a reconnect, far shorter than a session."""

# What one retained event costs besides its JSON: its id, its record, the indexes that find it.
_EVENT_OVERHEAD: Final = 256


@runtime_checkable
class RetainedBytes(Protocol):
    """Optional: an event store that says how many bytes its retained events count for now.

    ``InMemoryEventStore`` is one; the server's metrics sum what its stores say (a gauge), and
    leave the gauge out when no store says.
    """

    @property
    def retained_bytes(self) -> int:
        """How many bytes the retained events count for now (answered at once, from any thread)."""
        ...


@runtime_checkable
class SessionEventStore(Protocol):
    """Keeps the SSE events of streamable HTTP sessions so each session can resume its own streams.

    The server calls it with the session id of the transport that stored or asks (it binds one
    view per session); the store never trusts an event id to say whose it is.

    Laws:
        1. ``events.owned``: ``replay_events_after(s, i)`` sends only events that session ``s``
           stored; an id session ``s`` was never given (another session's, a guessed, malformed
           or evicted one) sends nothing and returns None, exactly like an unknown id.
        2. ``events.after``: for an id ``s`` was given, it sends, in order, the retained events
           ``s`` stored on that id's stream after it (priming events, ``None``, are not sent)
           and returns that stream id.
        3. ``events.unguessable``: event ids carry at least 96 bits of randomness or are
           authenticated, so knowing some ids does not reveal others.
        4. ``events.ended``: after ``end_session(s)`` no id of ``s`` replays anything, and
           ``s``'s events count against no bound (the other sessions get the room).
        5. ``events.bounded``: what is retained stays within the store's declared count, byte
           and age bounds (an event exactly ``max_age`` old is within, a moment later it is not;
           an event larger than the byte bound alone is never retained and evicts nothing); the
           oldest events go first, and only to keep the bounds.
    """

    async def store_event(
        self, session_id: str, stream_id: StreamId, message: JSONRPCMessage | None
    ) -> EventId:
        """Record one event of ``session_id``'s stream (``None``: a priming event); return its id."""
        ...

    async def replay_events_after(
        self, session_id: str, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        """Send ``session_id``'s events that followed ``last_event_id`` on its stream; return it."""
        ...

    def end_session(self, session_id: str) -> None:
        """Forget every event of ``session_id``: the session ended (DELETE, idle timeout, shutdown).

        Called synchronously by the transport's session bookkeeping, so it must not block; a store
        that needs I/O to forget schedules it (its events also expire by age).
        """
        ...


@dataclass(slots=True, eq=False)
class _Event:
    session_id: str
    stream_id: StreamId
    event_id: EventId
    data: bytes | None
    size: int
    at: float
    live: bool = True


@final
class InMemoryEventStore:
    """A :class:`SessionEventStore` in this process's memory, bounded by count, bytes and age.

    - Streams belong to sessions: a replay looks only among the asking session's events.
    - Event ids are 128-bit random tokens: unguessable, and meaningless to any other session.
    - Bounds: at most ``max_events`` events and ``max_bytes`` bytes (their JSON plus a fixed
      overhead each) across all sessions, none older than ``max_age`` seconds (``clock``,
      monotonic); the oldest events are dropped first, and an event larger than the whole
      budget is sent live but never retained. A session's events are dropped when it ends.

    Enough for SSE polling and reconnects to one server process; several workers behind a load
    balancer route a session to the worker that holds it (the SDK's sessions live in memory too).
    """

    __slots__ = (
        "_bytes",
        "_clock",
        "_count",
        "_max_age",
        "_max_bytes",
        "_max_events",
        "_order",
        "_sessions",
    )

    def __init__(
        self,
        max_events: int = DEFAULT_EVENT_MAX_EVENTS,
        *,
        max_bytes: int = DEFAULT_EVENT_MAX_BYTES,
        max_age: float = DEFAULT_EVENT_MAX_AGE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        for name, value in (("max_events", max_events), ("max_bytes", max_bytes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"InMemoryEventStore {name} must be a positive int, got {value!r}")
        if not (isinstance(max_age, int | float) and math.isfinite(max_age) and max_age > 0):
            raise ValueError(
                f"InMemoryEventStore max_age must be a positive number of seconds, got {max_age!r}"
            )
        self._max_events = max_events
        self._max_bytes = max_bytes
        self._max_age = float(max_age)
        self._clock = clock
        # Per session, its retained events by id, in the order they were stored.
        self._sessions: dict[str, dict[EventId, _Event]] = {}
        # Every retained event, oldest first; events of ended sessions are marked dead and skipped.
        self._order: deque[_Event] = deque()
        self._count = 0
        self._bytes = 0

    def __repr__(self) -> str:
        return (
            f"InMemoryEventStore(<{self._count} events, {self._bytes} bytes, "
            f"{len(self._sessions)} sessions>)"
        )

    @property
    def retained_events(self) -> int:
        """How many events are retained now, across all sessions."""
        return self._count

    @property
    def retained_bytes(self) -> int:
        """How many bytes the retained events count for now."""
        return self._bytes

    async def store_event(
        self, session_id: str, stream_id: StreamId, message: JSONRPCMessage | None
    ) -> EventId:
        """Record one event; return its (random) id."""
        now = self._clock()
        data = (
            None
            if message is None
            else message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        )
        size = _EVENT_OVERHEAD + (len(data) if data is not None else 0)
        event_id = secrets.token_urlsafe(16)
        if size <= self._max_bytes:
            event = _Event(session_id, stream_id, event_id, data, size, now)
            events = self._sessions.get(session_id)
            if events is None:
                events = self._sessions[session_id] = {}
            events[event_id] = event
            self._order.append(event)
            self._count += 1
            self._bytes += size
        self._evict(now)
        return event_id

    async def replay_events_after(
        self, session_id: str, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        """Send ``session_id``'s events that followed ``last_event_id`` on its stream."""
        self._evict(self._clock())
        events = self._sessions.get(session_id)
        last = events.get(last_event_id) if events is not None else None
        if events is None or last is None:
            return None
        # A snapshot in storage order: events stored or evicted while this replay awaits the
        # callback do not disturb it.
        following = list(events.values())
        for event in following[following.index(last) + 1 :]:
            if event.stream_id == last.stream_id and event.live and event.data is not None:
                message = jsonrpc_message_adapter.validate_json(event.data)
                await send_callback(EventMessage(message, event.event_id))
        return last.stream_id

    def end_session(self, session_id: str) -> None:
        """Drop every event of ``session_id`` now."""
        events = self._sessions.pop(session_id, None)
        if events is None:
            return
        for event in events.values():
            event.live = False
            self._count -= 1
            self._bytes -= event.size
        self._compact()

    # -- bounds ---------------------------------------------------------------------------------

    def _evict(self, now: float) -> None:
        order = self._order
        oldest = now - self._max_age
        while order and (
            not order[0].live
            or self._count > self._max_events
            or self._bytes > self._max_bytes
            or order[0].at < oldest
        ):
            event = order.popleft()
            if event.live:
                self._forget(event)

    def _forget(self, event: _Event) -> None:
        event.live = False
        self._count -= 1
        self._bytes -= event.size
        events = self._sessions[event.session_id]
        del events[event.event_id]
        if not events:
            del self._sessions[event.session_id]

    def _compact(self) -> None:
        # Dead events (of ended sessions) are skipped lazily; rebuild once they outnumber the live
        # ones so the queue stays proportional to what is retained.
        if len(self._order) > 2 * self._count + 64:
            self._order = deque(event for event in self._order if event.live)


@final
class _SessionEvents(EventStore):
    """The SDK's session-less ``EventStore`` interface, bound to one session of a store."""

    __slots__ = ("_session_id", "_store")

    def __init__(self, store: SessionEventStore, session_id: str) -> None:
        self._store = store
        self._session_id = session_id

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        return await self._store.store_event(self._session_id, stream_id, message)

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        return await self._store.replay_events_after(self._session_id, last_event_id, send_callback)


@final
class _SessionTable(dict[str, Any]):
    """The session manager's table of live sessions: where each new transport is made the server's.

    The SDK creates a transport per session with the manager's one store and its own response
    mode; it offers no hook to tell the store whose session it is, nor to choose the transport.
    Its transports are registered in this table as soon as they are created, before they serve
    anything, and removed from it whenever a session ends (DELETE, idle timeout, crash,
    shutdown): the moments a store needs to know, and the moment a transport can still become a
    :class:`~mcp_core.server._responses.DeferredResponses` (``deferred``).
    """

    __slots__ = ("_deferred", "_keep_ended", "_public", "_slots", "_store")

    def __init__(
        self,
        store: SessionEventStore | None,
        *,
        deferred: bool = False,
        slots: SessionSlots | None = None,
        public: Callable[[str], str] | None = None,
        keep_ended: bool = False,
    ) -> None:
        super().__init__()
        self._store = store
        self._deferred = deferred
        self._slots = slots
        self._public = public
        self._keep_ended = keep_ended

    def _store_id(self, session_id: str) -> str:
        """The id a session's events are kept under: the one every worker knows it by."""
        return session_id if self._public is None else self._public(session_id)

    def __setitem__(self, session_id: str, transport: Any) -> None:
        if self._store is not None:
            if hasattr(transport, "_event_store"):
                transport._event_store = _SessionEvents(self._store, self._store_id(session_id))  # noqa: SLF001 -- see bind_sessions
            else:  # pragma: no cover -- only an SDK whose transports changed shape
                _log.warning(
                    "this mcp SDK's transport has no event store slot; SSE resumption is off"
                )
        if self._deferred or self._store is not None:
            if type(transport) is StreamableHTTPServerTransport:
                # Same object, same state: the subclass only answers request POSTs (deferred)
                # and first GETs (primed, with a store) its own way.
                transport.__class__ = DeferredResponses if self._deferred else ResumableStreams
            else:  # pragma: no cover -- only an SDK whose manager makes other transports
                _log.warning(
                    "this mcp SDK's session transport is unknown; answers stay SSE and its "
                    "GET stream is not primed"
                )
        super().__setitem__(session_id, transport)
        if self._slots is not None:
            self._slots.opened(session_id)

    def pop(self, session_id: str, default: Any = None) -> Any:
        transport = super().pop(session_id, default)
        if transport is not default:
            self._ended(session_id)
        return transport

    def clear(self) -> None:
        for session_id in tuple(self):
            self._ended(session_id)
        super().clear()

    def _ended(self, session_id: str) -> None:
        if self._slots is not None:
            self._slots.closed(session_id)
        if self._store is None or self._keep_ended:
            return  # a shared store keeps the session's events for the next worker (ADR 0109)
        try:
            self._store.end_session(self._store_id(session_id))
        except Exception:  # noqa: BLE001 -- a store failing to forget must not break session cleanup
            _log.exception("event store failed to forget session %s", session_id[:64])


def bind_sessions(
    manager: StreamableHTTPSessionManager,
    store: SessionEventStore | None,
    *,
    deferred: bool = False,
    slots: SessionSlots | None = None,
    public: Callable[[str], str] | None = None,
    keep_ended: bool = False,
) -> bool:
    """Make every session ``manager`` creates keep its events in ``store``, as itself; and defer.

    With a ``store``, each session stores and replays its SSE events there under its own id.
    The manager must have been created without an event store of its own, so a transport that
    escaped the binding has none (no resumption) rather than a shared one. With ``deferred``,
    each session answers request POSTs with JSON unless they need a stream (ADR 0053). With
    ``slots``, they are told of each session's opening and end (per-client session slots, ADR
    0070). With ``public``, a session's events are kept under ``public(session_id)``, the id
    every worker of a deployment knows it by (ADR 0109); with ``keep_ended``, a session ending
    here leaves its events in ``store`` (shared: the next worker resumes it). This reaches into the SDK manager's
    session table, in this one place; if a future SDK moves it, all three are off with a warning
    (returns False): no resumption, SSE answers and the total session limit alone, never
    streams shared between sessions.
    """
    table = getattr(manager, "_server_instances", None)
    if getattr(manager, "event_store", None) is not None or type(table) is not dict or table:
        _log.warning(
            "cannot bind sessions with this mcp SDK; SSE resumption is off, answers stay SSE"
        )
        return False
    table = _SessionTable(
        store, deferred=deferred, slots=slots, public=public, keep_ended=keep_ended
    )
    manager._server_instances = table  # noqa: SLF001 -- the one hook, documented above
    return True
