"""The change bus (laws bus.versions, bus.delivers, bus.catch-up), the breaker, bounded Redis time.

The in-memory bus always; the Redis bus against a real server when ``MCP_CORE_REDIS_URL`` is set.
A "frozen Redis" is a listener that accepts connections and never answers, as a SIGSTOPped
server does: a call costs one timeout, the next ones fail at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager

import anyio
import anyio.abc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_core.errors import CacheStoreError
from mcp_core.stores import (
    Change,
    ChangeBus,
    CircuitBreaker,
    MemoryChangeBus,
    RedisChangeBus,
    RedisStore,
)

REDIS_URL = os.environ.get("MCP_CORE_REDIS_URL")
needs_server = pytest.mark.skipif(REDIS_URL is None, reason="set MCP_CORE_REDIS_URL")
BUS_SECRET = b"b" * 32
KEYS = st.lists(st.sets(st.sampled_from(["a", "b", "c"]), min_size=1), min_size=1, max_size=6)


class FakeClock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class TestCircuitBreaker:
    """Open after failures, fail fast, one trial, close on success, longer waits on failure."""

    def test_opens_fails_fast_and_tries_once(self) -> None:
        """After the threshold: no call; after the wait: exactly one trial at a time."""
        clock = FakeClock()
        breaker = CircuitBreaker(threshold=2, reset_after=1.0, maximum=4.0, clock=clock)
        breaker.failed("refused")
        assert breaker.allows()
        breaker.failed("refused")
        assert (breaker.state, breaker.allows()) == ("open", False)
        clock.now += 1.0
        assert breaker.allows()
        assert (breaker.state, breaker.allows()) == ("half-open", False)
        breaker.failed("timed out")
        clock.now += 1.0
        assert not breaker.allows()  # the failed trial doubled the wait
        clock.now += 1.0
        assert breaker.allows()
        breaker.succeeded()
        assert (breaker.state, breaker.health("redis").state) == ("closed", "ok")

    def test_health_says_down_with_the_last_error(self) -> None:
        """While failures are counted, the health is down, with the error and the next try."""
        breaker = CircuitBreaker(clock=FakeClock())
        breaker.failed("no answer within 2 s")
        health = breaker.health("redis x")
        assert (health.state, health.last_error, health.failures) == (
            "down",
            "no answer within 2 s",
            1,
        )
        assert health.next_try is not None

    @pytest.mark.parametrize("bad", [{"threshold": 0}, {"reset_after": 0}, {"maximum": 0.5}])
    def test_refuses_bad_settings(self, bad: dict[str, float]) -> None:
        """Nonsense settings are a ValueError naming the setting."""
        with pytest.raises(ValueError, match=next(iter(bad)).split("_")[0]):
            CircuitBreaker(**bad)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def silent_server() -> AsyncIterator[int]:
    """A TCP server that accepts and never answers (a frozen Redis); yields its port."""

    async def hold(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            await anyio.sleep_forever()

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    async with listener, anyio.create_task_group() as tasks:
        tasks.start_soon(listener.serve, hold)
        try:
            yield listener.extra(anyio.abc.SocketAttribute.local_port)  # noqa: S610 -- anyio, not Django
        finally:
            tasks.cancel_scope.cancel()


class TestBoundedRedis:
    """A frozen Redis costs one timeout; then the breaker answers at once."""

    async def test_a_frozen_server_costs_one_timeout(self) -> None:
        """The first call fails after the timeout, the next at once, without waiting again."""
        async with silent_server() as port:
            store = RedisStore(f"redis://127.0.0.1:{port}/0", timeout=0.3, connect_timeout=0.3)
            with pytest.raises(CacheStoreError, match=r"did not answer within 0\.3 s"):
                await store.get("k")
            with anyio.fail_after(0.25):  # less than one timeout: the breaker answered
                with pytest.raises(CacheStoreError, match="is not answering"):
                    await store.set("k", b"v")
            health = store.health()
            await store.aclose()
        assert health.state == "down"
        assert health.last_error == "no answer within 0.3 s"

    async def test_a_refused_connection_is_a_store_error(self) -> None:
        """Nothing listening: a CacheStoreError naming the store, and the health says down."""
        with socket_port() as port:
            store = RedisStore(f"redis://127.0.0.1:{port}/0", timeout=0.5)
            with pytest.raises(CacheStoreError, match="failed to read"):
                await store.get("k")
            assert store.health().state == "down"
            await store.aclose()

    async def test_a_lost_bus_reconnects_on_a_growing_capped_wait(self) -> None:
        """Nothing listening: each failure in a row waits longer, 0.25 s doubled up to 5 s.

        Each wait is the registry's ``Backoff`` for that many failures (spread by 10 %).
        """
        with socket_port() as port:
            store = RedisStore(f"redis://127.0.0.1:{port}/0", timeout=0.5)
            bus = RedisChangeBus(store, secret=BUS_SECRET)
            waits: dict[int, float] = {}
            async with bus.subscribe():
                with anyio.fail_after(20):
                    while len(waits) < 3:
                        health = bus.health()
                        if health.state == "down" and health.next_try is not None:
                            waits.setdefault(health.failures, health.next_try - time.time())
                        await anyio.sleep(0.01)
            await store.aclose()
        assert min(waits) == 1, waits
        for failures, wait in waits.items():
            assert wait <= min(0.25 * 2 ** (failures - 1), 5.0) * 1.1, waits

    def test_refuses_bad_timeouts(self) -> None:
        """A timeout that is not a positive number is a ValueError."""
        with pytest.raises(ValueError, match="timeout"):
            RedisStore("redis://127.0.0.1:1/0", timeout=0)


@contextlib.contextmanager
def socket_port() -> Iterator[int]:
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    yield port


async def _laws(bus: ChangeBus, key: str) -> None:
    """bus.catch-up, bus.delivers and bus.versions, on one bus, with keys under ``key``."""
    one, two = f"{key}.one", f"{key}.two"
    async with bus.subscribe() as first:
        start = await anext(first)
        assert start.catch_up
        published = await bus.publish([one, two], origin="w1")
        assert published.versions[one] >= start.versions.get(one, 0) + 1
        assert published.versions[two] >= 1
        async with bus.subscribe() as second:
            caught = await anext(second)
            assert caught.catch_up
            assert {one: caught.versions[one], two: caught.versions[two]} == published.versions
            again = await bus.publish([one], origin="w2")
            with anyio.fail_after(10):
                heard = [await anext(first), await anext(first), await anext(second)]
    assert [c.origin for c in heard] == ["w1", "w2", "w2"]
    assert heard[1].versions == heard[2].versions == again.versions
    assert again.versions[one] >= published.versions[one] + 1


class TestMemoryChangeBus:
    """The in-memory bus keeps the laws, and rehearses an outage."""

    async def test_laws(self) -> None:
        """Catch-up first; every subscription hears every publish; versions count up."""
        await _laws(MemoryChangeBus(), "k")

    @given(KEYS)
    def test_versions_count_publishes(self, batches: list[set[str]]) -> None:
        """Law bus.versions: each key's version is how many publishes named it."""

        async def run() -> dict[str, int]:
            bus = MemoryChangeBus()
            for batch in batches:
                await bus.publish(batch, origin="w")
            return dict(bus.versions)

        counts = {key: sum(key in batch for batch in batches) for key in "abc"}
        assert anyio.run(run) == {k: n for k, n in counts.items() if n}

    async def test_down_then_back_catches_up(self) -> None:
        """Taken down: publish raises, health says down; back: subscriptions catch up."""
        bus = MemoryChangeBus()
        async with bus.subscribe() as changes:
            await anext(changes)
            await bus.publish(["a"], origin="w")
            assert (await anext(changes)).versions == {"a": 1}
            bus.take_down()
            with pytest.raises(CacheStoreError):
                await bus.publish(["a"], origin="w")
            assert bus.health().state == "down"
            bus.bring_back()
            caught = await anext(changes)
        assert caught == Change(versions={"a": 1}, catch_up=True)
        assert bus.health().state == "ok"

    @pytest.mark.parametrize("keys", [[], "abc", ["has space"], [""]])
    async def test_refuses_bad_keys(self, keys: object) -> None:
        """Source keys are a non-empty collection of non-empty strings without spaces."""
        with pytest.raises((TypeError, ValueError)):
            await MemoryChangeBus().publish(keys, origin="w")  # type: ignore[arg-type]


