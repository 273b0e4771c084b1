"""Several workers behind HAProxy, one Redis: one catalogue, changes everywhere, sticky sessions.

The deployment is the example's (``examples/deployment``): two ``mcp-core run`` workers started
with ``--worker-id``, ``--redis`` and ``--secret-file``, HAProxy in front with the configuration
the example writes, a real Redis server. Changes go in through one worker and are looked for on
the other, reached directly so the test knows which is which; sessions go through the balancer.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
import redis
from mcp import Client

from tests.clients import WAIT, listening, text, tool_names, until
from tests.e2e._http import ForwardedSession, RawSession
from tests.e2e._workers import (
    EXAMPLE,
    Cluster,
    add_catalogue_tool,
    backend_states,
    deployed,
    free_port,
    has,
    health,
    needs_cluster,
)

pytestmark = [
    needs_cluster,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

MODES = ("auto", "legacy")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Redis, two workers (w1, w2) and HAProxy, for the whole module."""
    with deployed(tmp_path_factory.mktemp("cluster")) as deployment:
        yield deployment


@pytest.mark.parametrize("mode", MODES)
async def test_a_shared_registration_reaches_the_other_worker(cluster: Cluster, mode: str) -> None:
    """A tool registered through w1 is listed and callable on w2, whose client hears of it."""
    name = f"greet_{mode}"
    async with (
        Client(cluster.worker_url("w1")) as first,
        listening(cluster.worker_url("w2"), mode) as (second, changes),
    ):
        heard = changes.seen
        registered = await first.call_tool("add_greeting", {"name": name, "template": "Hi {name}"})
        await changes.after(heard)
        await until(lambda: has(second, name))
        called = await second.call_tool(name, {"name": "Ada"})
        removed = await first.call_tool("remove_greeting", {"name": name})
        await until(lambda: _lacks(second, name))
    assert text(registered) == f"{name} registered for every worker (through w1)"
    assert text(called) == "Hi Ada"
    assert text(removed) == f"{name} removed"


@pytest.mark.parametrize("mode", MODES)
async def test_a_reload_reaches_the_other_worker(cluster: Cluster, mode: str) -> None:
    """The catalogue reloaded through w1 (its file changed) is served by w2, which announces it."""
    name = f"catalogued_{mode}"
    async with (
        Client(cluster.worker_url("w1")) as first,
        listening(cluster.worker_url("w2"), mode) as (second, changes),
    ):
        before = await tool_names(second)
        add_catalogue_tool(Path(cluster.env["CATALOGUE_FILE"]), name)
        heard = changes.seen
        reloaded = await first.call_tool("reload_catalogue", {})
        await changes.after(heard)
        await until(lambda: has(second, name))
        called = await second.call_tool(name, {"name": "Ada"})
    assert name not in before
    assert text(reloaded) == "catalogue reloaded through w1"
    assert text(called) == f"{name} says hi to Ada"


async def test_2026_requests_are_served_by_any_worker(cluster: Cluster) -> None:
    """Through the balancer, stateless 2026-07-28 requests reach both workers, and all succeed."""
    answered: set[str] = set()
    async with Client(cluster.url) as client:
        for _ in range(8):
            answered.add(text(await client.call_tool("whoami", {})))
            assert "hello" in await tool_names(client)
    assert answered == {"w1", "w2"}


async def test_handshake_sessions_stay_on_their_worker(cluster: Cluster) -> None:
    """Each legacy session's follow-ups all reach the worker that opened it, whichever that is."""
    opened: dict[str, str] = {}
    for _ in range(4):
        async with Client(cluster.url, mode="legacy") as client:
            workers = {text(await client.call_tool("whoami", {})) for _ in range(6)}
            assert len(workers) == 1
            session = client.session_id if hasattr(client, "session_id") else None
            opened[str(session or len(opened))] = workers.pop()
    assert set(opened.values()) == {"w1", "w2"}


