"""Cache stores: where CachedSource keeps serialized collections (memory, SQLite, Redis)."""

from mcp_core.stores._memory import MemoryStore
from mcp_core.stores._protocol import CacheStore
from mcp_core.stores._redis import RedisStore
from mcp_core.stores._sqlite import SqliteStore

__all__ = ["CacheStore", "MemoryStore", "RedisStore", "SqliteStore"]
