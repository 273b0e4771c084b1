"""Breaks store.expiry: an entry is still served at exactly its TTL (``>`` where ``>=`` belongs)."""

from __future__ import annotations

from ._cache_store import DictStore


class _Inclusive(DictStore):
    def live(self, key: str) -> bytes | None:
        value, deadline = self.held.get(key, (None, None))
        if deadline is not None and self.clock() > deadline:
            del self.held[key]
            return None
        return value


make_cache_store = _Inclusive
