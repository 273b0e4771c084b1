"""Event store laws: SSE streams that belong to sessions (an ``--mcp-event-store`` target).

A server gives every session's transport a view of one store bound to that session; the store is
asked ``store_event(session, stream, message)`` and ``replay_events_after(session, last_id,
send)``, and ``end_session(session)`` when a session ends. Stream ids are JSON-RPC request ids,
which every session shares and clients choose, so the kit's sessions reuse each other's stream
ids, and session and stream ids that run into each other when concatenated (``"s" + "11"`` and
``"s1" + "1"``). Each law is checked on its own: ownership across sessions, the replay itself in
one session, unguessable ids, ending a session, and the bounds (the only check whose bounds are
tight; the others run within bounds nothing reaches).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, final

import anyio.lowlevel
from hypothesis import strategies as st

from mcp_conformance._contract import LawViolation
from mcp_conformance._events import (
    GENEROUS,
    Bounds,
    EventStoreUnderTest,
    json_size,
    message,
)
from mcp_conformance._kit import Kit, checks, kit_fixture  # noqa: F401 -- the `kit` fixture

# Session and stream ids that collide when concatenated; a stream id "11" is a request id too.
_SESSIONS: Final = ("s", "s1", "s11")
_STREAMS: Final = ("1", "11", "_GET_stream")

Operation = tuple[int, int, bool, int, int]
"""(session index, stream index, priming?, message shape, message size)."""


def _operations(*, sessions: int, max_size: int = 16) -> st.SearchStrategy[list[Operation]]:
    return st.lists(
        st.tuples(
            # One session: a constant, not a one-value range (which hypothesis shrinks poorly).
            st.integers(min_value=0, max_value=sessions - 1) if sessions > 1 else st.just(0),
            st.integers(min_value=0, max_value=len(_STREAMS) - 1),
            st.booleans(),
            st.integers(min_value=0, max_value=3),
            st.integers(min_value=0, max_value=40),
        ),
        min_size=1,
        max_size=max_size,
    )


async def _run(store: EventStoreUnderTest, operations: Iterable[Operation]) -> None:
    for session, stream, priming, shape, size in operations:
        serial = len(store.stored)
        sent = None if priming else message(serial, shape, size)
        await store.store(_SESSIONS[session], _STREAMS[stream], sent)


async def _quiet(store: EventStoreUnderTest, session: str, event_id: str, why: str) -> None:
    """A replay that must send nothing and return None (``why``: what kind of id it is)."""
    try:
        stream, sent = await store.replay(session, event_id)
    except LawViolation as exc:
        if exc.__cause__ is None:
            raise
        raise LawViolation(
            f"{exc} (of {why}); an id the session was never given returns None"
        ) from exc.__cause__
    if stream is not None or sent:
        raise LawViolation(
            f"session {session!r} replayed {why} ({event_id[:40]!r}): it returned stream "
            f"{stream!r} and sent {len(sent)} event(s); an id the session was never given sends "
            "nothing and returns None"
        )


# -- events.owned ---------------------------------------------------------------------------------


def _guesses(ids: Iterable[str]) -> set[str]:
    """Ids an attacker would try: malformed ones, and variations of ids it has seen."""
    found = {"", "0", "1", "-1", "null", "None", " ", "A" * 4096, "../1", "%00"}
    for event_id in ids:
        found.update(
            {
                event_id[:-1],
                event_id + "0",
                event_id.swapcase(),
                event_id * 2,
                f"{event_id}\n",
                f"../{event_id}",
                event_id[:-1] + ("A" if event_id[-1:] != "A" else "B"),
            }
        )
        found.update(_neighbours(event_id))
    return found


@checks("events.owned")
def test_events_owned(kit: Kit) -> None:
    """A replay sends only the asking session's events; others' and guessed ids send nothing."""

    async def body(operations: list[Operation]) -> None:
        store = EventStoreUnderTest(kit)
        await _run(store, operations)
        everyone = {record.event_id: record for record in store.stored}
        for session in (*_SESSIONS, "kit-stranger"):
            own = {record.event_id for record in store.of(session)}
            for event_id, record in everyone.items():
                if event_id not in own:
                    await _quiet(store, session, event_id, f"an id of {record}")
            # Variations of a few ids suffice: each is a malformed id or a neighbour of a real one.
            for guess in sorted(_guesses(list(everyone)[:4]) - own):
                await _quiet(store, session, guess, "a guessed or malformed id")
            for record in store.of(session):
                _, sent = await store.replay(session, record.event_id)
                for event in sent:
                    origin = everyone.get(event.event_id or "")
                    if (
                        origin is None
                        or origin.session != session
                        or origin.message != event.message
                    ):
                        whose = f"{origin}" if origin is not None else "no event the kit stored"
                        raise LawViolation(
                            f"session {session!r} resumed after {record} and was sent "
                            f"{whose} (id {str(event.event_id)[:40]!r}); a replay sends only the "
                            "asking session's own events"
                        )

    kit.given(_operations(sessions=len(_SESSIONS)), body, name="events_owned")


# -- events.after ---------------------------------------------------------------------------------


async def _replays_follow(store: EventStoreUnderTest, session: str) -> None:
    """Every id of ``session`` replays its stream's later events, in order, and returns the stream."""
    records = store.of(session)
    for index, record in enumerate(records):
        stream, sent = await store.replay(session, record.event_id)
        if stream != record.stream:
            raise LawViolation(
                f"replaying after {record} returned stream {stream!r}; it must return the stream "
                f"the id was given on, {record.stream!r} (every event is retained: the store is "
                "far within its bounds)"
            )
        expected = [
            (later.event_id, later.message)
            for later in records[index + 1 :]
            if later.stream == record.stream and later.message is not None
        ]
        got = [(event.event_id, event.message) for event in sent]
        if got != expected:
            numbers = {
                later.event_id: f"#{later.number} on {later.stream!r}" for later in store.stored
            }
            raise LawViolation(
                f"replaying after {record} sent events {[numbers.get(str(i), i) for i, _ in got]}; "
                f"expected {[numbers[i] for i, _ in expected]}: the events stored after it on "
                f"stream {record.stream!r}, in order, each with its id and message, and no "
                "priming event"
                + (
                    " (same events, different messages)"
                    if [i for i, _ in got] == [i for i, _ in expected]
                    else ""
                )
            )


