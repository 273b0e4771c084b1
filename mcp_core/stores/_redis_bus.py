"""RedisChangeBus: the change bus of a deployment, on Redis pub/sub and one hash of versions.

Publishing records each source's new version in the hash
``{namespace}:changes:signed-versions`` and publishes ``{"origin": ..., "versions": {...},
"mac": ...}`` on ``{namespace}:changes``, both in one Lua script, so a message never precedes
what it points at (the hash is not the unsigned bus's ``changes:versions``, whose counters
workers of an earlier version still raise during a rolling upgrade). A subscription listens on that
channel on a connection of its own, and reads the hash whenever it (re)connects: that read is its
catch-up. Pub/sub delivers at most once, to whoever is listening at that moment; the versions
make that enough, since whatever a subscriber missed while cut off shows up as a higher version
when it catches up, and every subscription reads the hash again every ``repair`` seconds.

Authenticated and fresh (ADR 0067). Every message and every field of the hash carries an
HMAC-SHA256 under the deployment's bus secret: whoever can ``PUBLISH`` or ``HSET`` without it is
refused (a rate-limited diagnostic, counted in :meth:`RedisChangeBus.health`). A version is the
Redis server's clock in milliseconds, raised past every version held for that key, so versions
go up across publishers, restarts and a hash that was lost; a version more than
:data:`MAX_VERSION_AHEAD` seconds ahead of the Redis clock is refused, and a message is
delivered only if the hash holds an authentic version of each of its keys at least as new (so
it points at something the store itself holds). Reads are bounded: oversized messages and hash
fields are refused before they are parsed.

Bounded time: every publish is one bounded call of the :class:`~mcp_core.stores.RedisStore`
(its timeout and circuit breaker); a subscription that hears nothing for ``heartbeat`` seconds
pings Redis and counts itself interrupted unless something answers within the store's timeout,
so a frozen Redis is noticed within ``heartbeat + timeout`` seconds, then retried with a capped
backoff.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator, Collection, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, final

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from mcp_core._backoff import Backoff
from mcp_core.errors import CacheStoreError
from mcp_core.stores._breaker import BackendHealth
from mcp_core.stores._bus import Change, check_source_keys
from mcp_core.stores._redis import RedisStore
from mcp_core.stores._refusals import Refusals

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.asyncio.client import PubSub

__all__ = [
    "DEFAULT_BUS_HEARTBEAT",
    "DEFAULT_BUS_REPAIR",
    "MAX_VERSION_AHEAD",
    "RedisChangeBus",
]

_log = logging.getLogger("mcp_core.stores")

DEFAULT_BUS_HEARTBEAT: Final = 2.0
"""Seconds of silence after which a subscription pings Redis to learn whether it is still there."""
DEFAULT_BUS_REPAIR: Final = 5.0
"""Seconds between two reads of the versions hash by an open subscription (missed messages heal)."""
MAX_VERSION_AHEAD: Final = 60.0
"""Seconds a version may lie ahead of the Redis server's clock; further ahead it is refused."""

_RECONNECT: Final = Backoff(initial=0.25, maximum=5.0)
"""How long a lost subscription waits before it connects again (spread, so workers do not align)."""
_MAX_MESSAGE: Final = 64 * 1024
_MAX_FIELD: Final = 512  # bytes of a source key in the hash
_MAX_VALUE: Final = 80  # bytes of a "version:mac" value
_MAX_FIELDS: Final = 10_000  # source keys a catch-up holds
_PUBLISH_ATTEMPTS: Final = 8
_BUFFER: Final = 1024

# Compare-and-set of every field, then publish: the message never precedes its versions, and two
# publishers of one key never both win with the same version.
_PUBLISH: Final = """
local n = tonumber(ARGV[1])
for i = 0, n - 1 do
  local current = redis.call('HGET', KEYS[1], ARGV[3 + i * 3])
  if current == false then current = '' end
  if current ~= ARGV[4 + i * 3] then return 0 end
end
for i = 0, n - 1 do
  redis.call('HSET', KEYS[1], ARGV[3 + i * 3], ARGV[5 + i * 3])
end
redis.call('PUBLISH', ARGV[2], ARGV[3 + n * 3])
return 1
"""

