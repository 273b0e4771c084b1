"""MemoryStore: the embedded default cache store, one process, no I/O."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import final

from mcp_core.stores._checks import check_key, check_ttl, check_value

__all__ = ["MemoryStore"]


@final
class MemoryStore:
    """A :class:`~mcp_core.stores.CacheStore` held in a dict, private to one process.

    Expiry is measured on ``clock``, a monotonic clock by default (so a wall-clock jump neither
    revives nor kills entries); pass a fake clock to test TTLs without sleeping. Expired entries
    are dropped when next touched. Every method runs without awaiting, so each is atomic with
    respect to other tasks on the same event loop.
    """

    __slots__ = ("_clock", "_entries")

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        # key -> (value, expiry deadline on self._clock or None)
        self._entries: dict[str, tuple[bytes, float | None]] = {}

    def __repr__(self) -> str:
        return f"MemoryStore(<{len(self._entries)} entries>)"

    def _live(self, key: str, now: float) -> bytes | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        value, deadline = entry
        if deadline is not None and now >= deadline:
            del self._entries[key]
            return None
        return value

    async def get(self, key: str) -> bytes | None:
        """The value at ``key``, or None when absent or expired."""
        return self._live(check_key(key), self._clock())

    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None:
        """Store ``value`` at ``key``, expiring after ``ttl`` seconds (never when None)."""
        check_key(key)
        check_value(value)
        seconds = check_ttl(ttl)
        self._entries[key] = (value, None if seconds is None else self._clock() + seconds)

    async def delete(self, key: str) -> bool:
        """Remove ``key``; return whether it was present (an expired entry was not)."""
        present = self._live(check_key(key), self._clock()) is not None
        self._entries.pop(key, None)
        return present

    async def delete_prefix(self, prefix: str) -> int:
        """Remove every key starting with ``prefix``; return how many live entries were removed."""
        if not isinstance(prefix, str):
            raise TypeError(f"a key prefix is a string, got {type(prefix).__name__}")
        now = self._clock()
        doomed = [key for key in self._entries if key.startswith(prefix)]
        removed = sum(1 for key in doomed if self._live(key, now) is not None)
        for key in doomed:
            self._entries.pop(key, None)
        return removed

    async def entries(self, prefix: str) -> Mapping[str, bytes]:
        """Every live entry whose key starts with ``prefix``: key -> value."""
        if not isinstance(prefix, str):
            raise TypeError(f"a key prefix is a string, got {type(prefix).__name__}")
        now = self._clock()
        found = {}
        for key in [key for key in self._entries if key.startswith(prefix)]:
            value = self._live(key, now)
            if value is not None:
                found[key] = value
        return found