@checks("events.after")
def test_events_after(kit: Kit) -> None:
    """An id replays the events its session stored after it on its stream, in order."""

    async def body(example: tuple[list[Operation], int]) -> None:
        operations, cut = example
        store = EventStoreUnderTest(kit)
        cut %= len(operations) + 1
        await _run(store, operations[:cut])
        await _replays_follow(store, _SESSIONS[0])
        await _run(store, operations[cut:])
        await _replays_follow(store, _SESSIONS[0])

    kit.given(
        st.tuples(_operations(sessions=1), st.integers(min_value=0, max_value=16)),
        body,
        name="events_after",
    )


# -- events.unguessable ---------------------------------------------------------------------------

_SAMPLE: Final = 200
_OTHERS: Final = 40
_MIN_BITS: Final = 88.0
"""What 200 ids of 96 random bits estimate to, with margin: about 92 bits for base64 tokens."""


def _neighbours(event_id: str) -> set[str]:
    """Ids one step from ``event_id`` in any counter it may hold (decimal or hexadecimal)."""
    found: set[str] = set()
    for pattern, base in ((r"\d+", 10), (r"[0-9a-fA-F]+", 16)):
        for run in re.finditer(pattern, event_id):
            digits = run.group()
            value = int(digits, base)
            for step in (-2, -1, 1, 2):
                if value + step < 0:
                    continue
                text = format(value + step, "d" if base == 10 else "x").zfill(len(digits))  # noqa: PLR2004 -- the base
                found.add(event_id[: run.start()] + text + event_id[run.end() :])
    return found


