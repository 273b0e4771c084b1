"""RedisStore: namespacing, PX TTLs, SCAN-based clearing, invalidation broadcast, errors.

Tests marked ``needs_server`` run against a real Redis when ``MCP_CORE_REDIS_URL`` is set (CI
starts one on 127.0.0.1); the others need no server.
"""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
from collections.abc import AsyncIterator

import anyio
import pytest
import redis.asyncio
import redis.exceptions

from mcp_core.errors import CacheStoreError
from mcp_core.stores import RedisStore

REDIS_URL = os.environ.get("MCP_CORE_REDIS_URL")
needs_server = pytest.mark.skipif(
    REDIS_URL is None,
    reason="set MCP_CORE_REDIS_URL (e.g. redis://127.0.0.1:6379/15) to test against Redis",
)


@contextlib.asynccontextmanager
async def namespaced_store() -> AsyncIterator[RedisStore]:
    """A store in a fresh namespace on the test server, emptied and closed afterwards."""
    assert REDIS_URL is not None
    async with RedisStore(REDIS_URL, namespace=f"test-{uuid.uuid4().hex}") as store:
        try:
            yield store
        finally:
            await store.delete_prefix("")


@needs_server
class TestRedisStore:
    """RedisStore against a real server."""

    async def test_namespaces_keep_users_apart(self) -> None:
        """delete_prefix('') empties this namespace only: other namespaces and raw keys survive."""
        assert REDIS_URL is not None
        raw = redis.asyncio.Redis.from_url(REDIS_URL)
        foreign = f"foreign-{uuid.uuid4().hex}"
        try:
            await raw.set(foreign, b"keep")
            async with namespaced_store() as mine, namespaced_store() as theirs:
                await mine.set("k", b"mine")
                await theirs.set("k", b"theirs")
                assert await mine.delete_prefix("") == 1
                assert await theirs.get("k") == b"theirs"
                assert await raw.get(foreign) == b"keep"
                assert await raw.exists(f"{mine.namespace}:k") == 0
        finally:
            await raw.delete(foreign)
            await raw.aclose()

    async def test_ttl_is_enforced_by_redis_in_milliseconds(self) -> None:
        """set(ttl=...) uses PX: the key carries a millisecond TTL and disappears on time."""
        assert REDIS_URL is not None
        async with namespaced_store() as store:
            await store.set("long", b"v", ttl=30)
            await store.set("short", b"v", ttl=0.05)
            raw = redis.asyncio.Redis.from_url(REDIS_URL)
            try:
                assert 29_000 < await raw.pttl(f"{store.namespace}:long") <= 30_000
            finally:
                await raw.aclose()
            await anyio.sleep(0.2)
            assert await store.get("short") is None
            assert await store.get("long") == b"v"

    async def test_delete_prefix_walks_many_keys(self) -> None:
        """More keys than one SCAN batch are all removed, and only those under the prefix."""
        async with namespaced_store() as store:
            for number in range(1200):
                await store.set(f"src:{number}", b"x")
            await store.set("other", b"y")
            assert await store.delete_prefix("src:") == 1200
            assert await store.get("other") == b"y"

    async def test_invalidations_reach_every_worker(self) -> None:
        """publish_invalidation() on one store is yielded by another store's invalidations()."""
        assert REDIS_URL is not None
        namespace = f"test-{uuid.uuid4().hex}"
        received: list[str] = []
        async with (
            RedisStore(REDIS_URL, namespace=namespace) as publisher,
            RedisStore(REDIS_URL, namespace=namespace) as worker,
        ):

            async def listen() -> None:
                async with contextlib.aclosing(worker.invalidations()) as keys:
                    async for key in keys:
                        received.append(key)
                        return

            with anyio.fail_after(5):
                async with anyio.create_task_group() as group:
                    group.start_soon(listen)
                    # The subscription starts when iteration does: publish until someone hears.
                    while await publisher.publish_invalidation("mcp-core:abc:") == 0:  # noqa: ASYNC110 -- the subscriber is in Redis: there is no local event to wait on
                        await anyio.sleep(0.01)
        assert received == ["mcp-core:abc:"]

    async def test_other_namespaces_hear_nothing(self) -> None:
        """The invalidation channel is per namespace: a listener elsewhere receives nothing."""
        async with namespaced_store() as listening, namespaced_store() as elsewhere:
            with anyio.fail_after(5):
                async with (
                    contextlib.aclosing(listening.invalidations()) as keys,
                    anyio.create_task_group() as group,
                ):

                    async def drain() -> None:
                        async for _ in keys:
                            pass

                    group.start_soon(drain)
                    while await listening.publish_invalidation("probe") == 0:  # noqa: ASYNC110 -- as above
                        await anyio.sleep(0.01)
                    assert await elsewhere.publish_invalidation("probe") == 0
                    group.cancel_scope.cancel()

    async def test_a_decoding_client_is_refused_clearly(self) -> None:
        """A client with decode_responses=True returns str; the store says what to change."""
        assert REDIS_URL is not None
        client = redis.asyncio.Redis.from_url(REDIS_URL, decode_responses=True)
        store = RedisStore(client, namespace=f"test-{uuid.uuid4().hex}")
        try:
            await store.set("k", b"v")
            with pytest.raises(CacheStoreError, match="decode_responses=False"):
                await store.get("k")
            await store.delete_prefix("")
        finally:
            await client.aclose()

    async def test_a_given_client_is_left_open(self) -> None:
        """aclose() does not close a client the store did not create."""
        assert REDIS_URL is not None
        client = redis.asyncio.Redis.from_url(REDIS_URL)
        try:
            async with RedisStore(client, namespace=f"test-{uuid.uuid4().hex}") as store:
                await store.set("k", b"v")
                await store.delete_prefix("")
            assert await client.ping()
        finally:
            await client.aclose()


