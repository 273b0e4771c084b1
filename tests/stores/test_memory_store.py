"""MemoryStore: TTLs on an injectable monotonic clock."""

from __future__ import annotations

from mcp_core.stores import MemoryStore


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class TestMemoryStore:
    """MemoryStore expires entries on its clock and counts only live ones."""

    async def test_entries_expire_after_their_ttl(self) -> None:
        """An entry is there until its TTL has passed, then gone; no TTL means forever."""
        clock = Clock()
        store = MemoryStore(clock=clock)
        await store.set("short", b"1", ttl=10)
        await store.set("forever", b"2")
        clock.now = 9.999
        assert await store.get("short") == b"1"
        clock.now = 10.0
        assert await store.get("short") is None
        clock.now = 1e9
        assert await store.get("forever") == b"2"

    async def test_expired_entries_are_not_counted_as_removed(self) -> None:
        """delete() and delete_prefix() report only entries that were still alive."""
        clock = Clock()
        store = MemoryStore(clock=clock)
        await store.set("app:old", b"1", ttl=1)
        await store.set("app:new", b"2")
        await store.set("app:gone", b"3", ttl=1)
        clock.now = 5
        assert await store.delete("app:old") is False
        assert await store.delete_prefix("app:") == 1
        assert await store.get("app:new") is None

    async def test_setting_again_resets_the_ttl(self) -> None:
        """A new set() replaces the value and its deadline."""
        clock = Clock()
        store = MemoryStore(clock=clock)
        await store.set("k", b"1", ttl=1)
        await store.set("k", b"2")
        clock.now = 100
        assert await store.get("k") == b"2"

    def test_repr_counts_entries(self) -> None:
        """The repr says how many entries are held."""
        assert repr(MemoryStore()) == "MemoryStore(<0 entries>)"