def _estimated_bits(ids: list[str]) -> float:
    """Entropy of the ids, estimated as the sum over character positions of each column's."""
    width = max(len(event_id) for event_id in ids)
    total = 0.0
    for position in range(width):
        column = Counter(event_id[position : position + 1] for event_id in ids)
        total -= sum(n / len(ids) * math.log2(n / len(ids)) for n in column.values())
    return total


@checks("events.unguessable")
def test_events_unguessable(kit: Kit) -> None:
    """Ids are distinct, do not follow from one another, and carry enough randomness."""

    async def sample() -> tuple[list[str], list[str]]:
        store = EventStoreUnderTest(kit)
        for number in range(_SAMPLE + _OTHERS):
            # Mostly session s, now and then s1, on the stream ids every session uses.
            session = _SESSIONS[1] if number % 6 == 5 else _SESSIONS[0]  # noqa: PLR2004 -- one in six
            sent = message(number, number, 4) if number % 3 else None
            await store.store(session, _STREAMS[number % 2], sent)
        return (
            [record.event_id for record in store.of(_SESSIONS[0])],
            [record.event_id for record in store.of(_SESSIONS[1])],
        )

    async def body() -> None:
        mine, theirs = await sample()
        repeated = [event_id for event_id, n in Counter([*mine, *theirs]).items() if n > 1]
        if repeated:
            raise LawViolation(
                f"the store gave the same id to {len(repeated)} different events (e.g. "
                f"{repeated[0][:40]!r}); every id names one event"
            )
        withheld = {*mine[1::2], *theirs}
        for seen in mine[0::2]:
            for guess in sorted(_neighbours(seen) & withheld):
                raise LawViolation(
                    f"event id {guess!r} is one step from {seen!r}, an id the same store gave "
                    "out: ids that count reveal each other"
                )
        again, _ = await sample()
        if set(again) & set(mine):
            raise LawViolation(
                f"two stores from the factory, given the same events, gave the same ids (e.g. "
                f"{min(set(again) & set(mine))[:40]!r}): the ids are a function of what is "
                "stored, so whoever knows the scheme computes them; draw them at random (or "
                "authenticate them with a key each store draws)"
            )
        bits = _estimated_bits(mine)
        if bits < _MIN_BITS:
            raise LawViolation(
                f"{len(mine)} ids of one session (e.g. {mine[0][:40]!r}, {mine[1][:40]!r}) carry "
                f"about {bits:.0f} bits of randomness (estimated column by column), below the "
                f"{_MIN_BITS:.0f} that 96 random bits estimate to: too few to be unguessable"
            )

    kit.run(body)


# -- events.ended ---------------------------------------------------------------------------------


@checks("events.ended")
def test_events_ended(kit: Kit) -> None:
    """After end_session(s) no id of s replays; other sessions' ids still do."""

    async def body(operations: list[Operation]) -> None:
        store = EventStoreUnderTest(kit)
        await _run(store, operations)
        ended, kept = _SESSIONS[0], _SESSIONS[1]
        try:
            store.end("kit-never-seen")
        except LawViolation:
            raise
        except Exception as exc:
            raise LawViolation(
                f"end_session of a session the store never saw raised {type(exc).__name__}: "
                f"{exc}; ending a session with no events forgets nothing and succeeds"
            ) from exc
        store.end(ended)
        store.end(ended)  # twice: ending is idempotent
        # A store that forgets with I/O may schedule it: give it a few turns of the loop.
        for _ in range(10):
            await anyio.lowlevel.checkpoint()
        for record in store.of(ended):
            stream, sent = await store.replay(ended, record.event_id)
            if stream is not None or sent:
                raise LawViolation(
                    f"after end_session({ended!r}), resuming after {record} still returned "
                    f"stream {stream!r} and sent {len(sent)} event(s); nothing of an ended session "
                    "replays"
                )
        for record in store.of(kept):
            stream, _ = await store.replay(kept, record.event_id)
            if stream != record.stream:
                raise LawViolation(
                    f"after end_session({ended!r}), resuming after {record} returned stream "
                    f"{stream!r}; ending one session must leave the others' events alone"
                )

    kit.given(_operations(sessions=2), body, name="events_ended")

    kit.given(
        st.integers(min_value=2, max_value=5),
        lambda count: _ended_frees_room(kit, count),
        name="events_ended_room",
    )


