"""Workers that come and go under load: a rolling restart, a worker killed, a worker stopped.

Three workers of the example's deployment behind HAProxy (the configuration
``docs/deployment.md`` shows) and one Redis, with clients of both eras calling a tool in a loop
through the balancer the whole time; every test runs twice: with the documented session rules
(``sticky``: a session's requests go to the worker that opened it while it is up) and with none
(``round-robin``: every request to the next worker, as a Kubernetes Service without affinity).

- a rolling restart (each worker in turn: SIGTERM, which drains it, then started again) fails
  no request of either era, and no handshake-era session ends: each goes on on the workers that
  are up (ADR 0109); every worker exits 0 (drained, nothing cut);
- ``kill -9`` of one worker fails only the requests it had in flight, each with the balancer's
  JSON-RPC error saying the worker stopped before answering and that the request may be retried,
  or, on a client connection that carried earlier requests, with that connection closed without
  an answer (HAProxy's deliberate signal that the request may be retried, which the SDK's client
  reports as "Server disconnected without sending a response"); every client goes on being
  answered by the others, in the session it had;
- a session whose worker is killed continues elsewhere: its next request is answered and its
  stream, resumed from an event id it had, delivers what followed; a session whose worker is
  stopped (SIGTERM) gets its call in flight answered, and its stream resumes on another worker
  and goes on delivering.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.clients import WAIT, text, until
from tests.e2e._http import Event, RawSession, answer_to, parse_sse
from tests.e2e._workers import EXAMPLE, Cluster, needs_cluster, show_logs

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


@pytest.fixture(scope="module", params=["sticky", "round-robin"])
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    """Redis, three workers (w1, w2, w3) and HAProxy, with or without session rules."""
    root = tmp_path_factory.mktemp("restarts")
    catalogue = root / "catalogue.json"
    shutil.copy(EXAMPLE / "catalogue.json", catalogue)
    deployment = Cluster(
        root,
        len(WORKERS),
        env={"CATALOGUE_FILE": str(catalogue)},
        sticky=request.param == "sticky",
    )
    try:
        deployment.start()
        yield deployment
    finally:
        deployment.stop()
        show_logs(deployment, WORKERS)


@dataclass
class Load:
    """Clients calling ``pause`` through the balancer until told to stop, and what they got."""

    url: str
    seconds: float
    answered: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(era, worker) -> answers."""
    failures: list[tuple[str, str]] = field(default_factory=list)
    """(era, error message) of every request that failed."""
    sessions: Counter[str] = field(default_factory=Counter)
    """era -> sessions opened (a client opens another only when its session ended)."""
    stop: anyio.Event = field(default_factory=anyio.Event)

    async def client(self, mode: str) -> None:
        """One client: a session (a new one whenever the last ended)."""
        while not self.stop.is_set():
            try:
                self.sessions[mode] += 1
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
    print(f"answered {dict(load.answered)}; failed: {load.failures}")  # noqa: T201 -- the figures
    assert statuses == dict.fromkeys(WORKERS, 0)  # each drained, nothing cut
    assert load.failures == []
    assert {worker for (era, worker) in load.answered if era == "auto"} == set(WORKERS)
    # No handshake-era session ended: each client kept the one it opened, served by others.
    assert load.sessions["legacy"] == LEGACY
    assert len({worker for (era, worker) in load.answered if era == "legacy"}) > 1


async def test_a_killed_worker_fails_only_what_it_had_in_flight(cluster: Cluster) -> None:
    """``kill -9`` of w3: its in-flight requests fail with a retryable error; the rest go on."""

    def kill() -> None:
        cluster.kill_worker("w3")

    try:
        load = await _under_load(cluster, 0.3, kill)
    finally:
        cluster.start_worker("w3")  # once its lease in Redis has expired
    print(f"answered {dict(load.answered)}; failed: {load.failures}")  # noqa: T201 -- the figures
    assert len(load.failures) <= CURRENT + LEGACY  # at most one in flight per client
    # The balancer's 502 (a client's first request on its connection), or the connection
    # closed without an answer (HAProxy's way on a connection that carried earlier requests).
    assert all((WORKER_DIED in m and "retry it" in m) or CUT in m for _, m in load.failures), (
        load.failures
    )
    # No session ended: w3's go on on the other workers. (The SDK's client ends itself when a
    # connection is cut under a request in flight; only then did a client open another.)
    legacy_cut = sum(1 for era, m in load.failures if era.startswith("legacy") and CUT in m)
    assert load.sessions["legacy"] <= LEGACY + legacy_cut
    assert not any(_ended(m) for _, m in load.failures)


@dataclass
class Stream:
    """A session's GET stream read in the background: its status and the events so far."""

    session: RawSession
    url: str
    last_event_id: str | None = None
    status: int = 0
    text: str = ""
    ended: anyio.Event = field(default_factory=anyio.Event)

    async def read(self) -> None:
        """Read until the server ends the stream (or the connection is cut)."""
        headers = self.session.headers(accept="text/event-stream")
        if self.last_event_id is not None:
            headers["last-event-id"] = self.last_event_id
        try:
            async with self.session.http.stream("GET", self.url, headers=headers) as response:
                self.status = response.status_code
                async for chunk in response.aiter_text():
                    self.text += chunk
        except httpx2.HTTPError:
            pass  # cut: what arrived is in self.text
        finally:
            self.ended.set()

    @property
    def events(self) -> list[Event]:
        """The events received so far."""
        return parse_sse(self.text)

    def carries(self, method: str) -> bool:
        """Whether a notification ``method`` arrived."""
        return any((event.message or {}).get("method") == method for event in self.events)


