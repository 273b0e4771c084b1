"""The CacheStore protocol, and what a store may add: listing, health, a time bound."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from mcp_core.stores._breaker import BackendHealth

__all__ = ["BackendHealthReport", "CacheStore", "ListingStore", "OperationTimeout"]


class CacheStore(Protocol):
    """An async key/value store for serialized collections, with per-entry TTL.

    Keys are plain strings; callers namespace them (``CachedSource`` prefixes every key with its
    own namespace and clears only keys under it). Values are bytes, never pickles. A TTL is a
    positive number of seconds; ``None`` means the entry never expires on its own.

    A store reports a backend failure (disk, network, corrupt database) by raising
    :class:`~mcp_core.errors.CacheStoreError` chained to the backend's exception, never the
    backend's own exception type, so callers can degrade without knowing the backend.

    Laws:
        1. ``store.roundtrip``: ``get(k)`` after ``set(k, v)`` returns ``v`` until the TTL passes.
        2. ``store.expiry``: an entry set at time ``s`` with TTL ``t`` is live while the store's
           clock reads less than ``s + t`` and expired from ``s + t`` on, so at exactly its TTL
           it is gone; every operation agrees (``get`` answers None, ``delete`` says it was not
           there, ``delete_prefix`` does not count it, ``entries`` does not list it). A backend
           that keeps time more coarsely keeps an entry at most one tick of its resolution
           longer (``RedisStore``: whole milliseconds, rounded up, on the Redis server's clock).
        3. ``store.delete``: ``delete(k)`` removes only ``k``; ``delete_prefix(p)`` removes only
           keys that start with ``p``.
    """

    async def get(self, key: str) -> bytes | None:
        """The value at ``key``, or None when absent or expired."""
        ...

    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None:
        """Store ``value`` at ``key``, expiring after ``ttl`` seconds (never when None)."""
        ...

    async def delete(self, key: str) -> bool:
        """Remove ``key``; return whether it was present."""
        ...

    async def delete_prefix(self, prefix: str) -> int:
        """Remove every key starting with ``prefix``; return how many were removed."""
        ...


@runtime_checkable
class ListingStore(CacheStore, Protocol):
    """A :class:`CacheStore` that can also list the entries under a key prefix.

    What a store needs to hold a set of items that several processes add to and remove from
    one key at a time (``SharedSource``'s registrations): no item is ever rewritten by a writer
    of another, so concurrent writers lose nothing. ``MemoryStore``, ``SqliteStore`` and
    ``RedisStore`` are listing stores.

    Laws:
        1. ``store.entries``: ``entries(p)`` is exactly the live entries whose key starts with
           ``p``, each with the value ``get`` would return.
    """

    async def entries(self, prefix: str) -> Mapping[str, bytes]:
        """Every live entry whose key starts with ``prefix``: key -> value."""
        ...


@runtime_checkable
class BackendHealthReport(Protocol):
    """Optional: a store (or change bus) that says how its backend is doing, without asking it.

    ``RedisStore`` and the change buses answer from their circuit breaker; a deployment reports
    what they say in the health of every worker.
    """

    def health(self) -> BackendHealth:
        """The backend's health as last seen."""
        ...


@runtime_checkable
class OperationTimeout(Protocol):
    """Optional: a store whose every operation is bounded (``RedisStore``): the bound, in seconds."""

    @property
    def timeout(self) -> float:
        """Seconds one operation may take."""
        ...
