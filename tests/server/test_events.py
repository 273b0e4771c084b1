"""Event streams owned by sessions (mcp_core.server._events): the laws, against a model."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.server.streamable_http import EventMessage, EventStore
from mcp_types import JSONRPCMessage, JSONRPCResponse

from mcp_core.registry import Registry
from mcp_core.server import InMemoryEventStore, McpServer
from mcp_core.server._events import _EVENT_OVERHEAD, _SessionTable, bind_sessions


def response(request_id: int, text: str = "") -> JSONRPCMessage:
    """A JSON-RPC response carrying ``text``."""
    return JSONRPCResponse(jsonrpc="2.0", id=request_id, result={"text": text})


async def replayed(
    store: InMemoryEventStore, session: str, event_id: str
) -> tuple[str | None, list[EventMessage]]:
    """What a replay of ``event_id`` for ``session`` returns and sends."""
    sent: list[EventMessage] = []

    async def send(message: EventMessage) -> None:
        sent.append(message)

    stream = await store.replay_events_after(session, event_id, send)
    return stream, sent


@dataclass
class Clock:
    """A settable monotonic clock."""

    now: float = 0.0

    def __call__(self) -> float:
        return self.now


# One operation of a run: (session, stream, request id, or None for a priming event).
OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from("ab"),
        st.sampled_from(["1", "2", "_GET_stream"]),
        st.none() | st.integers(0, 9),
    ),
    max_size=30,
)


@dataclass
class Model:
    """What each session stored on each stream, in order: (event id, message or None)."""

    streams: dict[tuple[str, str], list[tuple[str, JSONRPCMessage | None]]] = field(
        default_factory=dict
    )

    async def run(
        self, store: InMemoryEventStore, operations: list[tuple[str, str, int | None]]
    ) -> None:
        for session, stream, request_id in operations:
            message = None if request_id is None else response(request_id, f"{session}{stream}")
            event_id = await store.store_event(session, stream, message)
            self.streams.setdefault((session, stream), []).append((event_id, message))


class TestLaws:
    """The SessionEventStore laws hold for the in-memory store (within its bounds)."""

    @given(OPERATIONS)
    async def test_owned_and_after(self, operations: list[tuple[str, str, int | None]]) -> None:
        """events.owned and events.after: a session replays its own stream's later events, only."""
        store = InMemoryEventStore()
        model = Model()
        await model.run(store, operations)
        for (session, stream), events in model.streams.items():
            for index, (event_id, _) in enumerate(events):
                got_stream, sent = await replayed(store, session, event_id)
                assert got_stream == stream
                later = [(i, m) for i, m in events[index + 1 :] if m is not None]
                assert [(m.event_id, m.message) for m in sent] == later
                other = "b" if session == "a" else "a"
                assert await replayed(store, other, event_id) == (None, [])

    @given(OPERATIONS)
    async def test_ended(self, operations: list[tuple[str, str, int | None]]) -> None:
        """events.ended: after end_session nothing of that session replays; the other is intact."""
        store = InMemoryEventStore()
        model = Model()
        await model.run(store, operations)
        store.end_session("a")
        for (session, _), events in model.streams.items():
            for event_id, _ in events:
                stream, _ = await replayed(store, session, event_id)
                assert (stream is None) == (session == "a")
        assert store.retained_events == sum(
            len(e) for (s, _), e in model.streams.items() if s == "b"
        )

    @given(OPERATIONS, st.integers(1, 6), st.integers(1, 4))
    async def test_bounded_by_count_and_bytes(
        self, operations: list[tuple[str, str, int | None]], max_events: int, max_kib: int
    ) -> None:
        """events.bounded: count and bytes stay within bounds; what remains is the newest."""
        budget = max_kib * 300
        store = InMemoryEventStore(max_events, max_bytes=budget)
        model = Model()
        order: list[tuple[str, str]] = []
        for operation in operations:
            await model.run(store, [operation])
            event_id, message = model.streams[operation[:2]][-1]
            size = _EVENT_OVERHEAD + (len(message.model_dump_json()) if message else 0)
            if size <= budget:  # a larger event is sent live but never retained
                order.append((operation[0], event_id))
            assert store.retained_events <= max_events
            assert store.retained_bytes <= budget
        kept = [(s, i) for s, i in order if (await replayed(store, s, i))[0] is not None]
        assert kept == order[len(order) - len(kept) :]

    def test_unguessable(self) -> None:
        """events.unguessable: ids are 128-bit random tokens, all distinct."""
        import anyio

        async def mint() -> list[str]:
            store = InMemoryEventStore()
            return [await store.store_event("a", "1", None) for _ in range(200)]

        ids = anyio.run(mint)
        assert len(set(ids)) == 200
        assert all(len(event_id) == 22 for event_id in ids)  # 16 bytes, base64url


