"""Attacker: a Redis writer without the secret, against a real deployment (Redis, workers, HAProxy).

Whoever can reach the deployment's Redis (``PUBLISH``, ``SET``, ``HSET``, ``DEL``) but does not
hold the deployment secret. Each test is one finding of the attacker's pass, as it was found:

- one forged ``PUBLISH`` with an absurd version stopped change propagation until restart;
- a replayed old shared registration resurrected an unregistered tool; a replayed old catalogue
  cache entry made workers (and workers that joined later) serve a tool the new catalogue
  removed;
- one ``SET`` of the fingerprint key made every worker unready (HAProxy had no server left)
  and a restarted worker exit with status 3;
- 200 MB of junk entries pinned about 400 MiB in every worker.

Now each costs the attacker's writes and nothing else: workers keep propagating changes, serve
the newest entries they hold (and write them back), stay ready, and read junk within bounds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import anyio
import pytest
import redis
from mcp import Client

from tests.clients import text, tool_names, until
from tests.e2e._workers import (
    Cluster,
    add_catalogue_tool,
    deployed,
    has,
    health,
    needs_cluster,
)

pytestmark = [
    needs_cluster,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

ABSURD: Final = 10**15
"""A version no honest publisher reaches (milliseconds in the year 33658)."""
JUNK_MIB: Final = 200
PEAK_GROWTH_MIB: Final = 100
"""What 200 MiB of junk may add to a worker's peak resident memory (a bound, not a measurement)."""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Redis, two workers (w1, w2) and HAProxy, for the whole module."""
    with deployed(tmp_path_factory.mktemp("hostile")) as deployment:
        yield deployment


@pytest.fixture
def attacker(cluster: Cluster) -> Iterator[redis.Redis]:
    """A client of the deployment's Redis, without the secret."""
    client = redis.Redis.from_url(cluster.redis_url)
    try:
        yield client
    finally:
        client.close()


def _key(cluster: Cluster, key: str) -> str:
    return f"{cluster.namespace}:{key}"


def _shared_key(attacker: redis.Redis, cluster: Cluster, before: set[bytes]) -> bytes:
    """The one shared-registration key written since ``before`` was listed."""
    now = set(attacker.scan_iter(match=_key(cluster, "shared:shared:*")))
    (written,) = now - before
    assert isinstance(written, bytes)
    return written


def _catalogue_key(attacker: redis.Redis, cluster: Cluster) -> bytes:
    """The key of the catalogue's cache entry (the one key outside the deployment's own)."""
    own = ("shared:", "deployment:", "changes")
    head = len(cluster.namespace) + 1
    (found,) = (
        key
        for key in attacker.scan_iter(match=_key(cluster, "*"))
        if not key.decode()[head:].startswith(own)
    )
    assert isinstance(found, bytes)
    return found