async def _ended_frees_room(kit: Kit, count: int) -> None:
    """An ended session's events count against no bound: the live sessions get the room, no more.

    With ``max_events=count``, a live session stores ``count - 1`` events, another session one
    more and ends, then the live one stores its last: its first event must still replay (were the
    ended session's event still counted, the live session's oldest would have been evicted).
    """
    bounds = Bounds(max_events=count, max_bytes=GENEROUS.max_bytes, max_age=GENEROUS.max_age)
    store = EventStoreUnderTest(kit, bounds)
    live, ended = _SESSIONS[1], _SESSIONS[0]
    for number in range(count - 1):
        await store.store(live, _STREAMS[1], message(number, 0, 8))
    await store.store(ended, _STREAMS[1], message(count, 0, 8))
    store.end(ended)
    for _ in range(10):
        await anyio.lowlevel.checkpoint()
    await store.store(live, _STREAMS[1], message(count + 1, 0, 8))
    first = store.of(live)[0]
    stream, sent = await store.replay(live, first.event_id)
    if stream != first.stream or len(sent) != count - 1:
        raise LawViolation(
            f"with max_events={count}, session {live!r} stored {count - 1} events, session "
            f"{ended!r} one and ended, then {live!r} one more; resuming after its first returned "
            f"stream {stream!r} and {len(sent)} of its {count - 1} later events: an ended "
            "session's events are forgotten, so they count against no bound"
        )
    # It frees its own room and no more: one event beyond the bound evicts the live one's first.
    await store.store(live, _STREAMS[1], message(count + 2, 0, 8))
    retained = [
        stream is not None
        for stream, _ in [await store.replay(live, r.event_id) for r in store.of(live)]
    ]
    if sum(retained) > count:
        raise LawViolation(
            f"with max_events={count}, session {live!r} stored {count - 1} events, session "
            f"{ended!r} one and ended, then {live!r} two more: {sum(retained)} of {live!r}'s "
            f"events still replay, more than max_events; ending a session frees the room of its "
            "own events, no more"
        )


# -- events.bounded -------------------------------------------------------------------------------

_OVERHEAD: Final = 1024
"""What a store may count per event besides its JSON: events the kit stores fit the byte bound
with this much to spare, so any reasonable accounting must retain the newest ones."""

_OVERSIZED: Final = 5000
"""The size of an event too large for any tight byte bound (at most 4096): never retained."""


@final
@dataclass(frozen=True, slots=True)
class End:
    """A step of ``events.bounded``: end a session (its events then count against no bound)."""

    session: int


Step = float | Operation | End
"""Seconds the clock moves on, an event to store (as in the other checks), or a session's end."""


