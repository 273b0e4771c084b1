"""RedisChangeBus: the change bus of a deployment, on Redis pub/sub and one hash of versions.

Publishing increments each source's counter in the hash ``{namespace}:changes:versions`` (in one
``MULTI``) and then publishes ``{"origin": ..., "versions": {...}}`` on ``{namespace}:changes``.
A subscription listens on that channel on a connection of its own, and reads the hash whenever it
(re)connects: that read is its catch-up. Pub/sub delivers at most once, to whoever is listening
at that moment; the versions make that enough, since whatever a subscriber missed while cut off
shows up as a higher version when it catches up.

Bounded time: every publish is one bounded call of the :class:`~mcp_core.stores.RedisStore`
(its timeout and circuit breaker); a subscription that hears nothing for ``heartbeat`` seconds
pings Redis and counts itself interrupted unless something answers within the store's timeout,
so a frozen Redis is noticed within ``heartbeat + timeout`` seconds, then retried with a capped
backoff.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, final

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from mcp_core.errors import CacheStoreError
from mcp_core.stores._breaker import BackendHealth
from mcp_core.stores._bus import Change, check_source_keys
from mcp_core.stores._redis import RedisStore

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.client import PubSub

__all__ = ["DEFAULT_BUS_HEARTBEAT", "RedisChangeBus"]

_log = logging.getLogger("mcp_core.stores")

DEFAULT_BUS_HEARTBEAT: Final = 2.0
"""Seconds of silence after which a subscription pings Redis to learn whether it is still there."""
_RECONNECT_FIRST: Final = 0.25
_RECONNECT_MAX: Final = 5.0
_MAX_MESSAGE: Final = 64 * 1024
_BUFFER: Final = 1024


@final
class RedisChangeBus:
    """A :class:`~mcp_core.stores.ChangeBus` on the Redis behind ``store``.

    Messages carry no elements, only source keys and versions: whoever can publish on the
    channel can make workers provide sources again, never make them serve anything. A message
    that is not one (malformed, oversized) is ignored with a log line.
    """

    __slots__ = (
        "_channel",
        "_connected",
        "_down_since",
        "_failures",
        "_heartbeat",
        "_last_error",
        "_next_try",
        "_store",
        "_versions_key",
    )

    def __init__(self, store: RedisStore, *, heartbeat: float = DEFAULT_BUS_HEARTBEAT) -> None:
        if not isinstance(store, RedisStore):
            raise TypeError(f"RedisChangeBus needs a RedisStore, got {type(store).__name__}")
        if isinstance(heartbeat, bool) or not isinstance(heartbeat, int | float) or heartbeat <= 0:
            raise ValueError(f"heartbeat must be a positive number of seconds, got {heartbeat!r}")
        self._store = store
        self._heartbeat = float(heartbeat)
        self._channel = store.key("changes")
        self._versions_key = store.key("changes:versions")
        self._connected = 0  # open subscriptions currently connected
        self._down_since: float | None = None
        self._last_error: str | None = None
        self._failures = 0
        self._next_try: float | None = None

    def __repr__(self) -> str:
        return f"RedisChangeBus({self._store!r})"

    async def publish(self, keys: Collection[str], *, origin: str) -> Change:
        """Count a new version of each key and announce it; CacheStoreError if Redis fails."""
        checked = check_source_keys(keys)
        versions_key, channel = self._versions_key, self._channel

        async def publish(client: Redis) -> dict[str, int]:
            async with client.pipeline(transaction=True) as pipe:
                for key in checked:
                    pipe.hincrby(versions_key, key, 1)
                counted = await pipe.execute()
            versions = {key: int(v) for key, v in zip(checked, counted, strict=True)}
            message = json.dumps({"origin": origin, "versions": versions}, separators=(",", ":"))
            await client.publish(channel, message.encode())
            return versions

        versions = await self._store.call("publish a change", publish)
        return Change(versions=versions, origin=origin)

    @asynccontextmanager
    async def subscribe(self) -> AsyncIterator[AsyncIterator[Change]]:
        """Changes as published, each (re)connection starting with a catch-up; reconnects itself."""
        send, receive = anyio.create_memory_object_stream[Change](_BUFFER)
        async with anyio.create_task_group() as tasks, receive:
            tasks.start_soon(self._follow, send)
            try:
                yield aiter(receive)
            finally:
                tasks.cancel_scope.cancel()

    def health(self) -> BackendHealth:
        """``ok`` while subscriptions are connected (or none is open and publishing works)."""
        name = f"change bus on {self._store!r}"
        if self._down_since is None:
            store = self._store.health()
            if store.state != "ok":
                return BackendHealth(
                    backend=name,
                    state=store.state,
                    since=store.since,
                    last_error=store.last_error,
                    failures=store.failures,
                    next_try=store.next_try,
                )
            return BackendHealth(backend=name, state="ok", last_error=self._last_error)
        return BackendHealth(
            backend=name,
            state="down",
            since=self._down_since,
            last_error=self._last_error,
            failures=self._failures,
            next_try=self._next_try,
        )

    # -- the subscription -------------------------------------------------------------------

    async def _follow(self, send: MemoryObjectSendStream[Change]) -> None:
        delay = _RECONNECT_FIRST
        async with send:
            while True:
                connected = False
                try:
                    async for change in self._listen():
                        if not connected:
                            connected = True
                            self._connected += 1
                            self._recovered()
                            delay = _RECONNECT_FIRST
                        await send.send(change)
                except Exception as exc:  # noqa: BLE001 -- any failure of the connection: reconnect
                    if not isinstance(
                        exc, (CacheStoreError, TimeoutError, OSError, *self._errors())
                    ):
                        _log.exception("change bus on %r: unexpected failure", self._store)
                    self._interrupted(f"{type(exc).__name__}: {exc}", delay)
                finally:
                    if connected:
                        self._connected -= 1
                await anyio.sleep(delay)
                delay = min(delay * 2, _RECONNECT_MAX) * (0.9 + 0.2 * random.random())  # noqa: S311 -- spreading, not secrecy

    def _errors(self) -> tuple[type[Exception], ...]:
        import redis.exceptions  # noqa: PLC0415 -- redis is optional; a store exists, so it imports

        return (redis.exceptions.RedisError,)

    async def _listen(self) -> AsyncIterator[Change]:
        """One connection's changes: the catch-up, then each message; raises when it is lost."""
        timeout = self._store.timeout
        pubsub: PubSub = self._store.client.pubsub()
        try:
            with anyio.fail_after(timeout):
                await pubsub.subscribe(self._channel)
                # The catch-up is read after subscribing, so nothing published in between is lost.
                raw = await self._store.client.hgetall(self._versions_key)
            self._store.reachable()  # Redis answered: the store need not wait for its breaker
            yield Change(versions=_versions(raw), catch_up=True)
            pinged = False
            while True:
                wait = timeout if pinged else self._heartbeat
                with anyio.fail_after(wait + timeout):
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=wait)
                if message is None:
                    if pinged:
                        raise TimeoutError(f"no answer to a ping within {timeout:g} s")
                    with anyio.fail_after(timeout):
                        await pubsub.ping()
                    pinged = True
                    continue
                pinged = False
                change = _parse(message)
                if change is not None:
                    yield change
        finally:
            # Shielded and bounded: usually closed by a cancellation, and Redis may be frozen.
            with anyio.move_on_after(timeout, shield=True):
                await pubsub.aclose()  # type: ignore[no-untyped-call,unused-ignore]  # unannotated before redis-py 8.2

    def _recovered(self) -> None:
        if self._down_since is not None:
            _log.warning(
                "change bus on %r: connected again after %.1f s; catching up",
                self._store,
                time.time() - self._down_since,
            )
        self._down_since = None
        self._failures = 0
        self._next_try = None

    def _interrupted(self, error: str, delay: float) -> None:
        self._failures += 1
        self._last_error = error
        self._next_try = time.time() + delay
        if self._down_since is None:
            self._down_since = time.time()
            _log.warning(
                "change bus on %r: lost (%s); serving what this worker has, reconnecting",
                self._store,
                error,
            )


