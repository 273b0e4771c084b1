"""Talking to a ``SessionEventStore`` target: its bounds, a clock only the kit moves, typed calls.

An ``--mcp-event-store`` factory is called as
``make_event_store(max_events=..., max_bytes=..., max_age=..., clock=...)`` and returns a new,
empty store keeping at most that many events, bytes (of the events' JSON) and seconds (on
``clock``), across all sessions. The kit's clock starts at the wall clock's time and moves only
when a check says so, so the age bound is checked without waiting.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field
from typing import Any, Final, final

from mcp.server.streamable_http import EventMessage
from mcp_types import (
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)

from mcp_conformance._contract import LawViolation, awaited, checked
from mcp_conformance._kit import Kit

__all__ = [
    "GENEROUS",
    "Bounds",
    "EventStoreUnderTest",
    "KitClock",
    "Stored",
    "json_size",
    "message",
]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Bounds:
    """What a store is made to keep at most: events, bytes of their JSON, seconds."""

    max_events: int
    max_bytes: int
    max_age: float

    def keywords(self, clock: KitClock) -> dict[str, Any]:
        """The factory's keyword arguments."""
        return {
            "max_events": self.max_events,
            "max_bytes": self.max_bytes,
            "max_age": self.max_age,
            "clock": clock,
        }


GENEROUS: Final = Bounds(max_events=1_000_000, max_bytes=1 << 30, max_age=7 * 86_400.0)
"""Bounds no check comes near: within them, every event stored is retained."""


@final
class KitClock:
    """A clock only the kit moves; it starts at the wall clock's time (a store may take it as such)."""

    def __init__(self) -> None:
        self.now = time.time()

    def __repr__(self) -> str:
        return f"KitClock({self.now:.1f})"

    def __call__(self) -> float:
        return self.now


_KINDS: Final = ("response", "notification", "request", "error")


def message(serial: int, kind: int, size: int) -> JSONRPCMessage:
    """A message of one of the four JSON-RPC shapes, unique by ``serial``, about ``size`` long."""
    # Non-ASCII now and then (its JSON is UTF-8: two bytes a character), ASCII when large.
    text = f"#{serial} é " + "x" * size
    shape = _KINDS[kind % len(_KINDS)]
    if shape == "response":
        return JSONRPCResponse(jsonrpc="2.0", id=serial, result={"text": text})
    if shape == "notification":
        params: dict[str, object] = {"level": "info", "data": text}
        return JSONRPCNotification(jsonrpc="2.0", method="notifications/message", params=params)
    if shape == "request":
        params = {"serial": serial, "text": text}
        return JSONRPCRequest(jsonrpc="2.0", id=f"r{serial}", method="ping/kit", params=params)
    return JSONRPCError(jsonrpc="2.0", id=serial, error=ErrorData(code=-32603, message=text))


def json_size(sent: JSONRPCMessage | None) -> int:
    """The bytes of a message's JSON as a transport sends it (0 for a priming event)."""
    if sent is None:
        return 0
    return len(sent.model_dump_json(by_alias=True, exclude_unset=True).encode())


@final
@dataclass(frozen=True, slots=True)
class Stored:
    """One event the kit stored: where, what, when, and the id the store gave it."""

    number: int
    session: str
    stream: str
    message: JSONRPCMessage | None = field(repr=False)
    event_id: str
    at: float

    def __str__(self) -> str:
        what = "priming event" if self.message is None else "event"
        return f"{what} #{self.number} of session {self.session!r} on stream {self.stream!r}"


@final
class EventStoreUnderTest:
    """A target store, every call awaited and type-checked; the kit's record of what it stored."""

    def __init__(self, kit: Kit, bounds: Bounds = GENEROUS) -> None:
        self.clock = KitClock()
        self.bounds = bounds
        # The target is duck-typed: every call below is awaited and checked.
        self.obj: Any = kit.target.factory(**bounds.keywords(self.clock))
        self.stored: list[Stored] = []
        self.ended: set[str] = set()
        """The sessions the kit ended (``end``)."""

    async def store(self, session: str, stream: str, sent: JSONRPCMessage | None) -> Stored:
        """``store_event``; the id is checked to be a non-empty string."""
        what = f"store_event({session!r}, {stream!r}, ...)"
        # Fresh copies: equal ids arrive as different objects, as they do off the wire, so a
        # store comparing them by identity is caught.
        answer = self.obj.store_event(fresh(session), fresh(stream), sent)
        event_id: str = await awaited(answer, str, what=what)
        if not event_id:
            raise LawViolation(f"{what} returned an empty event id")
        record = Stored(len(self.stored), session, stream, sent, event_id, self.clock.now)
        self.stored.append(record)
        return record

    async def replay(self, session: str, event_id: str) -> tuple[str | None, list[EventMessage]]:
        """``replay_events_after``: the stream it returned and what it sent, checked."""
        sent: list[EventMessage] = []
        what = f"replay_events_after({session!r}, {_clip(event_id)}, send)"

        async def send(event: EventMessage) -> None:
            sent.append(checked(event, EventMessage, what=f"{what}: an event it sent"))

        answer = self.obj.replay_events_after(fresh(session), fresh(event_id), send)
        try:
            stream: str | None = await awaited(answer, str | None, what=what)
        except LawViolation:
            raise
        except Exception as exc:
            raise LawViolation(f"{what} raised {type(exc).__name__}: {exc}") from exc
        return stream, sent

    def end(self, session: str) -> None:
        """``end_session``, which is synchronous (the transport's bookkeeping calls it so)."""
        self.ended.add(session)
        answer = self.obj.end_session(session)
        if inspect.isawaitable(answer):
            close = getattr(answer, "close", None)
            if callable(close):
                close()  # never awaited: a coroutine the transport would drop
            raise LawViolation(
                f"end_session({session!r}) returned {type(answer).__name__}: it must be "
                "synchronous (the transport calls it without awaiting, so nothing would be "
                "forgotten); schedule any I/O it needs instead"
            )

    def of(self, session: str) -> list[Stored]:
        """What the kit stored for ``session``, in order."""
        return [record for record in self.stored if record.session == session]


def fresh(text: str) -> str:
    """An equal string that is another object (where CPython does not share it regardless)."""
    return "".join(list(text))


_SHOWN: Final = 40
"""Characters of an event id a message quotes (the kit's guesses include 4096-character ids)."""


def _clip(text: str) -> str:
    return repr(text) if len(text) <= _SHOWN else f"{text[:30]!r}...({len(text)} characters)"
