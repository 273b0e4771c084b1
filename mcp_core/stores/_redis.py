"""RedisStore: a cache store shared by workers across hosts, with invalidation broadcast.

``redis`` is an optional dependency (``pip install 'mcp-core-server[redis]'``): it is imported when a
RedisStore is created, so ``mcp_core.stores`` imports without it.

Every call is bounded in time (connect and per-operation timeouts, no hidden retries) and goes
through a :class:`~mcp_core.stores.CircuitBreaker`, so a Redis that is frozen or cut off costs one
timeout and then fails at once until it answers again (ADR 0047). Every read is bounded in size
too: whoever can write to Redis can write anything, of any size or type, under any key (ADR 0069).
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Final, Self, TypeVar, final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import anyio

from mcp_core.errors import CacheStoreError
from mcp_core.stores._breaker import BackendHealth, CircuitBreaker
from mcp_core.stores._checks import check_key, check_ttl, check_value
from mcp_core.stores._refusals import Refusals

if TYPE_CHECKING:  # redis is optional: only type checkers import it here
    from redis.asyncio import Redis

__all__ = [
    "DEFAULT_MAX_LISTED_VALUE_BYTES",
    "DEFAULT_MAX_LISTING_BYTES",
    "DEFAULT_MAX_LISTING_ENTRIES",
    "DEFAULT_MAX_VALUE_BYTES",
    "DEFAULT_REDIS_CONNECT_TIMEOUT",
    "DEFAULT_REDIS_TIMEOUT",
    "RedisStore",
]

_log = logging.getLogger("mcp_core.stores")

_T = TypeVar("_T")

DEFAULT_REDIS_TIMEOUT: Final = 2.0
"""Seconds one Redis operation may take before it counts as a failure."""
DEFAULT_REDIS_CONNECT_TIMEOUT: Final = 1.0
"""Seconds opening a connection to Redis may take."""
DEFAULT_MAX_VALUE_BYTES: Final = 128 * 1024 * 1024
"""The largest value a RedisStore reads; a larger one is ignored, as junk is."""
DEFAULT_MAX_LISTED_VALUE_BYTES: Final = 1024 * 1024
"""The largest value one ``entries()`` listing reads (an entry of a ``SharedSource`` is one
element); a larger one is left out, as junk is."""
DEFAULT_MAX_LISTING_ENTRIES: Final = 10_000
"""The most entries one ``entries()`` listing reads."""
DEFAULT_MAX_LISTING_BYTES: Final = 32 * 1024 * 1024
"""The most bytes one ``entries()`` listing reads."""

# Each key's value, if it holds a string no larger than ARGV[1] and the values read so far leave
# room in ARGV[2] bytes; else its size (too large), -1 (not a string) or -2 (no room left: ask
# again). Sizes are learnt on the server, before anything crosses the network; the first value
# that fits ARGV[1] is always read, so every call makes progress.
_BOUNDED_GET: Final = """
local found = {}
local limit, budget, used = tonumber(ARGV[1]), tonumber(ARGV[2]), 0
for i, key in ipairs(KEYS) do
  local kind = redis.call('TYPE', key)['ok']
  if kind == 'none' then
    found[i] = false
  elseif kind ~= 'string' then
    found[i] = -1
  else
    local size = redis.call('STRLEN', key)
    if size > limit then
      found[i] = size
    elseif used > 0 and used + size > budget then
      found[i] = -2
    else
      used = used + size
      found[i] = redis.call('GET', key)
    end
  end
end
return found
"""
# Each key's size: false (absent), -1 (not a string) or its length. Nothing else is sent back.
_SIZES: Final = """
local found = {}
for i, key in ipairs(KEYS) do
  local kind = redis.call('TYPE', key)['ok']
  if kind == 'none' then
    found[i] = false
  elseif kind ~= 'string' then
    found[i] = -1
  else
    found[i] = redis.call('STRLEN', key)
  end