@needs_server
class TestRedisChangeBus:
    """The Redis bus keeps the laws against a real server; garbage on its channel is ignored."""

    @staticmethod
    def _bus() -> AbstractAsyncContextManager[RedisChangeBus]:
        @contextlib.asynccontextmanager
        async def made() -> AsyncIterator[RedisChangeBus]:
            assert REDIS_URL is not None
            async with RedisStore(REDIS_URL, namespace=f"test-{uuid.uuid4().hex}") as store:
                try:
                    yield RedisChangeBus(store, secret=BUS_SECRET, heartbeat=0.5)
                finally:
                    await store.delete_prefix("")

        return made()

    async def test_laws(self) -> None:
        """Catch-up first; every subscription hears every publish; versions count up."""
        async with self._bus() as bus:
            await _laws(bus, "k")
            assert bus.health().state == "ok"

    async def test_ignores_what_is_not_a_change(self) -> None:
        """A malformed message on the channel is skipped; the next change still arrives."""
        async with self._bus() as bus:
            store = bus._store
            async with bus.subscribe() as changes:
                await anext(changes)
                for junk in (b"{", b'{"origin": 1, "versions": {}}', b"[" * 10_000):
                    await store.client.publish(store.key("changes"), junk)
                await bus.publish(["real"], origin="w")
                with anyio.fail_after(10):
                    heard = await anext(changes)
        assert set(heard.versions) == {"real"}

    async def test_entries_lists_a_prefix(self) -> None:
        """RedisStore.entries: the live keys under a prefix, namespace removed (law store.entries)."""
        async with self._bus() as bus:
            store = bus._store
            await store.set("p:1", b"one")
            await store.set("p:2", b"two")
            await store.set("q", b"other")
            assert await store.entries("p:") == {"p:1": b"one", "p:2": b"two"}


