"""The CacheStore laws, as hypothesis properties, for every store.

Each ``Test<Store>Laws`` class says how to open a fresh, empty store; the checks are written
once in :class:`StoreLaws`. Redis runs when ``MCP_CORE_REDIS_URL`` points at a server.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_core.stores import CacheStore, MemoryStore, RedisStore, SqliteStore

REDIS_URL = os.environ.get("MCP_CORE_REDIS_URL")

# One method runs under several classes (one per store); see tests/sources/test_source_laws.py.
LAWS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.differing_executors]
)

# Keys mix ordinary characters with those that are special to SQL LIKE, Redis glob patterns and
# the namespace separator, so a store that builds patterns naively fails.
KEYS = st.text(alphabet="ab:*?[]\\%_-é", min_size=1, max_size=6)
VALUES = st.binary(max_size=64)
ENTRIES = st.dictionaries(KEYS, VALUES, max_size=8)


class StoreLaws:
    """``store.*`` laws for a store opened by :meth:`opened`."""

    def opened(self) -> contextlib.AbstractAsyncContextManager[CacheStore]:
        """A fresh, empty store, closed afterwards."""
        raise NotImplementedError

    @LAWS
    @given(entries=ENTRIES, absent=KEYS)
    async def test_roundtrip(self, entries: dict[str, bytes], absent: str) -> None:
        """store.roundtrip: get(k) after set(k, v) is v; a key never set is None."""
        async with self.opened() as store:
            for key, value in entries.items():
                await store.set(key, value)
            for key, value in entries.items():
                assert await store.get(key) == value
            if absent not in entries:
                assert await store.get(absent) is None

    @LAWS
    @given(key=KEYS, first=VALUES, second=VALUES)
    async def test_set_overwrites(self, key: str, first: bytes, second: bytes) -> None:
        """store.roundtrip: the last set wins."""
        async with self.opened() as store:
            await store.set(key, first)
            await store.set(key, second)
            assert await store.get(key) == second

    @LAWS
    @given(entries=ENTRIES.filter(bool), data=st.data())
    async def test_delete_removes_only_its_key(
        self, entries: dict[str, bytes], data: st.DataObject
    ) -> None:
        """store.delete: delete(k) removes k alone and says whether it was there."""
        victim = data.draw(st.sampled_from(sorted(entries)))
        async with self.opened() as store:
            for key, value in entries.items():
                await store.set(key, value)
            assert await store.delete(victim) is True
            assert await store.delete(victim) is False
            assert await store.get(victim) is None
            for key, value in entries.items():
                if key != victim:
                    assert await store.get(key) == value

    @LAWS
    @given(entries=ENTRIES, prefix=KEYS)
    async def test_delete_prefix_removes_only_the_prefixed(
        self, entries: dict[str, bytes], prefix: str
    ) -> None:
        """store.delete: delete_prefix(p) removes exactly the keys starting with p, and counts them."""
        async with self.opened() as store:
            for key, value in entries.items():
                await store.set(key, value)
            doomed = {key for key in entries if key.startswith(prefix)}
            assert await store.delete_prefix(prefix) == len(doomed)
            for key, value in entries.items():
                assert await store.get(key) == (None if key in doomed else value)

    async def test_rejects_bad_arguments(self) -> None:
        """Empty keys, non-bytes values and non-positive TTLs are refused alike by every store."""
        async with self.opened() as store:
            with pytest.raises(ValueError, match="must not be empty"):
                await store.get("")
            with pytest.raises(TypeError, match="cache values are bytes"):
                await store.set("k", "text")  # type: ignore[arg-type]  # the mistake under test
            for ttl in (0, -1.0, float("inf"), float("nan")):
                with pytest.raises(ValueError, match="positive number of seconds"):
                    await store.set("k", b"v", ttl=ttl)
            assert await store.get("k") is None


class TestMemoryStoreLaws(StoreLaws):
    """MemoryStore satisfies the store laws."""

    @contextlib.asynccontextmanager
    async def opened(self) -> AsyncIterator[CacheStore]:
        """A new MemoryStore."""
        yield MemoryStore()


class TestSqliteStoreLaws(StoreLaws):
    """SqliteStore satisfies the store laws."""

    @contextlib.asynccontextmanager
    async def opened(self) -> AsyncIterator[CacheStore]:
        """A SqliteStore in a new file, closed and removed afterwards."""
        with tempfile.TemporaryDirectory() as scratch:
            async with SqliteStore(Path(scratch) / "cache.db") as store:
                yield store


@pytest.mark.skipif(
    REDIS_URL is None,
    reason="set MCP_CORE_REDIS_URL (e.g. redis://127.0.0.1:6379/15) to test RedisStore",
)
class TestRedisStoreLaws(StoreLaws):
    """RedisStore satisfies the store laws (against a real server)."""

    @contextlib.asynccontextmanager
    async def opened(self) -> AsyncIterator[CacheStore]:
        """A RedisStore in a namespace of its own, emptied and closed afterwards."""
        assert REDIS_URL is not None
        async with RedisStore(REDIS_URL, namespace=f"test-{uuid.uuid4().hex}") as store:
            try:
                yield store
            finally:
                await store.delete_prefix("")
