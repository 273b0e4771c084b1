"""SqliteStore: persistence, no mapped -shm file, TTL, threads and error translation."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from mcp_core.errors import CacheStoreError
from mcp_core.stores import SqliteStore


def _in_a_process(path: Path, body: str) -> subprocess.CompletedProcess[str]:
    """Run ``body`` (async code using ``store``, a SqliteStore on ``path``) in a new process.

    A signal (SIGBUS) shows as a negative return code instead of ending the test run.
    """
    indented = textwrap.indent(body, "        ")
    code = (
        "import anyio\n"
        "from mcp_core.stores import SqliteStore\n"
        "async def main():\n"
        f"    async with SqliteStore({str(path)!r}) as store:\n"
        f"{indented}\n"
        "anyio.run(main)\n"
    )
    return subprocess.run(  # noqa: S603 -- this interpreter, our own script
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def _freeze(path: Path, *, undo: bool = False) -> bool:
    """Make ``path`` immutable (``chattr +i``) where this machine allows; whether it did."""
    chattr = shutil.which("chattr")
    if chattr is None:
        return False
    done = subprocess.run(  # noqa: S603 -- chattr on a file the test made
        [chattr, "-i" if undo else "+i", str(path)], capture_output=True, check=False
    )
    return done.returncode == 0


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

    async def test_no_shared_memory_file(self, tmp_path: Path) -> None:
        """The database uses a rollback journal: no -shm file is made or mapped."""
        path = tmp_path / "cache.db"
        async with SqliteStore(path) as store, SqliteStore(path) as other:
            await store.set("k", b"v")
            assert await other.get("k") == b"v"
            assert not (tmp_path / "cache.db-shm").exists()
        with sqlite3.connect(path) as connection:
            assert connection.execute("PRAGMA journal_mode").fetchone() == ("delete",)

    async def test_a_wal_file_is_converted_without_its_shm(self, tmp_path: Path) -> None:
        """Attacker (a cache writer without the secret) freezes a WAL file's -shm: no signal.

        A file an older version left in WAL mode, beside a -shm file the attacker truncated
        (and, where it can, made immutable), opens, converts and serves its entries.
        """
        path = tmp_path / "cache.db"
        with sqlite3.connect(path, isolation_level=None) as connection:
            connection.execute("PRAGMA journal_mode=WAL")
        connection.close()
        async with SqliteStore(path) as store:
            await store.set("k", b"kept")
        with sqlite3.connect(path, isolation_level=None) as connection:
            connection.execute("PRAGMA journal_mode=WAL")
        connection.close()
        shm = tmp_path / "cache.db-shm"
        shm.write_bytes(b"\0" * 100)
        frozen = _freeze(shm)
        try:
            outcome = _in_a_process(path, "print(await store.get('k'))")
        finally:
            if frozen:
                _freeze(shm, undo=True)
        assert outcome.returncode == 0, outcome.stderr[-2000:]
        assert outcome.stdout.strip() == "b'kept'"

    def test_a_shm_truncated_under_a_live_store_is_no_signal(self, tmp_path: Path) -> None:
        """Attacker truncates the cache's -shm file while a worker uses the store: no SIGBUS.

        Before: SQLite mapped the -shm file, and the worker died of SIGBUS at its next access
        beyond the truncated end. Now there is no such file to truncate; the worker carries on.
        """
        path = tmp_path / "cache.db"
        script = (
            "import os\n"
            "for n in range(50): await store.set(f'k{n}', b'v')\n"
            f"shm = {str(path)!r} + '-shm'\n"
            "if os.path.exists(shm): os.truncate(shm, 100)\n"
            "for n in range(50): await store.set(f'j{n}', b'w')\n"
            "print(len([n for n in range(50) if await store.get(f'j{n}') == b'w']))\n"
        )
        outcome = _in_a_process(path, script)
        assert outcome.returncode == 0, (outcome.returncode, outcome.stderr[-2000:])
        assert outcome.stdout.strip() == "50"

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
