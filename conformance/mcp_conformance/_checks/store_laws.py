r"""Cache store laws: ``CacheStore``'s ``store.*`` (an ``--mcp-cache-store`` target).

A factory is called as ``make_cache_store(clock=...)`` and returns a new, empty store whose TTLs
run on ``clock``, a clock only the kit moves: expiry is checked without waiting. Keys are chosen
to catch a store that matches keys or prefixes as patterns (``*``, ``?``, ``[``, ``\`` for glob and
Redis ``MATCH``; ``%`` and ``_`` for SQL ``LIKE``), compares them case-insensitively, or mangles
text that is not ASCII; values are arbitrary bytes (empty, NUL, not UTF-8, 64 KiB).

Each law is checked on its own: ``store.roundtrip`` with sets, gets and time passing against a
model of the contract; ``store.delete`` against the store's own answers just before each delete
(so a store that keeps wrong values but forgets the right keys passes it and fails only the
first law).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, TypeAlias, final

from hypothesis import strategies as st

from mcp_conformance._contract import LawViolation, awaited
from mcp_conformance._events import KitClock
from mcp_conformance._kit import Kit, checks, kit_fixture  # noqa: F401 -- the `kit` fixture

_KEYS: Final = ("a", "ab", "aB", "a*", "a?b", "a[b]", "a%", "a_b", "a\\b", "é", "é:1", "z")
_PREFIXES: Final = ("", "a", "A", "a*", "a?", "a[", "a%", "a_", "a\\", "é", "é:", "zz")
_TTLS: Final = (None, 5.25, 61.25)
_WAITS: Final = (1.5, 4.0, 30.0)
"""Waits in half seconds, TTLs at a quarter past: no step lands exactly on a deadline."""
_VALUES: Final = st.binary(max_size=24) | st.sampled_from(
    (b"", b"\x00", b"\xff\xfe not UTF-8", b'{"json": true}', b"x" * 65_536)
)

Set: TypeAlias = tuple[str, bytes, float | None]
Step: TypeAlias = Set | str | float
"""``(key, value, ttl)`` to set, a key to get, or seconds the clock moves on."""


def shown(value: bytes | None) -> str:
    if value is None:
        return "None"
    return repr(value) if len(value) <= 30 else f"{value[:20]!r}...({len(value)} bytes)"  # noqa: PLR2004 -- what a message quotes


@final
class StoreUnderTest:
    """A target store, every call awaited and its answer type-checked."""

    def __init__(self, kit: Kit) -> None:
        self.clock = KitClock()
        # The target is duck-typed: every call below is awaited and checked.
        self.obj: Any = kit.target.factory(clock=self.clock)

    async def get(self, key: str) -> bytes | None:
        """``get(key)``."""
        found: bytes | None = await awaited(self.obj.get(key), bytes | None, what=f"get({key!r})")
        return found

    async def set(self, key: str, value: bytes, ttl: float | None) -> None:
        """``set(key, value, ttl=ttl)``."""
        what = f"set({key!r}, {shown(value)}, ttl={ttl})"
        await awaited(self.obj.set(key, value, ttl=ttl), None, what=what)

    async def delete(self, key: str) -> bool:
        """``delete(key)``."""
        found: bool = await awaited(self.obj.delete(key), bool, what=f"delete({key!r})")
        return found

    async def delete_prefix(self, prefix: str) -> int:
        """``delete_prefix(prefix)``."""
        what = f"delete_prefix({prefix!r})"
        found: int = await awaited(self.obj.delete_prefix(prefix), int, what=what)
        return found

    async def everything(self) -> dict[str, bytes | None]:
        """What ``get`` answers for every key the kit uses."""
        return {key: await self.get(key) for key in _KEYS}

    async def close(self) -> None:
        """``aclose()``, where the store has it: the kit made it, the kit closes it."""
        close = getattr(self.obj, "aclose", None)
        if callable(close):
            await awaited(close(), object, what="aclose()")


# -- store.roundtrip ------------------------------------------------------------------------------

_STEPS: Final = st.lists(
    # Half the sets go to one of three keys, so a key is often set again before it is read (a
    # store that keeps the first value got through one run in three when sets spread over all).
    st.tuples(st.sampled_from(_KEYS[:3]) | st.sampled_from(_KEYS), _VALUES, st.sampled_from(_TTLS))
    | st.sampled_from(_KEYS)
    | st.sampled_from(_WAITS),
    min_size=1,
    max_size=24,
)


@final
class _Expected:
    """The contract's answer to ``get``: the last value set at a key, until its deadline."""

    def __init__(self, store: StoreUnderTest) -> None:
        self.store = store
        # key -> (value, deadline on the kit's clock or None, the step that set it)
        self.entries: dict[str, tuple[bytes, float | None, str]] = {}

    async def set(self, key: str, value: bytes, ttl: float | None, number: int) -> None:
        await self.store.set(key, value, ttl)
        deadline = None if ttl is None else self.store.clock.now + ttl
        self.entries[key] = (value, deadline, f"step {number} set {shown(value)} (ttl={ttl})")

    def at(self, key: str) -> tuple[bytes | None, str]:
        """What ``get(key)`` answers now, and why."""
        if key not in self.entries:
            return None, f"nothing was ever set at {key!r}"
        value, deadline, how = self.entries[key]
        if deadline is not None and self.store.clock.now >= deadline:
            return None, f"{how}, and its TTL has passed"
        return value, how

    async def compare(self, key: str, number: int) -> None:
        want, how = self.at(key)
        got = await self.store.get(key)
        if got != want:
            raise LawViolation(
                f"at step {number}, get({key!r}) returned {shown(got)}, expected "
                f"{shown(want)}: {how}"
            )


