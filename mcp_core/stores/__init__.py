"""Shared backends: cache stores (memory, SQLite, Redis) and change buses (memory, Redis).

Every Redis call is bounded in time and goes through a circuit breaker (:class:`CircuitBreaker`),
whose state each store reports as :class:`BackendHealth`.
"""

from mcp_core.stores._breaker import BackendHealth, BackendState, CircuitBreaker
from mcp_core.stores._bus import Change, ChangeBus, MemoryChangeBus
from mcp_core.stores._memory import MemoryStore
from mcp_core.stores._protocol import (
    BackendHealthReport,
    CacheStore,
    ListingStore,
    OperationTimeout,
)
from mcp_core.stores._redis import RedisStore
from mcp_core.stores._redis_bus import RedisChangeBus
from mcp_core.stores._sqlite import SqliteStore

__all__ = [
    "BackendHealth",
    "BackendHealthReport",
    "BackendState",
    "CacheStore",
    "Change",
    "ChangeBus",
    "CircuitBreaker",
    "ListingStore",
    "MemoryChangeBus",
    "MemoryStore",
    "OperationTimeout",
    "RedisChangeBus",
    "RedisStore",
    "SqliteStore",
]