def _peak_rss_mib(cluster: Cluster, worker: str) -> float:
    """The most memory the worker has held resident since it started (VmHWM)."""
    status = Path(f"/proc/{cluster.processes[worker].pid}/status").read_text()
    (line,) = (line for line in status.splitlines() if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


async def _lacks(client: Client, name: str) -> bool:
    return name not in await tool_names(client)


async def test_a_forged_publish_does_not_stop_propagation(
    cluster: Cluster, attacker: redis.Redis
) -> None:
    """Absurd versions published for every source key: changes still reach every worker."""
    async with (
        Client(cluster.worker_url("w1")) as first,
        Client(cluster.worker_url("w2")) as second,
    ):
        await first.call_tool("add_greeting", {"name": "warmup", "template": "{name}"})
        await first.call_tool("reload_catalogue", {})
        await until(lambda: has(second, "warmup"))
        keys = set()  # every source key the workers use, as anyone can read them
        for versions in ("changes:signed-versions", "changes:versions"):
            fields = attacker.hkeys(_key(cluster, versions))
            keys |= {key.decode() if isinstance(key, bytes) else key for key in fields}
        assert keys
        for key in keys:
            forged = {"origin": "attacker", "versions": {key: ABSURD}}
            attacker.publish(_key(cluster, "changes"), json.dumps(forged))
            attacker.publish(_key(cluster, "changes"), json.dumps({**forged, "mac": "0" * 32}))
        await anyio.sleep(1)  # the forged messages are delivered (and refused) by now

        registered = await first.call_tool("add_greeting", {"name": "after", "template": "{name}"})
        await until(lambda: has(second, "after"))
        await first.call_tool("remove_greeting", {"name": "warmup"})
        await until(lambda: _lacks(second, "warmup"))
        add_catalogue_tool(Path(cluster.env["CATALOGUE_FILE"]), "catalogued_after")
        await first.call_tool("reload_catalogue", {})
        await until(lambda: has(second, "catalogued_after"))
        await first.call_tool("remove_greeting", {"name": "after"})
    status, document = health(cluster.health_url("w2"))
    assert text(registered) == "after registered for every worker (through w1)"
    assert status == 200
    assert document["status"] == "ok"
    bus = next(b for b in document["backends"] if b["backend"].startswith("change bus"))
    assert "refused" in (bus["detail"] or "")


async def test_a_replayed_registration_does_not_resurrect_a_tool(
    cluster: Cluster, attacker: redis.Redis
) -> None:
    """An unregistered tool's old entry put back: no worker serves it, nor one that joins later."""
    async with (
        Client(cluster.worker_url("w1")) as first,
        Client(cluster.worker_url("w2")) as second,
    ):
        before = set(attacker.scan_iter(match=_key(cluster, "shared:shared:*")))
        await first.call_tool("add_greeting", {"name": "ghost", "template": "boo {name}"})
        key = _shared_key(attacker, cluster, before)
        copied = _value(attacker, key)
        await until(lambda: has(second, "ghost"))
        await first.call_tool("remove_greeting", {"name": "ghost"})
        await until(lambda: _lacks(second, "ghost"))

        attacker.set(key, copied)  # the replay
        # Any later change makes the workers read the shared entries again.
        await first.call_tool("add_greeting", {"name": "bystander", "template": "{name}"})
        await until(lambda: has(second, "bystander"))
        served = [await tool_names(client) for client in (first, second)]
        # The workers hold the tombstone: they write it back over the replay.
        await until(lambda: _changed(attacker, key, copied))
        cluster.start_worker("w3")
        try:
            async with Client(cluster.worker_url("w3")) as joined:
                joined_names = await tool_names(joined)
        finally:
            cluster.stop_worker("w3")
        await first.call_tool("remove_greeting", {"name": "bystander"})
    assert all("ghost" not in names for names in served)
    assert "ghost" not in joined_names


async def test_a_replayed_catalogue_entry_does_not_roll_workers_back(
    cluster: Cluster, attacker: redis.Redis
) -> None:
    """The cache entry of an older catalogue put back: workers and joiners serve the newer one."""
    catalogue = anyio.Path(cluster.env["CATALOGUE_FILE"])
    original = await catalogue.read_text()
    async with (
        Client(cluster.worker_url("w1")) as first,
        Client(cluster.worker_url("w2")) as second,
    ):
        add_catalogue_tool(Path(catalogue), "withdrawn")
        await first.call_tool("reload_catalogue", {})
        await until(lambda: has(second, "withdrawn"))
        key = _catalogue_key(attacker, cluster)
        old = _value(attacker, key)
        await catalogue.write_text(original)
        await first.call_tool("reload_catalogue", {})
        await until(lambda: _lacks(second, "withdrawn"))

        attacker.set(key, old)  # the replay
        # The workers' repair writes the newer entry back and announces it.
        await until(lambda: _changed(attacker, key, old))
        served = [await tool_names(client) for client in (first, second)]
        await catalogue.rename(catalogue.with_suffix(".away"))  # a joiner reads Redis alone
        try:
            cluster.start_worker("w3")
            async with Client(cluster.worker_url("w3")) as joined:
                joined_names = await tool_names(joined)
        finally:
            cluster.stop_worker("w3")
            await catalogue.with_suffix(".away").rename(catalogue)
    assert all("withdrawn" not in names for names in served)
    assert "withdrawn" not in joined_names
    assert "hello" in joined_names


async def test_an_overwritten_fingerprint_keeps_the_deployment_ready(
    cluster: Cluster, attacker: redis.Redis
) -> None:
    """One SET of the fingerprint: workers stay ready behind HAProxy; a restarted one starts."""
    fingerprint = _key(cluster, "deployment:signed-fingerprint")
    attacker.set(fingerprint, b"0" * 64)
    await anyio.sleep(3)  # more than a heartbeat: the workers have looked at it
    states = [health(cluster.health_url(worker)) for worker in ("w1", "w2")]
    async with Client(cluster.url) as balanced:
        answered = {text(await balanced.call_tool("whoami", {})) for _ in range(6)}

    # No live worker keeps it: w2 restarted over junk warns, writes it back, and serves.
    cluster.stop_worker("w2")
    cluster.stop_worker("w1")
    attacker.set(fingerprint, b"written without the secret")
    cluster.start_worker("w1")
    cluster.start_worker("w2")
    async with Client(cluster.worker_url("w2")) as restarted:
        names = await tool_names(restarted)
    assert [status for status, _ in states] == [200, 200]
    assert all(document["status"] == "ok" for _, document in states)
    assert answered == {"w1", "w2"}
    assert "hello" in names
    assert attacker.get(fingerprint) != b"written without the secret"
    assert "fingerprint record" in cluster.log("w1")


async def test_junk_entries_cost_bounded_memory(cluster: Cluster, attacker: redis.Redis) -> None:
    """200 MiB of junk under the shared prefix: never read; workers serve what they had.

    A listing past its bounds is refused before any value is read (the shared source says why,
    naming the junk), so the workers keep serving the registrations they hold, stay ready, and
    follow new ones again once the junk is gone.
    """
    async with (
        Client(cluster.worker_url("w1")) as first,
        Client(cluster.worker_url("w2")) as second,
    ):
        await first.call_tool("add_greeting", {"name": "before_junk", "template": "{name}"})
        await until(lambda: has(second, "before_junk"))
        before = {worker: _peak_rss_mib(cluster, worker) for worker in ("w1", "w2")}
        junk = [_key(cluster, f"shared:shared:{n:032x}") for n in range(JUNK_MIB)]
        for key in junk:
            attacker.set(key, b"j" * (1024 * 1024 - 1))  # just under what a listing reads
        try:
            # A registration meanwhile: every worker lists the shared entries again.
            await first.call_tool("add_greeting", {"name": "amid_junk", "template": "{name}"})
            await anyio.sleep(6)  # and a repair round lists them too
            called = [
                text(await client.call_tool("before_junk", {"name": "still here"}))
                for client in (first, second)
            ]
            after = {worker: _peak_rss_mib(cluster, worker) for worker in ("w1", "w2")}
            states = [health(cluster.health_url(worker)) for worker in ("w1", "w2")]
        finally:
            attacker.delete(*junk)
        await first.call_tool("add_greeting", {"name": "after_junk", "template": "{name}"})
        await until(lambda: has(second, "after_junk"))
        amid = await has(second, "amid_junk")
        for name in ("before_junk", "amid_junk", "after_junk"):
            await first.call_tool("remove_greeting", {"name": name})
    assert called == ["still here", "still here"]
    assert amid  # written while the junk was there, served once it is gone
    assert [status for status, _ in states] == [200, 200]
    assert all(document["status"] != "misconfigured" for _, document in states)
    growth = {worker: after[worker] - before[worker] for worker in before}
    assert all(mib < PEAK_GROWTH_MIB for mib in growth.values()), growth


def _value(attacker: redis.Redis, key: bytes) -> bytes:
    value = attacker.get(key)
    assert isinstance(value, bytes)
    return value


async def _changed(attacker: redis.Redis, key: bytes, value: bytes) -> bool:
    return bool(attacker.get(key) != value)
