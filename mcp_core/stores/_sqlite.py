"""SqliteStore: a cache store in one SQLite file, shared by the processes of one host."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Final, Self, TypeVar, final

import anyio.to_thread

from mcp_core.errors import CacheStoreError
from mcp_core.stores._checks import check_key, check_ttl, check_value

if TYPE_CHECKING:
    import sqlite3

__all__ = ["SqliteStore"]

_T = TypeVar("_T")

_TABLE: Final = "mcp_core_cache"
_SCHEMA: Final = (
    f"CREATE TABLE IF NOT EXISTS {_TABLE} "
    "(key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL, expires_at REAL)"
)
# Seconds a writer waits for another process's lock before failing with "database is locked".
_BUSY_TIMEOUT: Final = 5.0


@final
class SqliteStore:
    """A :class:`~mcp_core.stores.CacheStore` in a SQLite database file.

    Entries survive restarts, and several processes on one host may share the file, which uses
    a rollback journal and file locks only (ADR 0071): never WAL's shared-memory ``-shm`` file,
    which SQLite maps into memory, so that whoever can write the cache directory (truncate,
    replace or freeze that file) makes the store fail with an error rather than the process die
    of SIGBUS. A file left in WAL mode by an older version is converted when opened (the
    conversion never maps the ``-shm`` file either). Every statement runs in a worker thread
    (``anyio.to_thread``), never on the event loop; one connection per store is serialized by a
    lock. Expiry uses ``clock``, wall-clock seconds by default, because deadlines must mean the
    same thing to the next process that opens the file.

    The connection opens on first use; :meth:`aclose` (or ``async with``) closes it. SQLite
    failures (unwritable path, corrupt file, lock timeout) raise
    :class:`~mcp_core.errors.CacheStoreError` chained to the ``sqlite3`` error.
    """

    __slots__ = ("_clock", "_connection", "_lock", "_path")

    def __init__(
        self, path: str | os.PathLike[str], *, clock: Callable[[], float] = time.time
    ) -> None:
        self._path = os.fspath(path)
        self._clock = clock
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SqliteStore({self._path!r})"

    @property
    def path(self) -> str:
        """The database file (``":memory:"`` for a private in-memory database)."""
        return self._path

    # -- the thread side ---------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        # Called with self._lock held.
        if self._connection is None:
            import sqlite3  # noqa: PLC0415 -- imported by a store in use, not by every app (ADR 0057)

            connection = sqlite3.connect(
                self._path, timeout=_BUSY_TIMEOUT, isolation_level=None, check_same_thread=False
            )
            try:
                # Exclusive locking before the first access: SQLite then keeps any WAL index in
                # private memory, never in the mapped -shm file, while it leaves WAL mode; back to
                # normal locking, the lock is let go at the first statement's end.
                connection.execute("PRAGMA locking_mode=EXCLUSIVE")
                connection.execute("PRAGMA journal_mode=DELETE")
                connection.execute("PRAGMA locking_mode=NORMAL")
                connection.execute(_SCHEMA)
            except BaseException:
                connection.close()
                raise
            self._connection = connection
        return self._connection

    def _run(self, key: str | None, operation: Callable[[sqlite3.Connection], _T]) -> _T:
        import sqlite3  # noqa: PLC0415 -- see _connect

        with self._lock:
            try:
                connection = self._connect()
                connection.execute("BEGIN IMMEDIATE")
                try:
                    result = operation(connection)
                except BaseException:
                    connection.execute("ROLLBACK")
                    raise
                connection.execute("COMMIT")
            except sqlite3.Error as exc:
                raise CacheStoreError(
                    f"SQLite cache {self._path!r} failed: {exc}; check that the file is writable "
                    "and not corrupt (deleting it only loses cached entries)",
                    key=key,
                ) from exc
        return result

    async def _call(self, key: str | None, operation: Callable[[sqlite3.Connection], _T]) -> _T:
        return await anyio.to_thread.run_sync(self._run, key, operation)

    # -- CacheStore --------------------------------------------------------------------------

    async def get(self, key: str) -> bytes | None:
        """The value at ``key``, or None when absent or expired."""
        check_key(key)
        now = self._clock()

        def get(connection: sqlite3.Connection) -> bytes | None:
            row = connection.execute(
                f"SELECT value, expires_at FROM {_TABLE} WHERE key = ?",  # noqa: S608 -- constant table name
                (key,),
            ).fetchone()
            if row is None:
                return None
            value, expires_at = row
            if expires_at is not None and now >= expires_at:
                connection.execute(f"DELETE FROM {_TABLE} WHERE key = ?", (key,))  # noqa: S608 -- same
                return None
            return bytes(value)

        return await self._call(key, get)

    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None:
        """Store ``value`` at ``key``, expiring after ``ttl`` seconds (never when None)."""
        check_key(key)
        check_value(value)
        seconds = check_ttl(ttl)
        expires_at = None if seconds is None else self._clock() + seconds

        def put(connection: sqlite3.Connection) -> None:
            connection.execute(
                f"INSERT OR REPLACE INTO {_TABLE} (key, value, expires_at) VALUES (?, ?, ?)",  # noqa: S608 -- constant table name
                (key, value, expires_at),
            )

        await self._call(key, put)

    async def delete(self, key: str) -> bool:
        """Remove ``key``; return whether it was present (an expired entry was not)."""
        check_key(key)
        now = self._clock()

        def delete(connection: sqlite3.Connection) -> bool:
            live = connection.execute(
                f"DELETE FROM {_TABLE} WHERE key = ? AND (expires_at IS NULL OR expires_at > ?)",  # noqa: S608 -- constant table name
                (key, now),
            ).rowcount
            connection.execute(f"DELETE FROM {_TABLE} WHERE key = ?", (key,))  # noqa: S608 -- same
            return live > 0

        return await self._call(key, delete)

    async def delete_prefix(self, prefix: str) -> int:
        """Remove every key starting with ``prefix``; return how many live entries were removed."""
        if not isinstance(prefix, str):
            raise TypeError(f"a key prefix is a string, got {type(prefix).__name__}")
        now = self._clock()

        def delete_prefix(connection: sqlite3.Connection) -> int:
            # Expired rows go first (they are not counted); substr() rather than LIKE/GLOB so that
            # no character in the prefix acts as a wildcard.
            connection.execute(
                f"DELETE FROM {_TABLE} WHERE expires_at IS NOT NULL AND expires_at <= ?",  # noqa: S608 -- constant table name
                (now,),
            )
            cursor = connection.execute(
                f"DELETE FROM {_TABLE} WHERE substr(key, 1, ?) = ?",  # noqa: S608 -- same
                (len(prefix), prefix),
            )
            return cursor.rowcount

        return await self._call(None, delete_prefix)

    async def entries(self, prefix: str) -> Mapping[str, bytes]:
        """Every live entry whose key starts with ``prefix``: key -> value."""
        if not isinstance(prefix, str):
            raise TypeError(f"a key prefix is a string, got {type(prefix).__name__}")
        now = self._clock()

        def entries(connection: sqlite3.Connection) -> dict[str, bytes]:
            rows = connection.execute(
                f"SELECT key, value FROM {_TABLE} WHERE substr(key, 1, ?) = ? "  # noqa: S608 -- constant table name
                "AND (expires_at IS NULL OR expires_at > ?)",
                (len(prefix), prefix, now),
            )
            return {key: bytes(value) for key, value in rows}

        return await self._call(None, entries)

    # -- lifecycle ---------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the connection; a later call reopens it."""

        def close() -> None:
            with self._lock:
                if self._connection is not None:
                    self._connection.close()
                    self._connection = None

        await anyio.to_thread.run_sync(close)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()