async def test_a_session_resumes_its_stream_through_the_balancer(cluster: Cluster) -> None:
    """A stream the worker closes mid-call resumes (Last-Event-ID) via HAProxy, on its worker."""
    async with httpx2.AsyncClient(timeout=WAIT) as http:
        session = RawSession(cluster.url, http)
        await session.open()
        assert session.session_id is not None
        owner = session.session_id.split(".", 1)[0]
        await session.request("logging/setLevel", {"level": "info"}, request_id=1)
        cut = await session.request(
            "tools/call", {"name": "countdown", "arguments": {"count": 5}}, request_id=7
        )
        status, resumed = await session.resume(
            session.event_ids[-1],
            until=lambda seen: any((e.message or {}).get("id") == 7 for e in seen),
        )
    before = [e.message for e in cut if e.message]
    results = [e.message for e in resumed if e.message and e.message.get("id") == 7]
    logged = [
        m["params"]["data"]
        for m in [*before, *(e.message for e in resumed if e.message)]
        if "method" in m
    ]
    assert owner in {"w1", "w2"}
    assert not any(m.get("id") == 7 for m in before)  # the worker closed the stream mid-call
    assert status == 200
    assert logged == ["5...", "4...", "3...", "2...", "1..."]
    assert len(results) == 1
    assert results[0]["result"]["content"][0]["text"] == f"lift-off on {owner}"


async def test_the_official_client_resumes_through_the_balancer(cluster: Cluster) -> None:
    """The official client (2025-11-25) gets the countdown's result: it resumes on its own."""
    async with Client(cluster.url, mode="legacy") as client:
        owner = text(await client.call_tool("whoami", {}))
        result = await client.call_tool("countdown", {"count": 3})
    assert text(result) == f"lift-off on {owner}"


async def test_another_worker_resumes_a_session_and_refuses_an_unrecorded_one(
    cluster: Cluster,
) -> None:
    """w1's session at w2 is served there (ADR 0109); one without a record: 421 naming both."""
    async with httpx2.AsyncClient(timeout=WAIT) as http:
        session = RawSession(cluster.worker_url("w1"), http)
        await session.open()
        assert session.session_id is not None
        assert session.session_id.startswith("w1.")
        resumed = await http.post(
            cluster.worker_url("w2"),
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers=session.headers(),
        )
        # A session of w1 that has no record (its store did not take it): w1 alone serves it.
        misrouted = await http.post(
            cluster.worker_url("w2"),
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            headers={**session.headers(), "mcp-session-id": f"w1.{'0' * 32}"},
        )
        served = await http.post(
            cluster.url,
            json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
            headers=session.headers(),
        )
    assert resumed.status_code == 200
    assert "tools" in resumed.text
    error = misrouted.json()["error"]
    assert misrouted.status_code == 421
    assert error["data"]["sessionWorker"] == "w1"
    assert "belongs to worker 'w1'" in error["message"]
    assert served.status_code == 200  # held in memory by w1 and w2, which serve it on


async def test_health_names_the_worker_and_its_backends(cluster: Cluster) -> None:
    """/healthz of a worker: its id, Redis and the change bus ok."""
    status, document = health(cluster.health_url("w1"))
    assert status == 200
    assert document["worker"] == "w1"
    assert document["status"] == "ok"
    assert backend_states(document) == {"ok"}
    assert len(document["backends"]) == 2


async def test_a_joining_worker_serves_the_catalogue_from_redis(cluster: Cluster) -> None:
    """A third worker started without the catalogue file serves it from the shared cache."""
    path = anyio.Path(cluster.env["CATALOGUE_FILE"])
    document = json.loads(await path.read_text())
    expected = {element["definition"]["name"] for element in document["elements"]}
    hidden = path.with_suffix(".away")
    await path.rename(hidden)
    try:
        cluster.start_worker("w3")
        async with Client(cluster.worker_url("w3")) as joined:
            listed = await tool_names(joined)
        status, document = health(cluster.health_url("w3"))
    finally:
        cluster.stop_worker("w3")
        await hidden.rename(path)
    assert listed >= expected
    assert status == 200
    assert document["status"] == "ok"  # the file was never read: no source failed


