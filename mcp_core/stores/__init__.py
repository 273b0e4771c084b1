"""Shared backends: cache stores (memory, SQLite, Redis) and change buses (memory, Redis).

Every Redis call is bounded in time and goes through a circuit breaker (:class:`CircuitBreaker`),
whose state each store reports as :class:`BackendHealth`.
"""

from typing import TYPE_CHECKING, Any

from mcp_core._lazy import LazyNames
from mcp_core.stores._breaker import BackendHealth, BackendState, CircuitBreaker

if TYPE_CHECKING:
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

# Imported on first use: a server that uses no store (every stdio start) imports none of them,
# nor the change bus (ADR 0112). The breaker's values are here: a registry's health report names
# them.
_LAZY: dict[str, str] = {
    "BackendHealthReport": "mcp_core.stores._protocol",
    "CacheStore": "mcp_core.stores._protocol",
    "Change": "mcp_core.stores._bus",
    "ChangeBus": "mcp_core.stores._bus",
    "ListingStore": "mcp_core.stores._protocol",
    "MemoryChangeBus": "mcp_core.stores._bus",
    "OperationTimeout": "mcp_core.stores._protocol",
    "MemoryStore": "mcp_core.stores._memory",
    "RedisChangeBus": "mcp_core.stores._redis_bus",
    "RedisStore": "mcp_core.stores._redis",
    "SqliteStore": "mcp_core.stores._sqlite",
}

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


_NAMES = LazyNames(__name__, _LAZY, globals())


def __getattr__(name: str) -> Any:
    return _NAMES.get(name)


def __dir__() -> list[str]:
    return _NAMES.listed()