@needs_server
class TestRedisWriterWithoutTheSecret:
    """Attacker: a Redis writer without the secret (PUBLISH and HSET, no key of the deployment).

    Before the bus was signed, one forged message with an absurd version for a source key made
    every worker skip every later change of it (tests/e2e/test_workers_hostile.py shows that on
    a real deployment); now nothing it publishes or writes is delivered, and refusals are counted.
    """

    @staticmethod
    def _bus(
        heartbeat: float = 0.5, repair: float = 5.0
    ) -> AbstractAsyncContextManager[RedisChangeBus]:
        @contextlib.asynccontextmanager
        async def made() -> AsyncIterator[RedisChangeBus]:
            assert REDIS_URL is not None
            async with RedisStore(REDIS_URL, namespace=f"test-{uuid.uuid4().hex}") as store:
                try:
                    yield RedisChangeBus(
                        store, secret=BUS_SECRET, heartbeat=heartbeat, repair=repair
                    )
                finally:
                    await store.delete_prefix("")

        return made()

    async def test_a_forged_message_is_refused(self) -> None:
        """An unsigned message, even well-formed with a huge version, is never delivered."""
        async with self._bus() as bus:
            store = bus._store
            async with bus.subscribe() as changes:
                await anext(changes)
                forged = b'{"origin":"x","versions":{"src":999999999999999},"mac":"00"}'
                await store.client.publish(store.key("changes"), forged)
                await store.client.publish(store.key("changes"), forged[:-10] + b"}")
                real = await bus.publish(["src"], origin="w")
                with anyio.fail_after(10):
                    heard = await anext(changes)
            assert heard.versions == real.versions
            assert real.versions["src"] < 999999999999999
            assert bus.refused >= 2
            assert "refused" in (bus.health().detail or "")

    async def test_another_secret_is_refused(self) -> None:
        """A bus keyed by another secret on the same channel: its messages are not delivered."""
        async with self._bus() as bus:
            stranger = RedisChangeBus(bus._store, secret=b"x" * 32)
            async with bus.subscribe() as changes:
                await anext(changes)
                await stranger.publish(["src"], origin="stranger")
                real = await bus.publish(["other"], origin="w")
                with anyio.fail_after(10):
                    heard = await anext(changes)
            assert heard.versions == real.versions

    async def test_a_replayed_message_is_delivered_once(self) -> None:
        """A signed message replayed (anyone can SUBSCRIBE and copy it) is not news twice."""
        async with self._bus() as bus:
            store = bus._store
            async with store.client.pubsub() as spy:
                await spy.subscribe(store.key("changes"))
                async with bus.subscribe() as changes:
                    await anext(changes)
                    await bus.publish(["src"], origin="w")
                    with anyio.fail_after(10):
                        first = await anext(changes)
                        copied = None
                        while copied is None:
                            message = await spy.get_message(
                                ignore_subscribe_messages=True, timeout=1
                            )
                            copied = message["data"] if message else None
                    for _ in range(20):
                        await store.client.publish(store.key("changes"), copied)
                    then = await bus.publish(["other"], origin="w")
                    with anyio.fail_after(10):
                        second = await anext(changes)
        assert set(first.versions) == {"src"}
        assert second.versions == then.versions

    async def test_forged_versions_in_the_hash_are_ignored_and_repaired(self) -> None:
        """HSET of an absurd or unsigned version: catch-ups skip it, publish and repair() win."""
        async with self._bus() as bus:
            store = bus._store
            published = await bus.publish(["src"], origin="w")
            await store.client.hset(
                store.key("changes:signed-versions"), "src", b"999999999999999:00"
            )
            await store.client.hset(store.key("changes:signed-versions"), "junk" * 200, b"1")
            async with bus.subscribe() as changes:
                caught = await anext(changes)
            assert dict(caught.versions) == {}  # nothing authentic left for src
            assert await bus.repair() == 1
            async with bus.subscribe() as changes:
                caught = await anext(changes)
            assert caught.versions == published.versions
            again = await bus.publish(["src"], origin="w")
            assert again.versions["src"] > published.versions["src"]

    async def test_a_message_the_store_does_not_hold_is_refused(self) -> None:
        """A correctly signed message whose version the hash does not hold is not delivered."""
        async with self._bus() as bus:
            store = bus._store
            async with bus.subscribe() as changes:
                await anext(changes)
                # Signed (as a holder of the secret would), but published without its version.
                versions = {"src": 10**12}
                await store.client.publish(store.key("changes"), bus._message("w", versions))
                real = await bus.publish(["other"], origin="w")
                with anyio.fail_after(10):
                    heard = await anext(changes)
            assert heard.versions == real.versions

    async def test_missed_messages_heal_by_repair(self) -> None:
        """A version written while nobody heard the message reaches an open subscription."""
        async with self._bus(repair=0.3) as bus:
            store = bus._store
            async with bus.subscribe() as changes:
                await anext(changes)
                other = RedisChangeBus(store, secret=BUS_SECRET)
                field = other._field("src", 10**12 + 5)
                await store.client.hset(store.key("changes:signed-versions"), "src", field)
                with anyio.fail_after(10):
                    healed = await anext(changes)
        assert healed.catch_up
        assert healed.versions["src"] == 10**12 + 5


