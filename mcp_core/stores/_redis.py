"""RedisStore: a cache store shared by workers across hosts, with invalidation broadcast.

``redis`` is an optional dependency (``pip install 'mcp-core[redis]'``): it is imported when a
RedisStore is created, so ``mcp_core.stores`` imports without it.

Every call is bounded in time (connect and per-operation timeouts, no hidden retries) and goes
through a :class:`~mcp_core.stores.CircuitBreaker`, so a Redis that is frozen or cut off costs one
timeout and then fails at once until it answers again (ADR 0047).
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Final, Self, TypeVar, final
from urllib.parse import urlsplit, urlunsplit

import anyio

from mcp_core.errors import CacheStoreError
from mcp_core.stores._breaker import BackendHealth, CircuitBreaker
from mcp_core.stores._checks import check_key, check_ttl, check_value

if TYPE_CHECKING:  # redis is optional: only type checkers import it here
    from redis.asyncio import Redis

__all__ = ["DEFAULT_REDIS_CONNECT_TIMEOUT", "DEFAULT_REDIS_TIMEOUT", "RedisStore"]

_T = TypeVar("_T")

DEFAULT_REDIS_TIMEOUT: Final = 2.0
"""Seconds one Redis operation may take before it counts as a failure."""
DEFAULT_REDIS_CONNECT_TIMEOUT: Final = 1.0
"""Seconds opening a connection to Redis may take."""

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

    Bounded time: a connection attempt may take ``connect_timeout`` seconds and any operation
    ``timeout`` seconds (both enforced around the call, whatever the client's own settings); a
    client made from a URL never retries on its own. ``breaker`` (by default one that opens at
    the first failure and tries again after 2 s, then 4, 8 ... 30) makes calls fail at once while
    Redis is known to be down: :meth:`health` says so. A failure is the server not answering
    (refused, reset, timed out); an error Redis itself returns leaves the breaker closed.
    """

    __slots__ = (
        "_breaker",
        "_channel",
        "_client",
        "_connection_errors",
        "_error",
        "_label",
        "_namespace",
        "_owned",
        "_timeout",
    )

    def __init__(
        self,
        url_or_client: str | Redis,
        *,
        namespace: str = "mcp-core",
        timeout: float = DEFAULT_REDIS_TIMEOUT,
        connect_timeout: float = DEFAULT_REDIS_CONNECT_TIMEOUT,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        try:
            import redis.asyncio  # noqa: PLC0415 -- optional dependency, imported only when used
            import redis.asyncio.retry  # noqa: PLC0415 -- same
            import redis.backoff  # noqa: PLC0415 -- same
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
        for name, value in (("timeout", timeout), ("connect_timeout", connect_timeout)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ValueError(
                    f"RedisStore {name} must be a positive number of seconds, got {value!r}"
                )
        self._namespace = namespace
        self._channel = f"{namespace}:invalidations"
        self._error: type[Exception] = redis.exceptions.RedisError
        self._connection_errors: tuple[type[BaseException], ...] = (
            redis.exceptions.ConnectionError,
            redis.exceptions.TimeoutError,
            OSError,
        )
        self._timeout = float(timeout)
        self._breaker = breaker if breaker is not None else CircuitBreaker()
        if isinstance(url_or_client, str):
            self._client: Redis = redis.asyncio.Redis.from_url(
                url_or_client,
                socket_connect_timeout=connect_timeout,
                socket_timeout=timeout,
                # The bound is ours to keep: a hidden retry would multiply it.
                retry=redis.asyncio.retry.Retry(redis.backoff.NoBackoff(), 0),
            )
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

    @property
    def client(self) -> Redis:
        """The ``redis.asyncio.Redis`` client (for operations this store does not offer)."""
        return self._client

    @property
    def timeout(self) -> float:
        """Seconds one operation may take."""
        return self._timeout

    def health(self) -> BackendHealth:
        """How Redis is answering this store: ``ok``, or ``down`` with the last error."""
        return self._breaker.health(f"redis {self._label}")

    def reachable(self) -> None:
        """Record that Redis answered on a connection of its own (a change bus's): calls go through."""
        self._breaker.succeeded()

    def key(self, key: str) -> str:
        """The Redis key this store uses for ``key`` (its namespace, a colon, the key)."""
        return f"{self._namespace}:{check_key(key)}"

    async def call(
        self,
        action: str,
        operation: Callable[[Redis], Awaitable[_T]],
        *,
        key: str | None = None,
    ) -> _T:
        """Run ``operation(client)`` within this store's bounds; its failures as CacheStoreError.

        ``action`` says what it does, for the error message ("read", "publish a change"). While
        the circuit breaker is open, raises at once without touching Redis.
        """
        breaker = self._breaker
        if not breaker.allows():
            raise CacheStoreError(
                f"Redis {self._label} is not answering (last error: "
                f"{breaker.health('').last_error}); not trying to {action} for another "
                f"{breaker.retry_in():.1f} s",
                key=key,
            )
        try:
            with anyio.fail_after(self._timeout):
                result = await operation(self._client)
        except TimeoutError as exc:
            breaker.failed(f"no answer within {self._timeout:g} s")
            raise CacheStoreError(
                f"Redis {self._label} did not answer within {self._timeout:g} s (trying to "
                f"{action}); check that the server is up and reachable",
                key=key,
            ) from exc
        except self._connection_errors as exc:
            breaker.failed(f"{type(exc).__name__}: {exc}")
            raise CacheStoreError(
                f"Redis cache {self._label} failed to {action}: {exc}; check that the server is "
                "reachable and the URL, database and credentials are right",
                key=key,
            ) from exc
        except self._error as exc:
            breaker.succeeded()  # the server answered: it is up, the request was wrong
            raise CacheStoreError(
                f"Redis cache {self._label} failed to {action}: {exc}; check the URL, database "
                "and credentials",
                key=key,
            ) from exc
        breaker.succeeded()
        return result

    def _full(self, key: str) -> str:
        return self.key(key)

    # -- CacheStore --------------------------------------------------------------------------

    async def get(self, key: str) -> bytes | None:
        """The value at ``key``, or None when absent or expired."""
        full = self._full(key)
        value = await self.call("read", lambda client: client.get(full), key=key)
        return self._bytes(value, key)

    def _bytes(self, value: object, key: str) -> bytes | None:
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
        await self.call("write", lambda client: client.set(full, value, px=milliseconds), key=key)

    async def delete(self, key: str) -> bool:
        """Remove ``key``; return whether it was present."""
        full = self._full(key)
        removed = await self.call("delete", lambda client: client.delete(full), key=key)
        return bool(removed)

    async def delete_prefix(self, prefix: str) -> int:
        """Remove every key of this namespace starting with ``prefix``; return how many.

        Walks the keyspace incrementally with ``SCAN MATCH``, deleting in batches, so a large
        database is never blocked. Keys written concurrently may or may not be removed.
        """
        if not isinstance(prefix, str):
            raise TypeError(f"a key prefix is a string, got {type(prefix).__name__}")
        pattern = self._pattern(prefix)

        async def delete_matching(client: Redis) -> int:
            removed = 0
            batch: list[bytes | str] = []
            async for found in client.scan_iter(match=pattern, count=_SCAN_BATCH):
                batch.append(found)
                if len(batch) >= _SCAN_BATCH:
                    removed += await client.delete(*batch)
                    batch.clear()
            if batch:
                removed += await client.delete(*batch)
            return removed

        return await self.call("delete keys", delete_matching, key=prefix)

    async def entries(self, prefix: str) -> Mapping[str, bytes]:
        """Every live entry of this namespace whose key starts with ``prefix``: key -> value.

        Keys are given without the namespace, as they were set. Walks with ``SCAN MATCH`` and
        reads in batches with ``MGET``; an entry that expires meanwhile is left out.
        """
        if not isinstance(prefix, str):
            raise TypeError(f"a key prefix is a string, got {type(prefix).__name__}")
        pattern = self._pattern(prefix)
        head = len(self._namespace) + 1

        async def read_matching(client: Redis) -> dict[str, bytes]:
            keys: list[bytes] = [
                k async for k in client.scan_iter(match=pattern, count=_SCAN_BATCH)
            ]
            found: dict[str, bytes] = {}
            for start in range(0, len(keys), _SCAN_BATCH):
                batch = keys[start : start + _SCAN_BATCH]
                for name, value in zip(batch, await client.mget(batch), strict=True):
                    if isinstance(value, bytes):
                        text = name.decode() if isinstance(name, bytes) else str(name)
                        found[text[head:]] = value
            return found

        return await self.call("read keys", read_matching, key=prefix)

    def _pattern(self, prefix: str) -> str:
        return _GLOB_SPECIAL.sub(r"\\\1", f"{self._namespace}:{prefix}") + "*"

    # -- invalidation --------------------------------------------------------------------------

    async def publish_invalidation(self, channel_key: str) -> int:
        """Tell every worker that the entries at ``channel_key`` changed; return how many heard it.

        ``channel_key`` is a cache key or key prefix (e.g. a ``CachedSource``'s
        :attr:`~mcp_core.sources.CachedSource.key_prefix`); subscribers decide what to reload.
        """
        check_key(channel_key)
        channel, data = self._channel, channel_key.encode()
        return await self.call(
            "publish an invalidation",
            lambda client: client.publish(channel, data),
            key=channel_key,
        )

    async def invalidations(self) -> AsyncGenerator[str, None]:
        """Yield every key published with :meth:`publish_invalidation`, by any process.

        The subscription starts when iteration starts (messages published before that are not
        seen) and ends when the iterator is closed; use ``contextlib.aclosing`` to end it
        promptly. A lost connection raises :class:`~mcp_core.errors.CacheStoreError`.
        """
        pubsub = self._client.pubsub(ignore_subscribe_messages=True)
        try:
            with self._translated("subscribe to invalidations"):
                await pubsub.subscribe(self._channel)
            while True:
                with self._translated("receive invalidations"):
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
                await pubsub.aclose()  # type: ignore[no-untyped-call,unused-ignore]  # unannotated before redis-py 8.2

    @contextlib.contextmanager
    def _translated(self, action: str) -> Iterator[None]:
        # For the long-lived pub/sub connection, which is not one bounded call.
        try:
            yield
        except self._error as exc:
            raise CacheStoreError(
                f"Redis cache {self._label} failed to {action}: {exc}; check that the server is "
                "reachable and the URL, database and credentials are right"
            ) from exc

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