@st.composite
def _bounded_cases(draw: st.DrawFn) -> tuple[Bounds, list[Step]]:
    tight = draw(st.sampled_from(("events", "bytes", "age", "all")))
    bounds = Bounds(
        max_events=draw(st.integers(min_value=1, max_value=6))
        if tight in {"events", "all"}
        else 1_000_000,
        max_bytes=draw(st.sampled_from((2048, 3072, 4096)))
        if tight in {"bytes", "all"}
        else 1 << 30,
        max_age=draw(st.sampled_from((5.0, 12.0))) if tight in {"age", "all"} else 86_400.0,
    )
    steps: list[Step] = []
    for _ in range(draw(st.integers(min_value=6, max_value=18))):
        what = draw(st.integers(min_value=0, max_value=9))
        if what <= 1:
            steps.append(draw(st.sampled_from((0.5, 2.0, 4.0, 7.0))))
        elif what == 2:  # noqa: PLR2004 -- one step in ten
            steps.append(End(draw(st.integers(min_value=0, max_value=1))))
        else:
            steps.append(
                (
                    draw(st.integers(min_value=0, max_value=1)),
                    draw(st.integers(min_value=0, max_value=1)),
                    draw(st.booleans()),
                    draw(st.integers(min_value=0, max_value=3)),
                    # At most about 1 KiB of JSON: each event fits the smallest byte bound
                    # alone, with _OVERHEAD to spare; big ones often, so budgets fill up; and
                    # now and then one larger than any tight byte bound.
                    draw(st.sampled_from((0, 300, 600, 900, 900, _OVERSIZED))),
                )
            )
    return bounds, steps


async def _retained(store: EventStoreUnderTest) -> list[bool]:
    """Which of the stored events are retained now: those whose id still replays its stream."""
    found = []
    for record in store.stored:
        stream, _ = await store.replay(record.session, record.event_id)
        found.append(stream is not None)
    return found


def _bounded(store: EventStoreUnderTest, kept: list[bool], lost: set[int], moment: str) -> None:
    """Check what is retained now; ``lost``: the events seen dropped before (gone for good)."""
    bounds, now = store.bounds, store.clock.now
    # Events of ended sessions count against no bound (events.ended says they never replay), and
    # an event too large for the byte bound alone is never retained: neither is owed room.
    owed = [
        (record, retained)
        for record, retained in zip(store.stored, kept, strict=True)
        if record.session not in store.ended and json_size(record.message) <= bounds.max_bytes
    ]
    records = [record for record, _ in owed]
    kept = [retained for _, retained in owed]
    held = [record for record, retained in owed if retained]
    where = f"{moment} (bounds: {bounds.max_events} events, {bounds.max_bytes} bytes, {bounds.max_age:g} s)"
    if len(held) > bounds.max_events:
        raise LawViolation(f"{where}, {len(held)} events still replay: more than max_events")
    total = sum(json_size(record.message) for record in held)
    if total > bounds.max_bytes:
        raise LawViolation(
            f"{where}, the events that still replay hold {total} bytes of JSON: more than max_bytes"
        )
    for record in held:
        if now - record.at > bounds.max_age:
            raise LawViolation(
                f"{where}, {record} still replays {now - record.at:g} s after it was stored: "
                "older than max_age"
            )
    oldest = next((index for index, retained in enumerate(kept) if retained), len(kept))
    dropped = next((index for index in range(oldest, len(kept)) if not kept[index]), None)
    if dropped is not None:
        raise LawViolation(
            f"{where}, {records[oldest]} still replays but the newer {records[dropped]} does not: "
            "the oldest events go first"
        )
    newer_bytes = 0
    for position, record in enumerate(reversed(records), start=1):
        if record.number in lost:
            break  # it and every older one were dropped when the bounds needed it
        newer_bytes += json_size(record.message) + _OVERHEAD
        fits = (
            position <= bounds.max_events
            and newer_bytes <= bounds.max_bytes
            and now - record.at <= bounds.max_age
        )
        if fits and not kept[len(records) - position]:
            raise LawViolation(
                f"{where}, {record} no longer replays, though it and the {position - 1} newer "
                f"event(s) owed room are within every bound ({newer_bytes} bytes counting "
                f"{_OVERHEAD} per event, {now - record.at:g} s old; ended sessions' events and "
                "events larger than the byte bound alone are owed none): a store drops events "
                "only to keep its bounds"
            )
    lost.update(
        record.number for record, retained in zip(records, kept, strict=True) if not retained
    )


