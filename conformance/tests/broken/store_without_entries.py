"""Not broken: a cache store that does not list its entries (a CacheStore, no ListingStore).

``store.entries`` is N/A (declared) for it, and it is certified on the other store laws.
"""

from __future__ import annotations

from collections.abc import Callable

from ._cache_store import DictStore


class _Unlisted:
    """Every CacheStore method of DictStore, and no ``entries``."""

    def __init__(self, *, clock: Callable[[], float]) -> None:
        inner = DictStore(clock=clock)
        self.get = inner.get
        self.set = inner.set
        self.delete = inner.delete
        self.delete_prefix = inner.delete_prefix


make_cache_store = _Unlisted
