"""A small bounded mapping that forgets the least recently used entry first."""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar, final

__all__ = ["LruCache"]

K = TypeVar("K")
V = TypeVar("V")


@final
class LruCache(Generic[K, V]):
    """At most ``maxsize`` entries; a hit refreshes the entry, an insert past the bound evicts.

    Not thread-safe: the invoker uses it from its event loop only (worker threads run handlers,
    never cache code).
    """

    __slots__ = ("_data", "_maxsize")

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError(f"an LRU cache holds at least one entry, got maxsize={maxsize}")
        self._data: OrderedDict[K, V] = OrderedDict()
        self._maxsize = maxsize

    def get(self, key: K) -> V | None:
        """The value at ``key`` (refreshed), or None."""
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        """Store ``value`` at ``key``, evicting the least recently used entry when full."""
        self._data[key] = value
        self._data.move_to_end(key)
        if len(self._data) > self._maxsize:
            self._data.popitem(last=False)

    def clear(self) -> None:
        """Forget every entry."""
        self._data.clear()

    def __len__(self) -> int:
        return len(self._data)
