"""Breaks store.expiry: delete_prefix counts expired entries it has not tidied away yet."""

from __future__ import annotations

from ._cache_store import DictStore


class _CountsExpired(DictStore):
    async def delete_prefix(self, prefix: str) -> int:
        doomed = [key for key in self.held if self.matches(key, prefix)]
        for key in doomed:
            self.held.pop(key, None)
        return len(doomed)


make_cache_store = _CountsExpired
