"""A small cache store written from the CacheStore contract; broken ones override a part.

Entries live in a dict: key -> (value, deadline on the given clock or None).
"""

from __future__ import annotations

from collections.abc import Callable


class DictStore:
    """Correct: last set wins, entries expire at their deadline, deletes remove exactly what they name."""

    def __init__(self, *, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.entries: dict[str, tuple[bytes, float | None]] = {}

    def live(self, key: str) -> bytes | None:
        value, deadline = self.entries.get(key, (None, None))
        if deadline is not None and self.clock() >= deadline:
            del self.entries[key]
            return None
        return value

    async def get(self, key: str) -> bytes | None:
        return self.live(key)

    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None:
        self.entries[key] = (value, None if ttl is None else self.clock() + ttl)

    def matches(self, key: str, prefix: str) -> bool:
        """Whether ``delete_prefix(prefix)`` removes ``key``."""
        return key.startswith(prefix)

    async def delete(self, key: str) -> bool:
        present = self.live(key) is not None
        self.entries.pop(key, None)
        return present

    async def delete_prefix(self, prefix: str) -> int:
        doomed = [key for key in self.entries if self.matches(key, prefix)]
        removed = sum(1 for key in doomed if self.live(key) is not None)
        for key in doomed:
            self.entries.pop(key, None)
        return removed