# The server's clock and the hash, junk fields (too long) left on the server and only counted.
_CATCH_UP: Final = """
local now = redis.call('TIME')
local kept = {}
local all = redis.call('HGETALL', KEYS[1])
local dropped = 0
for i = 1, #all, 2 do
  if #all[i] <= tonumber(ARGV[1]) and #all[i + 1] <= tonumber(ARGV[2])
      and #kept < 2 * tonumber(ARGV[3]) then
    kept[#kept + 1] = all[i]
    kept[#kept + 1] = all[i + 1]
  else
    dropped = dropped + 1
  end
end
return {now[1], now[2], kept, dropped}
"""


@final
class RedisChangeBus:
    """A :class:`~mcp_core.stores.ChangeBus` on the Redis behind ``store``, signed with ``secret``.

    ``secret`` (bytes every worker shares; a ``Deployment`` derives it from the deployment
    secret) keys the HMAC of every message and version. Messages carry no elements, only source
    keys and versions; one that is not authentic, not fresh or not one at all (malformed,
    oversized) is refused: counted, logged at most once a minute per reason, never delivered.
    """

    __slots__ = (
        "_channel",
        "_connected",
        "_down_since",
        "_failures",
        "_heartbeat",
        "_held",
        "_key",
        "_last_error",
        "_next_try",
        "_refusals",
        "_repair",
        "_store",
        "_versions_key",
    )

    def __init__(
        self,
        store: RedisStore,
        *,
        secret: bytes,
        heartbeat: float = DEFAULT_BUS_HEARTBEAT,
        repair: float = DEFAULT_BUS_REPAIR,
    ) -> None:
        if not isinstance(store, RedisStore):
            raise TypeError(f"RedisChangeBus needs a RedisStore, got {type(store).__name__}")
        if not isinstance(secret, bytes) or len(secret) < 16:  # noqa: PLR2004 -- 128 bits
            raise ValueError(
                "RedisChangeBus needs a secret of at least 16 bytes shared by every worker "
                "(Deployment derives one from the deployment secret): messages are signed with it"
            )
        for name, value in (("heartbeat", heartbeat), ("repair", repair)):
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
        self._store = store
        self._key = hashlib.sha256(b"mcp-core change bus\x00" + secret).digest()
        self._heartbeat = float(heartbeat)
        self._repair = float(repair)
        self._channel = store.key("changes")
        self._versions_key = store.key("changes:signed-versions")
        self._held: dict[str, int] = {}  # the newest authentic version known of each key
        self._refusals = Refusals(_log, f"change bus on {store!r}")
        self._connected = 0  # open subscriptions currently connected
        self._down_since: float | None = None
        self._last_error: str | None = None
        self._failures = 0
        self._next_try: float | None = None

    def __repr__(self) -> str:
        return f"RedisChangeBus({self._store!r})"

    @property
    def refused(self) -> int:
        """How many messages and versions this bus has refused (unsigned, stale, malformed)."""
        return self._refusals.total

    async def publish(self, keys: Collection[str], *, origin: str) -> Change:
        """Record a new version of each key and announce it; CacheStoreError if Redis fails."""
        checked = check_source_keys(keys)
        if not isinstance(origin, str):
            raise TypeError(f"origin is a worker's name, got {type(origin).__name__}")
        versions = await self._store.call(
            "publish a change", lambda client: self._publish(client, checked, origin)
        )
        for key, version in versions.items():
            self._hold(key, version)
        return Change(versions=versions, origin=origin)

    async def _publish(self, client: Redis, keys: tuple[str, ...], origin: str) -> dict[str, int]:
        for _ in range(_PUBLISH_ATTEMPTS):
            async with client.pipeline(transaction=False) as pipe:
                pipe.time()
                pipe.hmget(self._versions_key, list(keys))
                (seconds, micros), current = await pipe.execute()
            # The Redis clock in milliseconds, past every version held of these keys.
            version = int(seconds) * 1000 + int(micros) // 1000
            for key, raw in zip(keys, current, strict=True):
                held = max(self._held.get(key, 0), self._verified(key, raw) or 0)
                version = max(version, held + 1)
            versions = dict.fromkeys(keys, version)
            arguments: list[bytes | str | int] = [len(keys), self._channel]
            for key, raw in zip(keys, current, strict=True):
                arguments += [
                    key,
                    raw if isinstance(raw, bytes) else b"",
                    self._field(key, version),
                ]
            arguments.append(self._message(origin, versions))
            done = await client.eval(_PUBLISH, 1, self._versions_key, *arguments)
            if int(done) == 1:
                return versions
        raise CacheStoreError(
            f"could not publish a change of {', '.join(keys)}: its versions kept changing under "
            f"it ({_PUBLISH_ATTEMPTS} attempts)"
        )

    async def repair(self) -> int:
        """Write back the newest version held of each key the hash lacks or holds older; how many.

        Whoever can write to Redis without the secret can delete or roll back the versions hash;
        this puts back what this worker knows, so catch-ups stay whole. CacheStoreError if Redis
        fails.
        """
        held = dict(self._held)
        if not held:
            return 0
        keys = sorted(held)

        async def repair(client: Redis) -> int:
            current = await client.hmget(self._versions_key, keys)
            behind = {
                key: self._field(key, held[key])
                for key, raw in zip(keys, current, strict=True)
                if (self._verified(key, raw) or 0) < held[key]
            }
            if behind:
                await client.hset(self._versions_key, mapping=behind)  # type: ignore[arg-type]  # bytes values are fine
            return len(behind)

        repaired = await self._store.call("repair the change versions", repair)
        if repaired:
            self._refusals.refuse(
                "a versions hash behind this worker's", f"{repaired} version(s) written back"
            )
        return repaired

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
        """``ok`` while subscriptions are connected (or none is open and publishing works).

        ``detail`` counts what was refused (messages not signed with the secret, and the like).
        """
        name = f"change bus on {self._store!r}"
        refused = self._refusals.summary()
        detail = None if refused is None else f"bus messages and versions: {refused}"
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
                    detail=detail,
                )
            return BackendHealth(
                backend=name, state="ok", last_error=self._last_error, detail=detail
            )
        return BackendHealth(
            backend=name,
            state="down",
            since=self._down_since,
            last_error=self._last_error,
            failures=self._failures,
            next_try=self._next_try,
            detail=detail,
        )

    # -- signing --------------------------------------------------------------------------

    def _mac(self, text: str) -> str:
        # surrogatepass: a message's origin is whatever its publisher wrote, lone surrogates too.
        signed = text.encode(errors="surrogatepass")
        return hmac.new(self._key, signed, hashlib.sha256).hexdigest()[:32]

    def _field(self, key: str, version: int) -> bytes:
        return f"{version}:{self._mac(_version_text(key, version))}".encode()

    def _verified(self, key: str, raw: object) -> int | None:
        """The version a hash field holds if it is authentic, else None."""
        if not isinstance(raw, bytes) or len(raw) > _MAX_VALUE:
            return None
        text, _, mac = raw.decode(errors="replace").partition(":")
        if not text.isdigit():
            return None
        version = int(text)
        expected = self._mac(_version_text(key, version))
        return version if _same(mac, expected) else None

    def _signed(self, origin: str, versions: Mapping[str, int]) -> str:
        return json.dumps(
            {"origin": origin, "versions": dict(sorted(versions.items()))},
            separators=(",", ":"),
            ensure_ascii=False,
        )

    def _message(self, origin: str, versions: Mapping[str, int]) -> bytes:
        signed = self._signed(origin, versions)
        return json.dumps(
            {
                "origin": origin,
                "versions": dict(sorted(versions.items())),
                "mac": self._mac(signed),
            },
            separators=(",", ":"),
            ensure_ascii=False,
        ).encode()

    def _hold(self, key: str, version: int) -> None:
        if version > self._held.get(key, 0):
            self._held[key] = version

    # -- the subscription -------------------------------------------------------------------

    async def _follow(self, send: MemoryObjectSendStream[Change]) -> None:
        async with send:
            while True:
                connected = False
                delay = _RECONNECT.maximum  # _listen ends only by raising; this is never used
                try:
                    async for change in self._listen():
                        if not connected:
                            connected = True
                            self._connected += 1
                            self._recovered()
                        await send.send(change)
                except Exception as exc:  # noqa: BLE001 -- any failure of the connection: reconnect
                    if not isinstance(
                        exc, (CacheStoreError, TimeoutError, OSError, *self._errors())
                    ):
                        _log.exception("change bus on %r: unexpected failure", self._store)
                    delay = self._interrupted(f"{type(exc).__name__}: {exc}")
                finally:
                    if connected:
                        self._connected -= 1
                await anyio.sleep(delay)

    def _errors(self) -> tuple[type[Exception], ...]:
        import redis.exceptions  # noqa: PLC0415 -- redis is optional; a store exists, so it imports

        return (redis.exceptions.RedisError,)

    async def _listen(self) -> AsyncIterator[Change]:
        """One connection's changes: the catch-up, then each message; raises when it is lost."""
        timeout = self._store.timeout
        pubsub: PubSub = self._store.client.pubsub()
        delivered: dict[str, int] = {}  # what this connection has delivered, by key
        try:
            with anyio.fail_after(timeout):
                await pubsub.subscribe(self._channel)
                # The catch-up is read after subscribing, so nothing published in between is lost.
                versions, offset = await self._catch_up()
            self._store.reachable()  # Redis answered: the store need not wait for its breaker
            delivered.update(versions)
            yield Change(versions=versions, catch_up=True)
            pinged = False
            next_repair = time.monotonic() + self._repair
            while True:
                if time.monotonic() >= next_repair:
                    next_repair = time.monotonic() + self._repair
                    with anyio.fail_after(timeout):
                        versions, offset = await self._catch_up()
                    if any(v > delivered.get(k, 0) for k, v in versions.items()):
                        delivered.update(versions)  # messages were missed: catch up again
                        yield Change(versions=versions, catch_up=True)
                wait = timeout if pinged else min(self._heartbeat, self._repair)
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
                change = self._parse(message)
                if change is not None:
                    with anyio.fail_after(timeout):
                        change = await self._accepted(change, delivered, offset)
                if change is not None:
                    delivered.update(change.versions)
                    yield change
        finally:
            # Shielded and bounded: usually closed by a cancellation, and Redis may be frozen.
            with anyio.move_on_after(timeout, shield=True):
                await pubsub.aclose()  # type: ignore[no-untyped-call,unused-ignore]  # unannotated in older redis-py

    async def _accepted(
        self, change: Change, delivered: Mapping[str, int], offset: float
    ) -> Change | None:
        """``change`` if it is news and fresh and the store holds what it names, else None."""
        fresh = {k: v for k, v in change.versions.items() if v > delivered.get(k, 0)}
        if not fresh:
            return None  # heard before, or older than what was delivered: a replay costs this
        ahead = time.time() * 1000 + offset + MAX_VERSION_AHEAD * 1000
        if max(fresh.values()) > ahead:
            self._refusals.refuse(
                f"messages more than {MAX_VERSION_AHEAD:g} s ahead of the Redis clock",
                f"from {change.origin!r}",
            )
            return None
        keys = sorted(fresh)
        stored = await self._store.client.hmget(self._versions_key, keys)
        for key, raw in zip(keys, stored, strict=True):
            if (self._verified(key, raw) or 0) < fresh[key]:
                self._refusals.refuse(
                    "messages naming versions the store does not hold", f"from {change.origin!r}"
                )
                return None
        for key, version in change.versions.items():
            self._hold(key, version)
        return change

    async def _catch_up(self) -> tuple[dict[str, int], float]:
        """Every authentic version the hash holds, and the Redis clock minus this one's (ms)."""
        raw = await self._store.client.eval(
            _CATCH_UP, 1, self._versions_key, _MAX_FIELD, _MAX_VALUE, _MAX_FIELDS
        )
        seconds, micros, fields, dropped = raw
        now = int(seconds) * 1000 + int(micros) // 1000
        offset = now - time.time() * 1000
        if int(dropped):
            self._refusals.refuse("junk fields in the versions hash", f"{int(dropped)} ignored")
        versions: dict[str, int] = {}
        for index in range(0, len(fields), 2):
            name, value = fields[index], fields[index + 1]
            key = name.decode(errors="replace") if isinstance(name, bytes) else str(name)
            version = self._verified(key, value)
            if version is None:
                self._refusals.refuse("versions not signed with the bus secret", repr(key)[:80])
            elif version > now + MAX_VERSION_AHEAD * 1000:
                self._refusals.refuse(
                    f"versions more than {MAX_VERSION_AHEAD:g} s ahead of the Redis clock",
                    repr(key)[:80],
                )
            else:
                versions[key] = version
                self._hold(key, version)
        return versions, offset

    def _parse(self, message: dict[str, Any]) -> Change | None:
        """The authentic change a pub/sub message carries, or None (counted) when it is not one."""
        if message.get("type") != "message":
            return None  # a pong, or a (un)subscribe confirmation
        data = message.get("data")
        if not isinstance(data, bytes) or len(data) > _MAX_MESSAGE:
            self._refusals.refuse("oversized messages")
            return None
        try:
            origin, versions, mac = _fields_of(data)
        except KeyError as exc:
            self._refusals.refuse("messages that are not changes", f"no {exc} field")
            return None
        except (ValueError, TypeError, RecursionError) as exc:
            self._refusals.refuse("messages that are not changes", str(exc)[:200])
            return None
        if not _same(mac, self._mac(self._signed(origin, versions))):
            self._refusals.refuse(
                "messages not signed with the bus secret (whoever published them lacks it)"
            )
            return None
        return Change(versions=versions, origin=origin)

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

    def _interrupted(self, error: str) -> float:
        """Record a lost connection; the seconds to wait before the next attempt."""
        self._failures += 1
        delay = _RECONNECT.delay(self._failures)
        self._last_error = error
        self._next_try = time.time() + delay
        if self._down_since is None:
            self._down_since = time.time()
            _log.warning(
                "change bus on %r: lost (%s); serving what this worker has, reconnecting",
                self._store,
                error,
            )
        return delay


def _same(mac: str, expected: str) -> bool:
    """Whether ``mac`` (anything a publisher wrote) is ``expected``, in constant time."""
    return hmac.compare_digest(mac.encode(errors="surrogatepass"), expected.encode())


def _version_text(key: str, version: int) -> str:
    return f"version\n{key}\n{version}"


def _fields_of(data: bytes) -> tuple[str, dict[str, int], str]:
    """A message's origin, versions and MAC; ValueError (and the like) when it is not a change."""
    document = json.loads(data)
    origin, versions, mac = document["origin"], document["versions"], document["mac"]
    if not isinstance(origin, str) or not isinstance(versions, dict) or not versions:
        raise ValueError("origin must be a string and versions a non-empty object")
    if not isinstance(mac, str):
        raise TypeError("mac must be a string")
    for key, version in versions.items():
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise ValueError(f"version of {key!r} is not a positive int")
    check_source_keys(versions)
    return origin, versions, mac
