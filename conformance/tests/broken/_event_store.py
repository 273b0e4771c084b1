"""A small session event store written from the SessionEventStore contract; broken ones override a part.

Every event is one record in one list, oldest first; a replay walks the list.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass

from mcp.server.streamable_http import EventCallback, EventMessage
from mcp_types import JSONRPCMessage


@dataclass(frozen=True)
class Record:
    """One stored event."""

    session: str
    stream: str
    event_id: str
    message: JSONRPCMessage | None
    size: int
    at: float


class ListStore:
    """Correct: per-session replay, random ids, bounded by count, bytes and age, oldest first."""

    def __init__(
        self, *, max_events: int, max_bytes: int, max_age: float, clock: Callable[[], float]
    ) -> None:
        self.max_events, self.max_bytes, self.max_age, self.clock = (
            max_events,
            max_bytes,
            max_age,
            clock,
        )
        self.records: list[Record] = []

    def new_id(self) -> str:
        return secrets.token_hex(16)

    def size(self, message: JSONRPCMessage | None) -> int:
        return 64 + (len(message.model_dump_json().encode()) if message is not None else 0)

    async def store_event(
        self, session_id: str, stream_id: str, message: JSONRPCMessage | None
    ) -> str:
        event_id = self.new_id()
        record = Record(session_id, stream_id, event_id, message, self.size(message), self.clock())
        if self.fits(record):
            self.records.append(record)
        self.evict()
        return event_id

    def fits(self, record: Record) -> bool:
        """Whether ``record`` may be retained at all (one larger than the byte bound never is)."""
        return record.size <= self.max_bytes

    def expired(self, record: Record, now: float) -> bool:
        """Whether ``record`` is older than the age bound (exactly ``max_age`` old is not)."""
        return record.at < now - self.max_age

    def evict(self) -> None:
        now = self.clock()
        while self.records and (
            len(self.records) > self.max_events
            or sum(record.size for record in self.records) > self.max_bytes
            or self.expired(self.records[0], now)
        ):
            del self.records[0]

    def follows(self, last: Record, record: Record) -> bool:
        """Whether ``record`` is replayed after ``last``."""
        return record.session == last.session and record.stream == last.stream

    async def replay_events_after(
        self, session_id: str, last_event_id: str, send_callback: EventCallback
    ) -> str | None:
        self.evict()
        found = [
            index
            for index, record in enumerate(self.records)
            if record.event_id == last_event_id and record.session == session_id
        ]
        if not found:
            return None
        last = self.records[found[0]]
        for record in self.records[found[0] + 1 :]:
            if self.follows(last, record) and record.message is not None:
                await send_callback(EventMessage(record.message, record.event_id))
        return last.stream

    def end_session(self, session_id: str) -> None:
        self.records = [record for record in self.records if record.session != session_id]
