"""Redis stopped, frozen (SIGSTOP) and restarted under two workers: they answer, say so, converge.

Each test runs its own deployment (the example's: Redis, two workers, HAProxy). While Redis is
gone every worker keeps serving what it has (lists, calls, through the balancer and directly),
its health endpoint reports the shared backends ``down`` (still 200: the catalogue is served), a
shared registration fails with a message saying why, and a reload is served locally at once and
kept; when Redis is back every worker converges on what changed during the outage and on what
was registered before it, and reports ``ok`` again.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.clients import WAIT, listening, text, tool_names, until
from tests.e2e._workers import (
    Cluster,
    add_catalogue_tool,
    backend_states,
    deployed,
    has,
    health,
    needs_cluster,
)

pytestmark = [
    needs_cluster,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    """A deployment of its own: Redis, w1, w2 and HAProxy."""
    with deployed(tmp_path) as deployment:
        yield deployment


def _break(cluster: Cluster, fault: str) -> None:
    if fault == "frozen":
        cluster.freeze_redis()
    else:
        cluster.stop_redis()


def _mend(cluster: Cluster, fault: str) -> None:
    if fault == "frozen":
        cluster.thaw_redis()
    else:
        cluster.start_redis()


def _reports(cluster: Cluster, worker: str, state: str) -> bool:
    status, document = health(cluster.health_url(worker))
    return status == 200 and state in backend_states(document)


@pytest.mark.parametrize("fault", ["restarted", "frozen"])
async def test_workers_ride_out_redis(cluster: Cluster, fault: str) -> None:
    """Serving never stops; health says down then ok; what changed meanwhile reaches everyone."""
    catalogue = Path(cluster.env["CATALOGUE_FILE"])
    async with (
        Client(cluster.worker_url("w1")) as first,
        listening(cluster.worker_url("w2"), "legacy") as (second, changes),
        Client(cluster.url) as balanced,
    ):
        registered = await first.call_tool("add_greeting", {"name": "before", "template": "{name}"})
        await until(lambda: has(second, "before"))

        _break(cluster, fault)
        for worker in ("w1", "w2"):
            await _until(lambda w=worker: _reports(cluster, w, "down"))
        # Every worker answers, directly and through the balancer, from what it has.
        with anyio.fail_after(WAIT):  # a guard against hanging, not a timing assertion
            answers = [
                text(await client.call_tool("hello", {"name": "Ada"}))
                for client in (first, second, balanced, balanced)
            ]
            listed = [await tool_names(client) for client in (first, second, balanced)]
            refused = await first.call_tool("add_greeting", {"name": "during", "template": "x"})
            add_catalogue_tool(catalogue, "reloaded_during")
            reloaded = await first.call_tool("reload_catalogue", {})
            served_at_once = "reloaded_during" in await tool_names(first)
        _, during = health(cluster.health_url("w1"))
        heard = changes.seen

        _mend(cluster, fault)
        await changes.after(heard)
        await until(lambda: has(second, "reloaded_during"))
        for worker in ("w1", "w2"):
            await _until(lambda w=worker: _health_ok(cluster, w))
        after = [await tool_names(client) for client in (first, second)]
        again = await first.call_tool("add_greeting", {"name": "after", "template": "{name}!"})
        await until(lambda: has(second, "after"))
        called = await second.call_tool("after", {"name": "Ada"})

    assert text(registered) == "before registered for every worker (through w1)"
    assert answers == ["Hello Ada!"] * 4
    assert all({"hello", "before"} <= names for names in listed)
    assert refused.is_error is True
    assert text(refused).startswith("during is not registered: Redis")
    assert "out of memory" not in text(refused)
    assert text(reloaded) == "catalogue reloaded through w1"
    assert served_at_once
    assert during["status"] == "degraded"
    assert any("waiting to be published" in (b["detail"] or "") for b in during["backends"])
    assert all({"before", "reloaded_during"} <= names for names in after)
    assert all("during" not in names for names in after)
    assert text(again) == "after registered for every worker (through w1)"
    assert text(called) == "Ada!"


def _health_ok(cluster: Cluster, worker: str) -> bool:
    status, document = health(cluster.health_url(worker))
    return status == 200 and document["status"] == "ok"


async def _until(check: object) -> None:
    async def holds() -> bool:
        return bool(await anyio.to_thread.run_sync(check))  # type: ignore[arg-type]

    await until(holds)