MESSAGES = st.one_of(
    st.binary(max_size=200),
    st.sampled_from(
        [
            b'{"origin":"\\ud800","versions":{"a":1},"mac":"\\ud800"}',
            b'{"origin":"w","versions":{"\\ud800":1},"mac":"0"}',
            b'{"origin":"w","versions":{"a":1},"mac":"\\u0080"}',
        ]
    ),
    st.builds(
        lambda origin, versions, mac: json.dumps(
            {"origin": origin, "versions": versions, "mac": mac}
        ).encode(),
        st.text(max_size=10),
        st.dictionaries(st.sampled_from(["a", "b", "src"]), st.integers(1, 10**16), min_size=1),
        st.one_of(st.text(max_size=64), st.text("0123456789abcdef", min_size=32, max_size=32)),
    ),
)


class TestUnsignedMessagesNeverDeliver:
    """Attacker: a Redis writer without the secret, publishing whatever it likes (no server needed)."""

    @given(MESSAGES)
    def test_no_message_without_the_secret_is_a_change(self, data: bytes) -> None:
        """Whatever is published without the secret parses to nothing, and is counted."""
        bus = RedisChangeBus(RedisStore("redis://127.0.0.1:1/0"), secret=BUS_SECRET)
        assert bus._parse({"type": "message", "data": data}) is None
        assert bus.refused == 1

    @pytest.mark.parametrize(
        "data",
        [
            b'{"origin":"\\ud800","versions":{"a":1},"mac":"\\ud800"}',
            b'{"origin":"w","versions":{"\\ud800":1},"mac":"0"}',
            b'{"origin":"w","versions":{"a":1},"mac":"\\u0080"}',
        ],
    )
    def test_text_that_is_not_ascii_is_refused_not_a_crash(self, data: bytes) -> None:
        """A MAC or origin that is not ASCII (a lone surrogate even) is refused, not a crash."""
        bus = RedisChangeBus(RedisStore("redis://127.0.0.1:1/0"), secret=BUS_SECRET)
        assert bus._parse({"type": "message", "data": data}) is None

    def test_a_signed_message_is_a_change(self) -> None:
        """The same parser accepts what a holder of the secret signs (the property is not vacuous)."""
        bus = RedisChangeBus(RedisStore("redis://127.0.0.1:1/0"), secret=BUS_SECRET)
        data = bus._message("w1", {"src": 10**12})
        assert bus._parse({"type": "message", "data": data}) == Change(
            versions={"src": 10**12}, origin="w1"
        )
        assert bus.refused == 0