def _versions(raw: object) -> dict[str, int]:
    found: dict[str, int] = {}
    if not isinstance(raw, dict):
        return found
    for key, value in raw.items():
        try:
            name = key.decode() if isinstance(key, bytes) else str(key)
            found[name] = int(value)
        except (UnicodeDecodeError, ValueError):
            _log.warning("change bus: ignoring a malformed version %r = %r", key, value)
    return found


def _parse(message: dict[str, Any]) -> Change | None:
    """The change a pub/sub message carries, or None (logged) when it is not one."""
    if message.get("type") != "message":
        return None  # a pong, or a (un)subscribe confirmation
    try:
        return _change_of(message.get("data"))
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        _log.warning("change bus: ignoring a message that is not a change (%s)", exc)
        return None


def _change_of(data: object) -> Change:
    if not isinstance(data, bytes) or len(data) > _MAX_MESSAGE:
        raise ValueError("not a bounded bytes payload")
    document = json.loads(data)
    origin = document["origin"]
    versions = document["versions"]
    if not isinstance(origin, str) or not isinstance(versions, dict) or not versions:
        raise ValueError("origin must be a string and versions a non-empty object")
    for key, version in versions.items():
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise ValueError(f"version of {key!r} is not a positive int")
    check_source_keys(versions)
    return Change(versions=versions, origin=origin)