class TestBounds:
    """Age and size bounds, one at a time."""

    async def test_age(self) -> None:
        """An event older than max_age is gone; a younger one stays."""
        clock = Clock()
        store = InMemoryEventStore(max_age=10, clock=clock)
        old = await store.store_event("a", "1", None)
        await store.store_event("a", "1", response(1, "old"))
        clock.now = 8
        young = await store.store_event("a", "2", None)
        await store.store_event("a", "2", response(2, "young"))
        clock.now = 11
        assert await replayed(store, "a", old) == (None, [])
        stream, sent = await replayed(store, "a", young)
        assert stream == "2"
        assert [m.message for m in sent] == [response(2, "young")]

    async def test_an_event_larger_than_the_budget_is_not_kept(self) -> None:
        """A 1 MB result with a 64 KiB budget gets an id but is never retained."""
        store = InMemoryEventStore(max_bytes=64 * 1024)
        priming = await store.store_event("a", "1", None)
        await store.store_event("a", "1", response(1, "x" * 1_000_000))
        assert store.retained_bytes == _EVENT_OVERHEAD
        assert await replayed(store, "a", priming) == ("1", [])

    async def test_bytes_are_the_json(self) -> None:
        """An event counts its JSON size plus a fixed overhead."""
        store = InMemoryEventStore()
        message = response(1, "hello")
        await store.store_event("a", "1", message)
        json_size = len(message.model_dump_json(by_alias=True, exclude_unset=True))
        assert store.retained_bytes == _EVENT_OVERHEAD + json_size

    @pytest.mark.parametrize(
        "options",
        [
            {"max_events": 0},
            {"max_bytes": 0},
            {"max_age": 0},
            {"max_age": float("inf")},
            {"max_events": True},
        ],
    )
    def test_bad_bounds_are_refused(self, options: dict[str, object]) -> None:
        """Bounds must be positive and finite; the message names the option."""
        with pytest.raises(ValueError, match=next(iter(options))):
            InMemoryEventStore(**options)  # type: ignore[arg-type]  # deliberately wrong


class TestBinding:
    """The server gives every SDK transport a view bound to its own session."""

    def test_transports_get_their_session(self) -> None:
        """A transport registered in the table stores as its session; popping it ends the session."""
        ended: list[str] = []

        class Spy:
            """A store that records which sessions ended."""

            async def store_event(self, session_id: str, stream_id: str, message: object) -> str:
                return session_id

            async def replay_events_after(self, session_id: str, last: str, send: object) -> None:
                return None

            def end_session(self, session_id: str) -> None:
                ended.append(session_id)

        class Transport:
            _event_store: EventStore | None = None

        table = _SessionTable(Spy())
        transport = Transport()
        table["s1"] = transport
        assert transport._event_store is not None
        assert table.pop("s1", None) is transport
        assert table.pop("s1", None) is None
        table["s2"] = Transport()
        table.clear()
        assert ended == ["s1", "s2"]

    async def test_a_view_speaks_for_its_session(self) -> None:
        """What a bound view stores belongs to its session: another view cannot replay it."""
        store = InMemoryEventStore()
        table = _SessionTable(store)

        class Transport:
            _event_store: EventStore | None = None

        mine, theirs = Transport(), Transport()
        table["mine"], table["theirs"] = mine, theirs
        assert mine._event_store is not None
        assert theirs._event_store is not None
        priming = await mine._event_store.store_event("1", None)
        await mine._event_store.store_event("1", response(1, "mine"))
        sent: list[EventMessage] = []

        async def send(message: EventMessage) -> None:
            sent.append(message)

        assert await theirs._event_store.replay_events_after(priming, send) is None
        assert await mine._event_store.replay_events_after(priming, send) == "1"
        assert [m.message for m in sent] == [response(1, "mine")]

    def test_the_app_binds_its_manager(self) -> None:
        """streamable_http_app leaves the SDK manager without a store of its own, and binds it."""
        server = McpServer(Registry())
        server.streamable_http_app()
        manager = server.lowlevel.session_manager
        assert manager.event_store is None
        assert isinstance(manager._server_instances, _SessionTable)

    def test_stateless_binds_nothing(self) -> None:
        """Without sessions (stateless) nothing is bound; without a store, only the session slots."""
        stateless = McpServer(Registry())
        stateless.streamable_http_app(stateless=True)
        assert type(stateless.lowlevel.session_manager._server_instances) is dict
        storeless = McpServer(Registry())
        storeless.streamable_http_app(event_store=None, json_response=False)
        table = storeless.lowlevel.session_manager._server_instances
        assert type(table) is not dict
        assert table._store is None  # type: ignore[attr-defined]
        assert table._deferred is False  # type: ignore[attr-defined]

    def test_an_sdk_event_store_is_refused(self) -> None:
        """A session-less SDK EventStore would share streams between sessions: TypeError says so."""

        class Shared(EventStore):
            async def store_event(self, stream_id: str, message: JSONRPCMessage | None) -> str:
                return "1"

            async def replay_events_after(self, last_event_id: str, send_callback: object) -> None:
                return None

        with pytest.raises(TypeError, match="another's results"):
            McpServer(Registry()).streamable_http_app(event_store=Shared())  # type: ignore[arg-type]  # the point

    def test_binding_refuses_a_manager_that_has_a_store(self) -> None:
        """A manager that already shares a store is left alone, and the binding says it failed."""

        class Manager:
            def __init__(self) -> None:
                self.event_store = object()
                self._server_instances: dict[str, object] = {}

        assert bind_sessions(Manager(), InMemoryEventStore()) is False  # type: ignore[arg-type]  # a stand-in