class TestRedisStoreWithoutServer:
    """What RedisStore does before or without a reachable server."""

    async def test_an_unreachable_server_raises_cache_store_error(self) -> None:
        """Connection failures become CacheStoreError chained to redis' error, naming the key."""
        async with RedisStore("redis://127.0.0.1:1/0") as store:
            with pytest.raises(CacheStoreError, match="failed to read") as info:
                await store.get("k")
        assert isinstance(info.value.__cause__, redis.exceptions.ConnectionError)
        assert info.value.key == "k"

    def test_repr_hides_the_password(self) -> None:
        """A password in the URL never reaches reprs or error messages."""
        store = RedisStore("redis://user:s3cret@127.0.0.1:6379/0", namespace="app")
        assert repr(store) == "RedisStore('redis://user:***@127.0.0.1:6379/0', namespace='app')"

    @pytest.mark.parametrize("namespace", ["", "a b", "a*", "a[1]"])
    def test_namespaces_must_be_plain(self, namespace: str) -> None:
        """A namespace with spaces or glob characters is refused (it would widen SCAN patterns)."""
        with pytest.raises(ValueError, match="namespace"):
            RedisStore("redis://127.0.0.1:1/0", namespace=namespace)

    def test_redis_is_optional(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without the redis package, creating a RedisStore says how to install it."""
        monkeypatch.setitem(sys.modules, "redis.asyncio", None)
        with pytest.raises(ImportError, match=r"pip install 'mcp-core-server\[redis\]'"):
            RedisStore("redis://127.0.0.1:1/0")


@needs_server
class TestRedisWriterWithoutTheSecret:
    """Attacker: a Redis writer without the secret, writing junk of any size and type.

    Before, every read transferred whatever it found: 200 MB of junk under a shared prefix
    pinned about twice that in every worker (tests/e2e/test_workers_hostile.py on a deployment).
    """

    async def test_oversized_and_mistyped_values_are_not_read(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """get(): a value over the bound, or a hash where a value should be, is None, logged once."""
        assert REDIS_URL is not None
        namespace = f"test-{uuid.uuid4().hex}"
        async with RedisStore(REDIS_URL, namespace=namespace, max_value_bytes=1000) as store:
            try:
                await store.set("big", b"x" * 1001)
                await store.set("fits", b"x" * 1000)
                await store.client.hset(store.key("hash"), "f", "v")
                await store.client.rpush(store.key("list"), "v")
                with caplog.at_level("WARNING", "mcp_core.stores"):
                    found = [await store.get(k) for k in ("big", "big", "fits", "hash", "list")]
            finally:
                await store.delete_prefix("")
        assert found == [None, None, b"x" * 1000, None, None]
        lines = [r.getMessage() for r in caplog.records]
        assert sum("larger than max_value_bytes" in line for line in lines) == 1
        assert sum("no plain value" in line for line in lines) == 1

    async def test_listings_are_bounded(self) -> None:
        """entries(): junk values are left out; a listing past its bounds is a CacheStoreError."""
        assert REDIS_URL is not None
        namespace = f"test-{uuid.uuid4().hex}"
        async with RedisStore(
            REDIS_URL,
            namespace=namespace,
            max_value_bytes=1000,
            max_listed_value_bytes=100,
            max_listing_entries=20,
            max_listing_bytes=1000,
        ) as store:
            try:
                await store.set("p:ok", b"v")
                await store.set("p:big", b"x" * 101)
                await store.client.hset(store.key("p:hash"), "f", "v")
                kept = dict(await store.entries("p:"))
                for n in range(12):
                    await store.set(f"p:{n}", b"x" * 90)
                with pytest.raises(CacheStoreError, match="more than 1000"):
                    await store.entries("p:")
                for n in range(12, 30):
                    await store.set(f"p:{n}", b"x")
                with pytest.raises(CacheStoreError, match="more than 20 entries"):
                    await store.entries("p:")
            finally:
                await store.delete_prefix("")
        assert kept == {"p:ok": b"v"}

    async def test_a_listing_is_read_a_few_mib_at_a_time(self) -> None:
        """Values larger together than one read's budget all come back, over several calls."""
        async with namespaced_store() as store:
            value = b"v" * (900 * 1024)
            for n in range(12):
                await store.set(f"p:{n}", value)
            listed = await store.entries("p:")
        assert listed == {f"p:{n}": value for n in range(12)}


class TestCredentialsNeverShown:
    """Attacker: anyone reading a health endpoint or a log; the Redis URL's credentials stay out."""

    @pytest.mark.parametrize(
        "url",
        [
            "redis://user:hunter2@127.0.0.1:1/0",
            "redis://:hunter2@127.0.0.1:1/0",
            "redis://127.0.0.1:1/0?password=hunter2",
            "redis://127.0.0.1:1/0?db=0&password=hunter2&username=hunter2",
            "rediss://u:hunter2@127.0.0.1:1/0?password=hunter2",
        ],
    )
    async def test_health_and_errors_redact_the_url(self, url: str) -> None:
        """repr, health and the error of a failed call never hold the password."""
        async with RedisStore(url, timeout=0.5) as store:
            with pytest.raises(CacheStoreError) as error:
                await store.get("k")
            shown = [repr(store), str(store.health().to_json()), str(error.value)]
        assert all("hunter2" not in text for text in shown), shown
