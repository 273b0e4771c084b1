"""Breaks store.entries: ``entries`` lists what the store holds, expired entries included.

The listing forgets the ``expires_at > now`` its ``get`` checks, so an entry whose TTL has
passed is listed though ``get`` answers None.
"""

from __future__ import annotations

from collections.abc import Mapping

from ._cache_store import DictStore


class _ListsExpired(DictStore):
    async def entries(self, prefix: str) -> Mapping[str, bytes]:
        return {key: value for key, (value, _) in self.held.items() if key.startswith(prefix)}


make_cache_store = _ListsExpired