async def _lacks(client: Client, name: str) -> bool:
    return name not in await tool_names(client)


async def test_one_client_behind_haproxy_holds_only_its_own_sessions(cluster: Cluster) -> None:
    """Attacker: an anonymous client behind HAProxy opening 260 sessions (over 100 per worker).

    HAProxy adds ``X-Forwarded-For`` and the workers trust it (``--trusted-proxy``), so the
    attacker's sessions count against its own limit on each worker: its oldest are reclaimed,
    and another client's session, opened first, is still served. (Every test client connects
    from 127.0.0.1, so each names itself in an ``X-Forwarded-For`` of its own, as an outer proxy
    would; HAProxy's entry, 127.0.0.1, is trusted and skipped.)
    """
    limits = httpx2.Limits(max_connections=20)
    async with httpx2.AsyncClient(timeout=WAIT, limits=limits) as http:
        victim = ForwardedSession(cluster.url, http, forwarded="198.51.100.7")
        await victim.open()
        opened = []
        for _ in range(260):
            session = ForwardedSession(cluster.url, http, forwarded="203.0.113.9")
            await session.open()
            opened.append(session)
        ping = {"jsonrpc": "2.0", "id": 5, "method": "ping"}
        first = await http.post(cluster.url, json=ping, headers=opened[0].headers())
        last = await http.post(cluster.url, json=ping, headers=opened[-1].headers())
        kept = await http.post(cluster.url, json=ping, headers=victim.headers())
        for session in opened:
            await session.delete()
        await victim.delete()
    assert (first.status_code, last.status_code, kept.status_code) == (404, 200, 200)


async def test_redis_out_of_memory_is_named_and_reported(cluster: Cluster) -> None:
    """Redis at its maxmemory: a shared registration fails saying so; health says so until it heals.

    The worker that wrote reports the store ``down`` with what it saw (reads are still served);
    once Redis has room again, the next write succeeds and its health is ``ok`` again.
    """
    admin = redis.Redis.from_url(cluster.redis_url)
    try:
        admin.config_set("maxmemory", "1")  # every write refused: OOM
        async with Client(cluster.worker_url("w1")) as client:
            refused = await client.call_tool("add_greeting", {"name": "full", "template": "x"})
            _, full = health(cluster.health_url("w1"))
            admin.config_set("maxmemory", "0")
            accepted = await client.call_tool("add_greeting", {"name": "roomy", "template": "x"})
            await client.call_tool("remove_greeting", {"name": "roomy"})
        _, healed = health(cluster.health_url("w1"))
    finally:
        admin.config_set("maxmemory", "0")
        admin.close()
    (store,) = [b for b in full["backends"] if b["backend"].startswith("redis")]
    assert refused.is_error is True
    assert "is out of memory (maxmemory reached): it refused to write" in text(refused)
    assert "raise its maxmemory" in text(refused)
    assert (full["status"], store["state"]) == ("degraded", "down")
    assert "out of memory" in store["detail"]
    assert accepted.is_error is not True
    assert healed["status"] == "ok"
    assert "out of memory" in cluster.log("w1")


def test_a_duplicate_worker_id_is_refused_with_one_line(cluster: Cluster) -> None:
    """A second process started as w1 while w1 serves: one line naming the fix, status 2."""
    command = cluster.worker_command("w1", free_port())
    started = time.monotonic()
    refused = subprocess.run(  # noqa: S603 -- the example's own worker command
        command, cwd=EXAMPLE, capture_output=True, text=True, timeout=120, check=False
    )
    took = time.monotonic() - started
    lines = refused.stderr.splitlines()
    assert refused.returncode == 2
    holder = f"pid {cluster.processes['w1'].pid} on {socket.gethostname()!r}"
    said = (
        f"mcp-core: worker id 'w1' is already used by a live worker ({holder}); give every "
        "worker an id of its own"
    )
    assert lines == [said]
    print(f"refused {took:.2f} s after the start (Python and the app's imports included)")  # noqa: T201 -- the figure