LIST_CHANGED = "notifications/tools/list_changed"


async def _change_the_tool_list(cluster: Cluster, name: str) -> None:
    """A shared registration, made through the balancer: every worker tells its sessions."""
    async with Client(cluster.url) as client:
        result = await client.call_tool("add_greeting", {"name": name, "template": "hi {name}"})
        assert not result.is_error, text(result)


async def _call(session: RawSession, url: str, request_id: int, seconds: float) -> dict[str, Any]:
    session.url = url
    events = await session.request(
        "tools/call", {"name": "pause", "arguments": {"seconds": seconds}}, request_id=request_id
    )
    message = events[-1].message
    assert message is not None
    return message


def _worker_of(answer: dict[str, Any]) -> str:
    return str(answer["result"]["content"][0]["text"])


async def test_a_killed_workers_session_continues_elsewhere(cluster: Cluster) -> None:
    """``kill -9`` of a session's worker: its next request is answered, its stream resumed elsewhere.

    The session's GET stream on its worker gets a ``list_changed``; the worker is killed; the
    stream resumed through the balancer from the event before it (as a client that missed it
    would) is served by another worker and delivers it; the next call is answered there too.
    """
    async with httpx2.AsyncClient(timeout=WAIT) as http:
        session = RawSession(cluster.url, http)
        await session.open()
        assert session.session_id is not None
        owner = session.session_id.partition(".")[0]
        stream = Stream(session, cluster.worker_url(owner))
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(stream.read)
            await _until(lambda: bool(stream.events))  # the priming event: a cursor
            before = stream.events[-1].id
            await _change_the_tool_list(cluster, "after_kill")
            await _until(lambda: stream.carries(LIST_CHANGED))
            await anyio.to_thread.run_sync(cluster.kill_worker, owner)
            with anyio.fail_after(WAIT):
                await stream.ended.wait()
        try:
            resumed = Stream(session, cluster.url, last_event_id=before)
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(resumed.read)
                await _until(lambda: resumed.carries(LIST_CHANGED))
                tasks.cancel_scope.cancel()
            answer = await _call(session, cluster.url, 7, 0)
        finally:
            cluster.start_worker(owner)
            cluster.wait_in_rotation(owner)
    assert resumed.status == 200
    assert _worker_of(answer) != owner


async def test_a_stopped_worker_finishes_its_call_and_its_stream_resumes_elsewhere(
    cluster: Cluster,
) -> None:
    """SIGTERM to a session's worker: the call in flight is answered; the stream goes on elsewhere.

    The worker drains: the call it is running is answered, the session's GET stream is ended
    where the client resumes it; resumed through the balancer, it is served by another worker
    and delivers the next change.
    """
    async with httpx2.AsyncClient(timeout=WAIT) as http:
        session = RawSession(cluster.url, http)
        await session.open()
        assert session.session_id is not None
        owner = session.session_id.partition(".")[0]
        stream = Stream(session, cluster.worker_url(owner))
        answers: list[dict[str, Any]] = []
        status: list[int | None] = []

        async def call_in_flight() -> None:
            caller = RawSession(cluster.worker_url(owner), http, session.session_id)
            answers.append(await _call(caller, cluster.worker_url(owner), 8, 2))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(stream.read)
            await _until(lambda: bool(stream.events))
            tasks.start_soon(call_in_flight)
            await anyio.sleep(0.5)
            status.append(await anyio.to_thread.run_sync(cluster.stop_worker, owner))
            with anyio.fail_after(WAIT):
                await stream.ended.wait()
        try:
            last = [event.id for event in stream.events if event.id][-1]
            resumed = Stream(session, cluster.url, last_event_id=last)
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(resumed.read)
                await _until(lambda: resumed.status == 200)
                await _change_the_tool_list(cluster, "after_stop")
                await _until(lambda: resumed.carries(LIST_CHANGED))
                tasks.cancel_scope.cancel()
        finally:
            cluster.start_worker(owner)
            cluster.wait_in_rotation(owner)
    assert status == [0]  # drained, nothing cut
    assert [_worker_of(answer) for answer in answers] == [owner]


async def test_a_calls_stream_resumes_on_another_worker(cluster: Cluster) -> None:
    """A call's stream, closed for polling at w1 and resumed at w2, delivers the rest to the answer.

    ``countdown`` closes its stream after its first log line; the client resumes it at another
    worker, which follows the call still running on w1 through Redis.
    """
    async with httpx2.AsyncClient(timeout=WAIT) as http:
        session = RawSession(cluster.worker_url("w1"), http)
        await session.open()
        call = {"name": "countdown", "arguments": {"count": 5}}
        first = await session.request("tools/call", call, request_id=3)
        session.url = cluster.worker_url("w2")
        status, rest = await session.resume(first[-1].id, until=answer_to(3))
    said = [(event.message or {}).get("params", {}).get("data") for event in first + rest]
    answer = [event.message for event in rest if (event.message or {}).get("id") == 3]
    assert status == 200
    assert [line for line in said if line] == ["5...", "4...", "3...", "2...", "1..."]
    assert answer[0] is not None
    assert answer[0]["result"]["content"][0]["text"] == "lift-off on w1"


def test_the_balancer_runs_the_documented_configuration(cluster: Cluster) -> None:
    """The file HAProxy runs here is the generator's, as the docs show it (test_deployment_docs)."""
    written = (Path(cluster.root) / "haproxy.cfg").read_text()
    assert "retry-on conn-failure" in written
    assert "uri /readyz" in written
    assert "option http-no-delay" in written