@checks("events.bounded")
def test_events_bounded(kit: Kit) -> None:
    """Retained events stay within count, bytes and age, oldest dropped first, newest kept."""

    async def body(example: tuple[Bounds, list[Step]]) -> None:
        bounds, steps = example
        store = EventStoreUnderTest(kit, bounds)
        # A session that ended is never heard of again: its index names a new session after.
        names = list(_SESSIONS[:2])
        lost: set[int] = set()
        for number, step in enumerate(steps, start=1):
            if isinstance(step, float):
                store.clock.now += step
                moment = f"after step {number}, {step:g} s later"
            elif isinstance(step, End):
                store.end(names[step.session])
                moment = f"after step {number}, end_session({names[step.session]!r})"
                names[step.session] += "'"
            else:
                session, *rest = step
                await _run_named(store, names[session], rest)
                record = store.stored[-1]
                moment = (
                    f"after step {number}, storing {record} ({json_size(record.message)} bytes)"
                )
            _bounded(store, await _retained(store), lost, moment)

    kit.given(_bounded_cases(), body, name="events_bounded")

    kit.given(
        st.tuples(
            st.sampled_from((5.0, 12.0)),
            st.sampled_from(("before", "at", "after")),
            st.booleans(),
            st.sampled_from((0.5, 2.0, 4.0)),
        ),
        lambda case: _age_edge(kit, *case),
        name="events_bounded_age_edge",
    )


async def _run_named(store: EventStoreUnderTest, session: str, rest: list[int]) -> None:
    stream, priming, shape, size = rest
    sent = None if priming else message(len(store.stored), shape, size)
    await store.store(session, _STREAMS[stream], sent)


async def _age_edge(kit: Kit, max_age: float, edge: str, storing: bool, later: float) -> None:
    """At the edge of retention: an event exactly ``max_age`` old replays, a moment older not.

    One event is stored, then a second ``later`` seconds after; the clock is moved to the float
    before the first's ``max_age``, exactly to it, or the float after it, and the first thing the
    store is asked is either to resume after the first event or (``storing``) to store a third.
    """
    bounds = Bounds(max_events=GENEROUS.max_events, max_bytes=GENEROUS.max_bytes, max_age=max_age)
    store = EventStoreUnderTest(kit, bounds)
    first = await store.store(_SESSIONS[0], _STREAMS[0], message(0, 0, 8))
    store.clock.now += later
    second = await store.store(_SESSIONS[0], _STREAMS[0], message(1, 0, 8))
    deadline = first.at + max_age
    store.clock.now = {
        "before": math.nextafter(deadline, -math.inf),
        "at": deadline,
        "after": math.nextafter(deadline, math.inf),
    }[edge]
    if storing:
        await store.store(_SESSIONS[0], _STREAMS[0], message(2, 0, 8))
    stream, sent = await store.replay(_SESSIONS[0], first.event_id)
    age = store.clock.now - first.at
    what = (
        f"max_age={max_age:g}: {first} was stored, {second} {later:g} s later, then the clock "
        f"moved to {edge} the first's deadline ({age!r} s after it)"
        + (" and a third event was stored" if storing else "")
    )
    if edge == "after" and stream is not None:
        raise LawViolation(
            f"{what}; resuming after the first still returned stream {stream!r}: an event older "
            "than max_age is not retained, whatever is newer"
        )
    if edge != "after" and (
        stream != first.stream or [e.event_id for e in sent][:1] != [second.event_id]
    ):
        raise LawViolation(
            f"{what}; resuming after the first returned stream {stream!r} and sent {len(sent)} "
            "event(s): an event at most max_age old (exactly max_age included) is retained, and "
            "resuming after it sends the newer ones"
        )
    stream, _ = await store.replay(_SESSIONS[0], second.event_id)
    if stream != second.stream:
        raise LawViolation(
            f"{what}; resuming after the second (only {store.clock.now - second.at!r} s old) "
            f"returned stream {stream!r}: it is within every bound, so it is retained"
        )
