"""A small cache store written from the CacheStore contract; broken ones override a part.

Entries are held in a dict: key -> (value, deadline on the given clock or None).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping


class DictStore:
    """Correct: last set wins, entries expire at their deadline, deletes and listings are exact."""

    def __init__(self, *, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.held: dict[str, tuple[bytes, float | None]] = {}

    def live(self, key: str) -> bytes | None:
        value, deadline = self.held.get(key, (None, None))
        if deadline is not None and self.clock() >= deadline:
            del self.held[key]
            return None
        return value

    async def get(self, key: str) -> bytes | None:
        return self.live(key)

    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None:
        self.held[key] = (value, None if ttl is None else self.clock() + ttl)

    def matches(self, key: str, prefix: str) -> bool:
        """Whether ``delete_prefix(prefix)`` removes ``key``."""
        return key.startswith(prefix)

    async def delete(self, key: str) -> bool:
        present = self.live(key) is not None
        self.held.pop(key, None)
        return present

    async def delete_prefix(self, prefix: str) -> int:
        doomed = [key for key in self.held if self.matches(key, prefix)]
        removed = sum(1 for key in doomed if self.live(key) is not None)
        for key in doomed:
            self.held.pop(key, None)
        return removed

    async def entries(self, prefix: str) -> Mapping[str, bytes]:
        # Plain startswith, not matches(): a store breaking delete_prefix lists correctly.
        listed = {key: self.live(key) for key in list(self.held) if key.startswith(prefix)}
        return {key: value for key, value in listed.items() if value is not None}
