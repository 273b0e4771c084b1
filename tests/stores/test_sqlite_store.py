"""SqliteStore: persistence, WAL, TTL, threads and error translation."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from mcp_core.errors import CacheStoreError
from mcp_core.stores import SqliteStore


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class TestSqliteStore:
    """SqliteStore keeps entries across restarts and translates SQLite failures."""

    async def test_entries_survive_a_restart(self, tmp_path: Path) -> None:
        """A new store on the same file reads what an earlier one wrote."""
        path = tmp_path / "cache.db"
        async with SqliteStore(path) as first:
            await first.set("k", b"value")
        async with SqliteStore(path) as second:
            assert await second.get("k") == b"value"

    async def test_ttl_is_wall_clock_and_persists(self, tmp_path: Path) -> None:
        """Deadlines are stored, so a later process expires the entry at the same moment."""
        clock = Clock()
        path = tmp_path / "cache.db"
        async with SqliteStore(path, clock=clock) as first:
            await first.set("k", b"v", ttl=30)
        clock.now += 29
        async with SqliteStore(path, clock=clock) as second:
            assert await second.get("k") == b"v"
            clock.now += 1
            assert await second.get("k") is None
            assert await second.delete("k") is False

    async def test_uses_wal(self, tmp_path: Path) -> None:
        """The database is in WAL mode, so readers in other processes do not block the writer."""
        path = tmp_path / "cache.db"
        async with SqliteStore(path) as store:
            await store.set("k", b"v")
        with sqlite3.connect(path) as connection:
            assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)

    async def test_two_connections_share_the_file(self, tmp_path: Path) -> None:
        """Two stores open at once (two workers) see each other's writes."""
        path = tmp_path / "cache.db"
        async with SqliteStore(path) as one, SqliteStore(path) as two:
            await one.set("k", b"from one")
            assert await two.get("k") == b"from one"
            assert await two.delete_prefix("k") == 1
            assert await one.get("k") is None

    async def test_statements_run_off_the_event_loop(self, tmp_path: Path) -> None:
        """Every statement executes in a worker thread, never on the loop's thread."""
        store = SqliteStore(tmp_path / "cache.db")
        await store.set("warm", b"up")
        assert store._connection is not None
        threads: set[int] = set()
        store._connection.set_trace_callback(lambda statement: threads.add(threading.get_ident()))
        await store.get("warm")
        await store.set("k", b"v")
        await store.aclose()
        assert threads
        assert threading.get_ident() not in threads

    async def test_a_corrupt_file_raises_cache_store_error(self, tmp_path: Path) -> None:
        """A file that is not a database fails with CacheStoreError chained to sqlite3's error."""
        path = tmp_path / "cache.db"
        path.write_bytes(b"this is not a database" * 100)
        with pytest.raises(CacheStoreError, match="deleting it only loses cached entries") as info:
            await SqliteStore(path).get("k")
        assert isinstance(info.value.__cause__, sqlite3.DatabaseError)
        assert info.value.key == "k"

    async def test_an_unopenable_path_raises_cache_store_error(self, tmp_path: Path) -> None:
        """A path in a missing directory fails with CacheStoreError, not sqlite3's own error."""
        with pytest.raises(CacheStoreError):
            await SqliteStore(tmp_path / "missing" / "cache.db").set("k", b"v")

    async def test_a_closed_store_reopens(self, tmp_path: Path) -> None:
        """aclose() releases the connection; the next call opens it again."""
        store = SqliteStore(tmp_path / "cache.db")
        await store.set("k", b"v")
        await store.aclose()
        assert store._connection is None
        assert await store.get("k") == b"v"
        await store.aclose()

    def test_repr_shows_the_path(self, tmp_path: Path) -> None:
        """The repr names the database file."""
        path = tmp_path / "cache.db"
        assert repr(SqliteStore(path)) == f"SqliteStore({str(path)!r})"
