"""Workers that come and go under load: a rolling restart, and a worker killed outright.

Three workers of the example's deployment behind HAProxy (the configuration
``docs/deployment.md`` shows) and one Redis, with clients of both eras calling a tool in a loop
through the balancer the whole time:

- a rolling restart (each worker in turn: SIGTERM, which drains it, then started again) fails
  no 2026-07-28 request; every worker exits 0 (drained, nothing cut);
- ``kill -9`` of one worker fails only the requests it had in flight, each with the balancer's
  JSON-RPC error saying the worker stopped before answering and that the request may be retried,
  or, on a client connection that carried earlier requests, with that connection closed without
  an answer (HAProxy's deliberate signal that the request may be retried, which the SDK's client
  reports as "Server disconnected without sending a response"); every client goes on being
  answered by the others.

Handshake-era sessions live in their worker (ADR 0048): a session whose worker restarts ends
(``Session terminated``; the client opens a new one). What the test allows them is exactly that.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.clients import text, until
from tests.e2e._workers import EXAMPLE, Cluster, needs_cluster

pytestmark = [
    needs_cluster,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

WORKERS = ("w1", "w2", "w3")
CURRENT = 4
"""2026-07-28 clients under load."""
LEGACY = 2
"""Handshake-era clients under load."""
SESSION_ENDED = ("Session not found", "Session terminated")
"""How a client hears that its session ended (the worker's or the balancer's 404; the SDK's)."""
WORKER_DIED = "The worker serving this request stopped before answering"
CUT = "Server disconnected without sending a response"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Redis, three workers (w1, w2, w3) and HAProxy, for the whole module."""
    root = tmp_path_factory.mktemp("restarts")
    catalogue = root / "catalogue.json"
    shutil.copy(EXAMPLE / "catalogue.json", catalogue)
    deployment = Cluster(root, len(WORKERS), env={"CATALOGUE_FILE": str(catalogue)})
    try:
        deployment.start()
        yield deployment
    finally:
        deployment.stop()
        for name in WORKERS:
            print(f"--- {name}\n{deployment.log(name)[-3000:]}")  # noqa: T201 -- shown when a test fails


@dataclass
class Load:
    """Clients calling ``pause`` through the balancer until told to stop, and what they got."""

    url: str
    seconds: float
    answered: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(era, worker) -> answers."""
    failures: list[tuple[str, str]] = field(default_factory=list)
    """(era, error message) of every request that failed."""
    stop: anyio.Event = field(default_factory=anyio.Event)

    async def client(self, mode: str) -> None:
        """One client: a session (legacy: a new one whenever its worker ended the last)."""
        while not self.stop.is_set():
            try:
                async with Client(self.url, mode=mode) as client:
                    await client.list_tools()  # the tool's output schema, asked once
                    await self._calls(client, mode)
            except Exception as exc:  # noqa: BLE001 -- opening or closing a session failed
                if not self.stop.is_set() or not _ended(repr(exc)):
                    self.failures.append((f"{mode} session", repr(exc)[:300]))

    async def _calls(self, client: Client, mode: str) -> None:
        while not self.stop.is_set():
            try:
                result = await client.call_tool("pause", {"seconds": self.seconds})
            except MCPError as exc:
                self.failures.append((mode, str(exc)))
                if _ended(str(exc)):
                    return  # this session is gone: open another
                continue
            if result.is_error:
                self.failures.append((mode, text(result)))
            else:
                self.answered[mode, text(result)] += 1
            await anyio.sleep(0.02)  # the machine is shared: a steady load, not a flood

    def count(self, mode: str) -> int:
        """Answers the clients of one era got."""
        return sum(n for (era, _), n in self.answered.items() if era == mode)


def _ended(message: str) -> bool:
    return any(ended in message for ended in SESSION_ENDED)


async def _under_load(cluster: Cluster, seconds: float, during: Callable[[], None]) -> Load:
    load = Load(cluster.url, seconds)
    async with anyio.create_task_group() as clients:
        for _ in range(CURRENT):
            clients.start_soon(load.client, "auto")
        for _ in range(LEGACY):
            clients.start_soon(load.client, "legacy")
        await _until(lambda: all(load.count(mode) >= 5 for mode in ("auto", "legacy")))
        await anyio.to_thread.run_sync(during)
        before = dict(load.answered)
        # Every client is answered again afterwards, by the workers that are up.
        await _until(lambda: load.count("auto") >= sum(before.values()) + 10)
        load.stop.set()
    return load


async def _until(check: Callable[[], bool]) -> None:
    async def holds() -> bool:
        return check()

    await until(holds, wait=120)


async def test_a_rolling_restart_fails_no_request(cluster: Cluster) -> None:
    """SIGTERM each worker in turn and start it again: no 2026-07-28 request fails."""
    statuses: dict[str, int | None] = {}

    def restart_every_worker() -> None:
        for worker in WORKERS:
            statuses[worker] = cluster.stop_worker(worker)
            cluster.start_worker(worker)
            cluster.wait_in_rotation(worker)

    load = await _under_load(cluster, 0.05, restart_every_worker)
    current = [message for era, message in load.failures if era.startswith("auto")]
    legacy = [message for era, message in load.failures if era.startswith("legacy")]
    assert statuses == dict.fromkeys(WORKERS, 0)  # each drained, nothing cut
    assert current == []
    assert {worker for (era, worker) in load.answered if era == "auto"} == set(WORKERS)
    # A handshake-era session ends with its worker, and only so.
    assert all(_ended(message) for message in legacy), legacy
    print(f"answered {dict(load.answered)}; legacy sessions ended: {len(legacy)}")  # noqa: T201 -- the figures


async def test_a_killed_worker_fails_only_what_it_had_in_flight(cluster: Cluster) -> None:
    """``kill -9`` of w3: its in-flight requests fail with a retryable error; the rest go on."""

    def kill() -> None:
        cluster.kill_worker("w3")

    try:
        load = await _under_load(cluster, 0.3, kill)
    finally:
        cluster.start_worker("w3")  # once its lease in Redis has expired
    current = [message for era, message in load.failures if era.startswith("auto")]
    legacy = [message for era, message in load.failures if era.startswith("legacy")]
    assert len(current) <= CURRENT  # at most one in flight per client
    # The balancer's 502 (a client's first request on its connection), or the connection
    # closed without an answer (HAProxy's way on a connection that carried earlier requests).
    assert all((WORKER_DIED in m and "retry it" in m) or CUT in m for m in current), current
    # A handshake-era session of w3 ends with it: its requests in flight as above, its open
    # GET stream cut (the SDK's client then ends the session with a transport error), its next
    # request answered 404.
    assert all(WORKER_DIED in m or _ended(m) or CUT in m for m in legacy), legacy
    print(f"answered {dict(load.answered)}; failed: {load.failures}")  # noqa: T201 -- the figures


def test_the_balancer_runs_the_documented_configuration(cluster: Cluster) -> None:
    """The file HAProxy runs here is the generator's, as the docs show it (test_deployment_docs)."""
    written = (Path(cluster.root) / "haproxy.cfg").read_text()
    assert "retry-on conn-failure" in written
    assert "uri /readyz" in written
    assert "option http-no-delay" in written