end
return found
"""
_LATER: Final = -2
_READ_BUDGET: Final = 4 * 1024 * 1024  # bytes one call of _BOUNDED_GET returns, about

_SCAN_BATCH: Final = 500
_CLEANUP_TIMEOUT: Final = 5.0
_GLOB_SPECIAL: Final = re.compile(r"([\\*?\[\]])")
_NAMESPACE: Final = re.compile(r"[^\s*?\[\]\\]+")
_SECRET_PARAMETERS: Final = frozenset({"password", "username", "user", "pass"})


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

    Bounded reads: a value larger than ``max_value_bytes`` (in a listing,
    ``max_listed_value_bytes``), or a key holding something other than a string (a hash, a
    list), is never transferred: ``get`` answers None, ``entries`` leaves it out, and the
    refusal is logged (at most once a minute per reason). A listing
    (``entries``) that would hold more than ``max_listing_entries`` entries or
    ``max_listing_bytes`` bytes raises :class:`~mcp_core.errors.CacheStoreError` instead of
    reading on, so junk written under a prefix costs a bounded read, never a worker's memory.
    """

    __slots__ = (
        "_breaker",
        "_channel",
        "_client",
        "_connection_errors",
        "_error",
        "_full_since",
        "_label",
        "_max_listed_value_bytes",
        "_max_listing_bytes",
        "_max_listing_entries",
        "_max_value_bytes",
        "_namespace",
        "_oom",
        "_owned",
        "_refusals",
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
        max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES,
        max_listed_value_bytes: int = DEFAULT_MAX_LISTED_VALUE_BYTES,
        max_listing_entries: int = DEFAULT_MAX_LISTING_ENTRIES,
        max_listing_bytes: int = DEFAULT_MAX_LISTING_BYTES,
    ) -> None:
        try:
            import redis.asyncio  # noqa: PLC0415 -- optional dependency, imported only when used
            import redis.asyncio.retry  # noqa: PLC0415 -- same
            import redis.backoff  # noqa: PLC0415 -- same
            import redis.exceptions  # noqa: PLC0415 -- same
        except ImportError as exc:
            raise ImportError(
                "RedisStore needs the redis package: pip install 'mcp-core-server[redis]'"
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
        for name, bound in (
            ("max_value_bytes", max_value_bytes),
            ("max_listed_value_bytes", max_listed_value_bytes),
            ("max_listing_entries", max_listing_entries),
            ("max_listing_bytes", max_listing_bytes),
        ):
            if isinstance(bound, bool) or not isinstance(bound, int) or bound < 1:
                raise ValueError(f"RedisStore {name} must be a positive int, got {bound!r}")
        self._max_value_bytes = max_value_bytes
        self._max_listed_value_bytes = min(max_listed_value_bytes, max_value_bytes)
        self._max_listing_entries = max_listing_entries
        self._max_listing_bytes = max_listing_bytes
        self._namespace = namespace
        self._channel = f"{namespace}:invalidations"
        self._error: type[Exception] = redis.exceptions.RedisError
        self._oom: type[Exception] = redis.exceptions.OutOfMemoryError
        self._full_since: float | None = None  # out of memory, as a write found it
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
        self._refusals = Refusals(_log, f"RedisStore {self._label}")

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
        """How Redis is answering this store: ``ok``, or ``down`` with the last error.

        A Redis out of memory answers reads and refuses writes: ``down`` while it is so (since
        this store's first refused write, until one succeeds), with ``detail`` saying so.
        """
        backend = f"redis {self._label}"
        report = self._breaker.health(backend)
        since = self._full_since
        if since is None or report.state != "ok":
            return report
        return BackendHealth(
            backend=backend,
            state="down",
            since=since,
            last_error="out of memory (maxmemory reached): writes are refused",
            detail="out of memory: reads are served, writes (caches, shared registrations, "
            "changes) are refused; raise its maxmemory",
        )

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
        writes: bool = True,
    ) -> _T:
        """Run ``operation(client)`` within this store's bounds; its failures as CacheStoreError.

        ``action`` says what it does, for the error message ("read", "publish a change"). While
        the circuit breaker is open, raises at once without touching Redis. A Redis out of
        memory refusing a write is named as such, and the store's health says so until a call
        that ``writes`` succeeds.
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
            if isinstance(exc, self._oom):
                raise self._out_of_memory(action, exc, key) from exc
            raise CacheStoreError(
                f"Redis cache {self._label} failed to {action}: {exc}; check the URL, database "
                "and credentials",
                key=key,
            ) from exc
        breaker.succeeded()
        if writes:
            self._full_since = None
        return result

    def _out_of_memory(self, action: str, exc: Exception, key: str | None) -> CacheStoreError:
        if self._full_since is None:
            self._full_since = time.time()
            _log.error(
                "Redis %s is out of memory: it refuses writes (%s); reads are still served. "
                "Raise its maxmemory or give it more memory (an eviction policy would drop "
                "shared entries, which the workers then write back)",
                self._label,
                exc,
            )
        return CacheStoreError(
            f"Redis {self._label} is out of memory (maxmemory reached): it refused to {action}; "
            "raise its maxmemory or give it more memory",
            key=key,
        )

    def _full(self, key: str) -> str:
        return self.key(key)

    # -- CacheStore --------------------------------------------------------------------------

    async def get(self, key: str) -> bytes | None:
        """The value at ``key``, or None when absent or expired."""
        full = self._full(key)
        found = await self.call(
            "read", lambda client: self._bounded(client, [full]), key=key, writes=False
        )
        return self._bytes(self._kept(key, found[0]), key)

    async def _bounded(
        self, client: Redis, keys: list[bytes | str], limit: int | None = None
    ) -> list[object]:
        """Each key's value, or its size (-1: not a string) when it is not one to read.

        Values come back a few MiB per call: no reply holds more than that and one value.
        """
        bound = self._max_value_bytes if limit is None else limit
        found: list[object] = [None] * len(keys)
        pending = list(range(len(keys)))
        while pending:
            batch = [keys[i] for i in pending]
            reads = await client.eval(_BOUNDED_GET, len(batch), *batch, bound, _READ_BUDGET)
            later = []
            for index, read in zip(pending, reads, strict=True):
                if read == _LATER:
                    later.append(index)
                else:
                    found[index] = read
            pending = later
        return found

    def _kept(self, key: str, found: object, limit: int | None = None) -> object:
        """A value ``_bounded`` read, or None (a refusal logged) for one it did not."""
        if not isinstance(found, int):
            return found
        if found < 0:
            self._refusals.refuse("keys that hold no plain value (junk)", repr(key)[:120])
        else:
            setting = "max_value_bytes" if limit is None else "max_listed_value_bytes"
            self._refusals.refuse(
                f"values larger than {setting}",
                f"{key!r} holds {found} bytes, more than {limit or self._max_value_bytes}",
            )
        return None

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
            keys: list[bytes | str] = []
            async for k in client.scan_iter(match=pattern, count=_SCAN_BATCH):
                keys.append(k)
                if len(keys) > self._max_listing_entries:
                    raise self._too_large(prefix, f"more than {self._max_listing_entries} entries")
            # Sizes first: a listing too large is refused before any value crosses the network.
            wanted = await self._sized(client, keys, head)
            if sum(wanted.values()) > self._max_listing_bytes:
                raise self._too_large(
                    prefix, f"{sum(wanted.values())} bytes, more than {self._max_listing_bytes}"
                )
            return await self._read_listed(client, list(wanted), head, prefix)

        return await self.call("read keys", read_matching, key=prefix, writes=False)

    async def _sized(
        self, client: Redis, keys: list[bytes | str], head: int
    ) -> dict[bytes | str, int]:
        """The keys a listing reads, with their sizes; the others (junk) left out, logged."""
        limit = self._max_listed_value_bytes
        wanted: dict[bytes | str, int] = {}
        for start in range(0, len(keys), _SCAN_BATCH):
            batch = keys[start : start + _SCAN_BATCH]
            sizes = await client.eval(_SIZES, len(batch), *batch)
            for name, size in zip(batch, sizes, strict=True):
                if isinstance(size, int) and 0 <= size <= limit:
                    wanted[name] = size
                elif size is not None:
                    self._kept(_text(name)[head:], size, limit)
        return wanted

    async def _read_listed(
        self, client: Redis, keys: list[bytes | str], head: int, prefix: str
    ) -> dict[str, bytes]:
        limit = self._max_listed_value_bytes
        found: dict[str, bytes] = {}
        total = 0
        for start in range(0, len(keys), _SCAN_BATCH):
            batch = keys[start : start + _SCAN_BATCH]
            reads = await self._bounded(client, batch, limit)
            for name, read in zip(batch, reads, strict=True):
                key = _text(name)[head:]
                value = self._kept(key, read, limit)
                if not isinstance(value, bytes):
                    continue
                total += len(value)
                if total > self._max_listing_bytes:  # grown since it was measured
                    raise self._too_large(prefix, f"more than {self._max_listing_bytes} bytes")
                found[key] = value
        return found

    def _too_large(self, prefix: str, what: str) -> CacheStoreError:
        return CacheStoreError(
            f"Redis {self._label} holds {what} under {prefix!r}, more than one listing reads "
            "(max_listing_entries, max_listing_bytes); whoever can write to it may have written "
            "junk there: remove it, or raise the bound",
            key=prefix,
        )

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
                await pubsub.aclose()  # type: ignore[no-untyped-call,unused-ignore]  # unannotated in older redis-py

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


def _text(name: bytes | str) -> str:
    return name.decode() if isinstance(name, bytes) else str(name)


def _redacted(url: str) -> str:
    """``url`` with every credential in it replaced, fit for logs, reprs and health output.

    The password of ``user:password@`` and any ``password`` (or ``username``) query parameter,
    which redis-py reads as well.
    """
    parts = urlsplit(url)
    userinfo, at, hostport = parts.netloc.rpartition("@")
    if at and ":" in userinfo:
        user = userinfo.split(":", 1)[0]
        parts = parts._replace(netloc=f"{user}:***@{hostport}")
    if parts.query:
        query = [
            (name, "***" if name.lower() in _SECRET_PARAMETERS else value)
            for name, value in parse_qsl(parts.query, keep_blank_values=True)
        ]
        parts = parts._replace(query=urlencode(query, safe="*"))
    return urlunsplit(parts)
