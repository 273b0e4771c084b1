"""Listing store law: ``ListingStore``'s ``store.entries`` (an ``--mcp-cache-store`` target).

``entries(prefix)`` is optional (``ListingStore``): a cache store without it claims no listing,
and the law is N/A (declared). Where it is there, the kit sets, deletes and lets time pass on the
kit's clock (entries expire), asks ``entries(p)`` for prefixes that are wildcards somewhere
(during the steps, and for every prefix at the end, again after each TTL has passed), and
compares it with what the store's own ``get`` answers for every key the kit used: the law is
judged against the store, so a store that keeps wrong values fails ``store.roundtrip`` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, TypeAlias

from hypothesis import strategies as st

from mcp_conformance._checks.store_laws import (
    _KEYS,
    _PREFIXES,
    _TTLS,
    _VALUES,
    _WAITS,
    StoreUnderTest,
    shown,
)
from mcp_conformance._contract import LawViolation, awaited
from mcp_conformance._kit import Kit, checks, kit_fixture  # noqa: F401 -- the `kit` fixture

_NOT_CLAIMED: Final = (
    "optional capability not implemented: it has no entries(prefix) (ListingStore), so it "
    "claims no listing of its entries"
)

Step: TypeAlias = tuple[str, bytes, float | None] | tuple[str, str] | float
"""``(key, value, ttl)`` to set, ``("delete", key)`` / ``("prefix", p)`` / ``("list", p)``, or
seconds the clock moves on."""

_STEPS: Final = st.lists(
    st.tuples(st.sampled_from(_KEYS), _VALUES, st.sampled_from(_TTLS))
    | st.tuples(st.just("delete"), st.sampled_from(_KEYS))
    | st.tuples(st.just("prefix"), st.sampled_from(_PREFIXES))
    | st.tuples(st.just("list"), st.sampled_from(_PREFIXES))
    | st.sampled_from(_WAITS),
    min_size=1,
    max_size=24,
)


async def _compare(store: StoreUnderTest, prefix: str, number: int) -> None:
    what = f"entries({prefix!r})"
    listed: Mapping[str, bytes] = await awaited(
        store.obj.entries(prefix), Mapping[str, bytes], what=what
    )
    live = {key: value for key, value in (await store.everything()).items() if value is not None}
    expected = {key: value for key, value in live.items() if key.startswith(prefix)}
    if dict(listed) == expected:
        return
    extra = sorted(set(listed) - set(expected))
    missing = sorted(set(expected) - set(listed))
    differ = sorted(key for key in set(listed) & set(expected) if listed[key] != expected[key])
    faults = [
        *(
            f"{key!r} is listed but get({key!r}) answers {shown(live.get(key))}"
            + ("" if key.startswith(prefix) else f" (and it does not start with {prefix!r})")
            for key in extra
        ),
        *(f"{key!r} holds {shown(expected[key])} but is not listed" for key in missing),
        *(
            f"{key!r} is listed with {shown(listed[key])} but get() answers {shown(expected[key])}"
            for key in differ
        ),
    ]
    raise LawViolation(
        f"at step {number}, {what}: {'; '.join(faults)}. entries(p) lists exactly the live "
        "entries (not expired, not deleted) whose key starts with p as plain text, each with "
        "the value get() returns"
    )


@checks("store.entries")
def test_store_entries(kit: Kit) -> None:
    """entries(p) is exactly the live entries whose key starts with p, with get()'s values."""
    if "ListingStore" not in kit.session.optional:
        kit.not_applicable(_NOT_CLAIMED, why="declared")

    async def body(steps: list[Step]) -> None:
        store = StoreUnderTest(kit)
        try:
            for number, step in enumerate(steps, start=1):
                if isinstance(step, float):
                    store.clock.now += step
                elif len(step) == 3:  # noqa: PLR2004 -- a set: key, value, ttl
                    await store.set(*step)
                elif step[0] == "delete":
                    await store.delete(step[1])
                elif step[0] == "prefix":
                    await store.delete_prefix(step[1])
                else:
                    await _compare(store, step[1], number)
            # Then every prefix, now and as the clock passes each TTL the kit uses, so entries
            # that expired are always among those listed.
            for number, wait in enumerate((0.0, *_TTLS[1:]), start=len(steps) + 1):
                store.clock.now += wait
                for prefix in _PREFIXES:
                    await _compare(store, prefix, number)
        finally:
            await store.close()

    kit.given(_STEPS, body, name="store_entries")
