"""Expiry law: ``CacheStore``'s ``store.expiry`` (an ``--mcp-cache-store`` target).

An entry set at time ``s`` with TTL ``t`` is live while the clock reads less than ``s + t`` and
expired from ``s + t`` on: at exactly its TTL it is gone. The kit moves its clock to just before,
exactly at, and just after a deadline (the float before it, the deadline itself, the float after
it, and a quarter second either side), then asks the store *one* thing, with nothing before it
that could tidy expired entries away: ``get``, ``delete`` (whether the key was there),
``delete_prefix`` (how many it removed), or ``entries`` where the store lists them. Every
operation must agree on what is live. The clock starts on a whole second and TTLs are quarters,
so every deadline is a float the kit and the store compute alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final, Literal, TypeAlias

from hypothesis import strategies as st

from mcp_conformance._checks.store_laws import StoreUnderTest
from mcp_conformance._contract import LawViolation, awaited
from mcp_conformance._kit import Kit, checks, kit_fixture  # noqa: F401 -- the `kit` fixture

_KEYS: Final = ("t", "t:1", "t:2", "T", "u")
_PREFIX: Final = {"t": "t", "t:1": "t:", "t:2": "t:", "T": "T", "u": "u"}
_TTLS: Final = (0.25, 1.0, 5.25, 3600.5)
_GAPS: Final = (0.0, 0.25, 2.0)
"""Seconds the clock moves between two sets."""

Moment: TypeAlias = Literal["well before", "just before", "at", "just after", "well after"]
Operation: TypeAlias = Literal["get", "delete", "delete_prefix", "entries"]
_MOMENTS: Final[tuple[Moment, ...]] = (
    "well before",
    "just before",
    "at",
    "just after",
    "well after",
)
_OPERATIONS: Final[tuple[Operation, ...]] = ("get", "delete", "delete_prefix", "entries")


@dataclass(frozen=True)
class ExpiryCase:
    """Entries set a gap apart, then one operation at a moment around one entry's deadline."""

    sets: tuple[tuple[str, float | None, float], ...]
    """``(key, ttl, gap before the set)``."""
    about: int
    """Which set's deadline the clock is moved around."""
    moment: Moment
    operation: Operation
    """The one question (the check asks each, of a store of its own)."""
    on: str
    """The key the operation names (its prefix, for the prefix operations)."""


def _moment(deadline: float, moment: Moment) -> float:
    return {
        "well before": deadline - 0.25,
        "just before": math.nextafter(deadline, -math.inf),
        "at": deadline,
        "just after": math.nextafter(deadline, math.inf),
        "well after": deadline + 0.25,
    }[moment]


@st.composite
def _cases(draw: st.DrawFn) -> ExpiryCase:
    sets = draw(
        st.lists(
            st.tuples(
                st.sampled_from(_KEYS),
                st.sampled_from(_TTLS) | st.none(),
                st.sampled_from(_GAPS),
            ),
            min_size=1,
            max_size=6,
        )
    )
    timed = [index for index, (_, ttl, _) in enumerate(sets) if ttl is not None]
    if not timed:
        key, _, gap = sets[0]
        sets[0] = (key, draw(st.sampled_from(_TTLS)), gap)
        timed = [0]
    about = draw(st.sampled_from(timed))
    return ExpiryCase(
        sets=tuple(sets),
        about=about,
        # Half the time exactly at the deadline, and half the time about the key whose deadline
        # it is: drawn evenly, the moment and the key met in too few runs to catch a store that
        # serves an entry at exactly its TTL (it got through one run in ten or three).
        moment=draw(st.sampled_from(_MOMENTS) | st.just("at")),
        operation="get",
        on=draw(st.sampled_from(_KEYS) | st.just(sets[about][0])),
    )


def _fault(case: ExpiryCase, what: str, got: object, expected: object, why: str) -> LawViolation:
    return LawViolation(
        f"{what} answered {got!r}, expected {expected!r}: {why}. An entry set at s with TTL t is "
        "live while the clock reads less than s + t and expired from s + t on (at exactly its TTL "
        f"it is gone), for every operation alike (the clock was moved {case.moment} a deadline)"
    )


@checks("store.expiry")
def test_store_expiry(kit: Kit) -> None:
    """Before, at and after a TTL, get, delete, delete_prefix and entries agree on what is live."""
    listing = "ListingStore" in kit.session.optional

    async def body(case: ExpiryCase) -> None:
        # Every operation, each on a store of its own set up alike: one question per store, with
        # nothing before it that could tidy expired entries away.
        for operation in _OPERATIONS:
            if operation != "entries" or listing:
                await _one(replace(case, operation=operation))

    async def _one(case: ExpiryCase) -> None:
        store = StoreUnderTest(kit)
        # A whole second: the deadlines (quarters after it) are exact floats.
        store.clock.now = float(math.floor(store.clock.now))
        # key -> (deadline or None, what set it, the value)
        held: dict[str, tuple[float | None, str, bytes]] = {}
        deadlines: list[float] = []
        try:
            for number, (key, ttl, gap) in enumerate(case.sets, start=1):
                store.clock.now += gap
                value = f"v{number}".encode()
                await store.set(key, value, ttl)
                deadline = None if ttl is None else store.clock.now + ttl
                held[key] = (deadline, f"set at step {number} with ttl={ttl}", value)
                deadlines.append(math.inf if deadline is None else deadline)
            now = _moment(deadlines[case.about], case.moment)
            # Time never goes back: a moment before the clock's reading is taken as it.
            store.clock.now = max(store.clock.now, now)
            live = {
                key: value
                for key, (deadline, _, value) in held.items()
                if deadline is None or store.clock.now < deadline
            }
            await _judge(case, store, live, held)
        finally:
            await store.close()

    kit.given(_cases(), body, name="store_expiry")


async def _judge(
    case: ExpiryCase,
    store: StoreUnderTest,
    live: Mapping[str, bytes],
    held: Mapping[str, tuple[float | None, str, bytes]],
) -> None:
    """Ask the one question and compare the answer with the contract's."""

    def why(key: str) -> str:
        if key not in held:
            return f"nothing was set at {key!r}"
        deadline, how, _ = held[key]
        state = "live" if key in live else "expired"
        return f"{key!r} was {how}, deadline {deadline}, clock {store.clock.now}: {state}"

    key, prefix = case.on, _PREFIX[case.on]
    # Presence only: which value a live entry holds is store.roundtrip's to judge.
    if case.operation == "get":
        got = await store.get(key)
        if (got is None) is (key in live):
            raise _fault(case, f"get({key!r})", got, "a value" if key in live else None, why(key))
    elif case.operation == "delete":
        present = await store.delete(key)
        if present is not (key in live):
            raise _fault(case, f"delete({key!r})", present, key in live, why(key))
    elif case.operation == "delete_prefix":
        count = await store.delete_prefix(prefix)
        removed = sorted(name for name in live if name.startswith(prefix))
        if count != len(removed):
            reasons = "; ".join(why(name) for name in sorted(held) if name.startswith(prefix))
            raise _fault(case, f"delete_prefix({prefix!r})", count, len(removed), reasons)
    else:
        what = f"entries({prefix!r})"
        listed = await awaited(store.obj.entries(prefix), Mapping[str, bytes], what=what)
        names = sorted(name for name in live if name.startswith(prefix))
        if sorted(listed) != names:
            reasons = "; ".join(why(name) for name in sorted(held) if name.startswith(prefix))
            raise _fault(case, f"{what} listed", sorted(listed), names, reasons)