@checks("store.roundtrip")
def test_store_roundtrip(kit: Kit) -> None:
    """get(k) answers the last value set at k, byte for byte, until its TTL passes, then None."""

    async def body(steps: list[Step]) -> None:
        store = StoreUnderTest(kit)
        expected = _Expected(store)
        try:
            for number, step in enumerate(steps, start=1):
                if isinstance(step, tuple):
                    await expected.set(*step, number)
                elif isinstance(step, str):
                    await expected.compare(step, number)
                else:
                    store.clock.now += step
            for key in _KEYS:
                await expected.compare(key, len(steps) + 1)
        finally:
            await store.close()

    kit.given(_STEPS, body, name="store_roundtrip")


# -- store.delete ---------------------------------------------------------------------------------

Operation: TypeAlias = tuple[str, str] | tuple[str, str, bytes]
"""``("set", key, value)``, ``("delete", key)`` or ``("prefix", prefix)``."""

_OPERATIONS: Final = st.lists(
    st.tuples(st.just("set"), st.sampled_from(_KEYS), _VALUES)
    | st.tuples(st.just("delete"), st.sampled_from(_KEYS))
    | st.tuples(st.just("prefix"), st.sampled_from(_PREFIXES)),
    min_size=1,
    max_size=20,
)


def _changed(
    what: str,
    before: dict[str, bytes | None],
    after: dict[str, bytes | None],
    removed: Iterable[str],
) -> None:
    gone = set(removed)
    for key in _KEYS:
        want = None if key in gone else before[key]
        if after[key] != want:
            if key in gone:
                fault = f"{key!r} still holds {shown(after[key])}: it was to be removed"
            else:
                fault = (
                    f"{key!r} held {shown(before[key])} before and {shown(after[key])} after: "
                    "only the keys named may change"
                )
            raise LawViolation(f"after {what}, {fault}")


@checks("store.delete")
def test_store_delete(kit: Kit) -> None:
    """delete(k) removes only k; delete_prefix(p) exactly the keys starting with p; both count."""

    async def body(example: tuple[set[str], list[Operation]]) -> None:
        unset, operations = example
        store = StoreUnderTest(kit)
        try:
            # Every key but a generated few holds a value from the start, so that each delete
            # has neighbours to spare or to remove by mistake.
            for key in _KEYS:
                if key not in unset:
                    await store.set(key, f"first at {key}".encode(), None)
            for number, operation in enumerate(operations, start=1):
                if operation[0] == "set":
                    _, key, value = operation  # type: ignore[misc]  # a set has three parts
                    await store.set(key, value, None)
                    continue
                before = await store.everything()
                target = operation[1]
                if operation[0] == "delete":
                    what = f"delete({target!r}) at step {number}"
                    removed = [target]
                    answer: bool | int = await store.delete(target)
                    expected: bool | int = before[target] is not None
                else:
                    what = f"delete_prefix({target!r}) at step {number}"
                    removed = [key for key in _KEYS if key.startswith(target)]
                    answer = await store.delete_prefix(target)
                    expected = sum(1 for key in removed if before[key] is not None)
                if answer != expected or type(answer) is not type(expected):
                    held = sorted(key for key in removed if before[key] is not None)
                    raise LawViolation(
                        f"{what} returned {answer!r}, expected {expected!r}: of the keys the kit "
                        f"stored, those it removes that held a value were {held} (a key or prefix "
                        "is plain text: no character in it is a wildcard)"
                    )
                _changed(what, before, await store.everything(), removed)
        finally:
            await store.close()

    # "A generated few": at most three keys start unset, whatever the seed draws.
    unset = st.sets(st.sampled_from(_KEYS), max_size=3)
    kit.given(st.tuples(unset, _OPERATIONS), body, name="store_delete")
