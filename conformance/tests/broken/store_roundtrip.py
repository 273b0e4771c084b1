"""Breaks store.roundtrip: ``set`` keeps the first value at a key (an ``INSERT OR IGNORE``)."""

from __future__ import annotations

from ._cache_store import DictStore


class _FirstWins(DictStore):
    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None:
        if self.live(key) is None:
            await super().set(key, value, ttl=ttl)


make_cache_store = _FirstWins
