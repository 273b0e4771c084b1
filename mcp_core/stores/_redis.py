"""RedisStore: a cache store shared by workers across hosts, with invalidation broadcast.

``redis`` is an optional dependency (``pip install 'mcp-core[redis]'``): it is imported when a
RedisStore is created, so ``mcp_core.stores`` imports without it.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import AsyncGenerator, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Final, Self, final
from urllib.parse import urlsplit, urlunsplit

import anyio

from mcp_core.errors import CacheStoreError
from mcp_core.stores._checks import check_key, check_ttl, check_value

if TYPE_CHECKING:  # redis is optional: only type checkers import it here
    from redis.asyncio import Redis

__all__ = ["RedisStore"]

_SCAN_BATCH: Final = 500
_CLEANUP_TIMEOUT: Final = 5.0
_GLOB_SPECIAL: Final = re.compile(r"([\\*?\[\]])")
_NAMESPACE: Final = re.compile(r"[^\s*?\[\]\\]+")


@final
class RedisStore:
    """A :class:`~mcp_core.stores.CacheStore` in Redis, shared by every worker that points at it.

    Every key is stored as ``"{namespace}:{key}"``, so one Redis database can serve several
    applications: :meth:`delete_prefix` walks only this namespace with ``SCAN`` + ``DEL`` (never
    ``KEYS`` or ``FLUSHDB``, which block the server or wipe other users' data). TTLs are set with
    ``PX`` (millisecond precision, rounded up) and enforced by Redis itself.

    Invalidation: :meth:`publish_invalidation` broadcasts a key (or key prefix) on the namespace's
    pub/sub channel and :meth:`invalidations` yields every such key, in every process, so workers
    can reload and notify their sessions.

    ``url_or_client`` is a ``redis://`` URL (the store then owns the client and
    :meth:`aclose` closes it) or an existing ``redis.asyncio.Redis`` created with
    ``decode_responses=False`` (left open: its owner closes it). Redis failures raise
    :class:`~mcp_core.errors.CacheStoreError` chained to the ``redis`` error.
    """

    __slots__ = ("_channel", "_client", "_error", "_label", "_namespace", "_owned")

    def __init__(self, url_or_client: str | Redis, *, namespace: str = "mcp-core") -> None:
        try:
            import redis.asyncio  # noqa: PLC0415 -- optional dependency, imported only when used
            import redis.exceptions  # noqa: PLC0415 -- same
        except ImportError as exc:
            raise ImportError(
                "RedisStore needs the redis package: pip install 'mcp-core[redis]'"
            ) from exc
        if not _NAMESPACE.fullmatch(namespace):
            raise ValueError(
                f"RedisStore namespace must be non-empty, without spaces or glob characters "
                f"(*?[]\\), got {namespace!r}"
            )
        self._namespace = namespace
        self._channel = f"{namespace}:invalidations"
        self._error: type[Exception] = redis.exceptions.RedisError
        if isinstance(url_or_client, str):
            self._client: Redis = redis.asyncio.Redis.from_url(url_or_client)
            self._owned = True
            self._label = repr(_redacted(url_or_client))
        else:
            self._client = url_or_client
            self._owned = False
            self._label = f"<{type(url_or_client).__name__}>"

    def __repr__(self) -> str:
        return f"RedisStore({self._label}, namespace={self._namespace!r})"

    @property
    def namespace(self) -> str:
        """The prefix (before ``:``) of every key this store writes."""
        return self._namespace

    @contextlib.contextmanager
    def _translated(self, action: str, key: str | None) -> Iterator[None]:
        try:
            yield
        except self._error as exc:
            raise CacheStoreError(
                f"Redis cache {self._label} failed to {action}: {exc}; check that the server is "
                "reachable and the URL, database and credentials are right",
                key=key,
            ) from exc

    def _full(self, key: str) -> str:
        return f"{self._namespace}:{check_key(key)}"

    # -- CacheStore --------------------------------------------------------------------------

    async def get(self, key: str) -> bytes | None:
        """The value at ``key``, or None when absent or expired."""
        with self._translated("read", key):
            value = await self._client.get(self._full(key))
        if value is None or isinstance(value, bytes):
            return value
        raise CacheStoreError(
            f"Redis returned {type(value).__name__} for {key!r}; RedisStore stores bytes, so give "
            "it a client created with decode_responses=False",
            key=key,
        )

    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None:
        """Store ``value`` at ``key``, expiring after ``ttl`` seconds (never when None)."""
        full = self._full(key)
        check_value(value)
        seconds = check_ttl(ttl)
        milliseconds = None if seconds is None else max(1, math.ceil(seconds * 1000))
        with self._translated("write", key):
            await self._client.set(full, value, px=milliseconds)

    async def delete(self, key: str) -> bool:
        """Remove ``key``; return whether it was present."""
        full = self._full(key)
        with self._translated("delete", key):
            removed = await self._client.delete(full)
        return bool(removed)

    async def delete_prefix(self, prefix: str) -> int:
        """Remove every key of this namespace starting with ``prefix``; return how many.

        Walks the keyspace incrementally with ``SCAN MATCH``, deleting in batches, so a large
        database is never blocked. Keys written concurrently may or may not be removed.
        """
        if not isinstance(prefix, str):
            raise TypeError(f"a key prefix is a string, got {type(prefix).__name__}")
        pattern = _GLOB_SPECIAL.sub(r"\\\1", f"{self._namespace}:{prefix}") + "*"
        removed = 0
        with self._translated("delete keys", prefix):
            batch: list[bytes | str] = []
            async for found in self._client.scan_iter(match=pattern, count=_SCAN_BATCH):
                batch.append(found)
                if len(batch) >= _SCAN_BATCH:
                    removed += await self._client.delete(*batch)
                    batch.clear()
            if batch:
                removed += await self._client.delete(*batch)
        return removed

    # -- invalidation --------------------------------------------------------------------------

    async def publish_invalidation(self, channel_key: str) -> int:
        """Tell every worker that the entries at ``channel_key`` changed; return how many heard it.

        ``channel_key`` is a cache key or key prefix (e.g. a ``CachedSource``'s
        :attr:`~mcp_core.sources.CachedSource.key_prefix`); subscribers decide what to reload.
        """
        check_key(channel_key)
        with self._translated("publish an invalidation", channel_key):
            return await self._client.publish(self._channel, channel_key.encode())

    async def invalidations(self) -> AsyncGenerator[str, None]:
        """Yield every key published with :meth:`publish_invalidation`, by any process.

        The subscription starts when iteration starts (messages published before that are not
        seen) and ends when the iterator is closed; use ``contextlib.aclosing`` to end it
        promptly. A lost connection raises :class:`~mcp_core.errors.CacheStoreError`.
        """
        pubsub = self._client.pubsub(ignore_subscribe_messages=True)
        try:
            with self._translated("subscribe to invalidations", None):
                await pubsub.subscribe(self._channel)
            while True:
                with self._translated("receive invalidations", None):
                    message = await pubsub.get_message(timeout=None)
                if message is not None and message.get("type") == "message":
                    data = message["data"]
                    yield data.decode() if isinstance(data, bytes) else str(data)
        finally:
            # Shielded and bounded: the iterator is usually closed by a cancellation, and the
            # connection must go back even then, without hanging on a dead server.
            with anyio.move_on_after(_CLEANUP_TIMEOUT, shield=True):
                with contextlib.suppress(self._error):
                    await pubsub.unsubscribe(self._channel)
                await pubsub.aclose()  # type: ignore[no-untyped-call]  # redis-py leaves it unannotated

    # -- lifecycle ---------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the client if this store created it from a URL."""
        if self._owned:
            await self._client.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()


def _redacted(url: str) -> str:
    """``url`` with its password replaced, fit for logs and reprs."""
    parts = urlsplit(url)
    userinfo, at, hostport = parts.netloc.rpartition("@")
    if not at or ":" not in userinfo:
        return url
    user = userinfo.split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{hostport}"))
