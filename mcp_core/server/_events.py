"""A bounded in-memory event store: what lets a streamable HTTP client resume a closed SSE stream."""

from __future__ import annotations

import itertools
from collections import OrderedDict, deque
from typing import final

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage

__all__ = ["InMemoryEventStore"]


@final
class InMemoryEventStore(EventStore):
    """Keeps the last ``max_events`` SSE events of every stream of one process, oldest dropped first.

    Enough for SSE polling and reconnects within one server process; a deployment with several
    workers behind a load balancer needs a shared store (the SDK's ``EventStore`` interface).
    """

    def __init__(self, max_events: int = 10_000) -> None:
        if max_events < 1:
            raise ValueError(f"max_events must be at least 1, got {max_events}")
        self._max_events = max_events
        self._ids = itertools.count(1)
        self._events: OrderedDict[int, tuple[StreamId, JSONRPCMessage | None]] = OrderedDict()
        self._streams: dict[StreamId, deque[int]] = {}

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        """Record one event (``None`` is a stream's priming event) and return its id."""
        event_id = next(self._ids)
        self._events[event_id] = (stream_id, message)
        self._streams.setdefault(stream_id, deque()).append(event_id)
        while len(self._events) > self._max_events:
            _, (old_stream, _) = self._events.popitem(last=False)
            ids = self._streams[old_stream]
            ids.popleft()  # the globally oldest event is also the oldest of its stream
            if not ids:
                del self._streams[old_stream]
        return str(event_id)

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        """Send the events of ``last_event_id``'s stream that came after it; return that stream."""
        try:
            last = int(last_event_id)
        except ValueError:
            return None
        entry = self._events.get(last)
        if entry is None:
            return None
        stream_id = entry[0]
        for event_id in tuple(self._streams.get(stream_id, ())):
            # An event evicted while an earlier one was being sent is simply gone.
            event = self._events.get(event_id) if event_id > last else None
            if event is not None and event[1] is not None:
                await send_callback(EventMessage(event[1], str(event_id)))
        return stream_id
