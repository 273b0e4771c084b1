"""Breaks store.roundtrip: the TTL is accepted and ignored, so entries never expire."""

from __future__ import annotations

from ._cache_store import DictStore


class _Forever(DictStore):
    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None:
        await super().set(key, value, ttl=None)


make_cache_store = _Forever
