"""Figures of a deployment: change propagation, throughput through HAProxy, a joining worker's start.

    .venv/bin/python scripts/deployment_figures.py [--changes 50] [--requests 400]

Measures, on this machine, with the example deployment (``examples/deployment``: real Redis,
``mcp-core run`` workers, HAProxy, all on 127.0.0.1):

1. the time for a change to reach every worker: a shared registration made through w1, until a
   client of each other worker sees it listed (median and max over ``--changes`` changes);
2. requests per second through the balancer with 1, 2 and 4 workers (``tools/call`` of a small
   tool over 2026-07-28, ``--clients`` concurrent clients);
3. a joining worker's start (process start to ``/healthz`` 200 and the catalogue listed) with a
   catalogue of ``--catalogue`` tools: warm (from the shared Redis, the file never read) and cold
   (an empty Redis: the file read and cached).

Prints one table; asserts nothing (tests assert behaviour, this measures).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "deployment"))

from cluster import Cluster, missing_tools  # noqa: E402 -- the example's folder is on the path first


def _catalogue(path: Path, size: int) -> None:
    elements = [
        {
            "kind": "tool",
            "definition": {
                "name": f"tool_{n:05d}",
                "description": f"Catalogue tool number {n}.",
                "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                "_meta": {"template": f"tool {n} greets {{name}}"},
            },
            "handler": "greetings:Template",
        }
        for n in range(size)
    ]
    document = {"format": "mcp-core/element-collection", "version": 1, "elements": elements}
    path.write_text(json.dumps(document))


async def _names(client: Client) -> set[str]:
    """Every tool name, walking every page."""
    names: set[str] = set()
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor, cache_mode="bypass")
        names.update(tool.name for tool in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            return names


async def propagation(cluster: Cluster, changes: int) -> list[float]:
    """Seconds from a registration on w1 until every other worker lists it, per change."""
    seconds = []
    others = [name for name in cluster.ports if name != "w1"]
    async with Client(cluster.worker_url("w1")) as writer:
        clients = [Client(cluster.worker_url(name)) for name in others]
        for client in clients:
            await client.__aenter__()
        try:
            for number in range(changes):
                name = f"figure_{number}"
                started = time.perf_counter()
                await writer.call_tool("add_greeting", {"name": name, "template": "{name}"})
                for client in clients:
                    while name not in await _names(client):  # noqa: ASYNC110 -- state in another process
                        await anyio.sleep(0.001)
                seconds.append(time.perf_counter() - started)
                await writer.call_tool("remove_greeting", {"name": name})
        finally:
            for client in clients:
                await client.__aexit__(None, None, None)
    return seconds


async def throughput(url: str, requests: int, clients: int) -> float:
    """Completed ``tools/call`` requests per second through ``url`` with ``clients`` clients."""
    per_client = requests // clients

    async def one() -> None:
        async with Client(url) as client:
            await client.call_tool("whoami", {})  # warm the connection
            for _ in range(per_client):
                await client.call_tool("whoami", {})

    started = time.perf_counter()
    async with anyio.create_task_group() as tasks:
        for _ in range(clients):
            tasks.start_soon(one)
    return per_client * clients / (time.perf_counter() - started)


async def _listed(url: str) -> int:
    async with Client(url) as client:
        return len(await _names(client))


def joining(cluster: Cluster, name: str) -> tuple[float, int]:
    """Seconds for worker ``name`` to start (healthz 200, then the catalogue listed), and its size."""
    started = time.perf_counter()
    cluster.start_worker(name)
    listed = anyio.run(_listed, cluster.worker_url(name))
    elapsed = time.perf_counter() - started
    cluster.stop_worker(name)
    return elapsed, listed


def main() -> int:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--changes", type=int, default=50)
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--catalogue", type=int, default=5000)
    args = parser.parse_args()
    if missing_tools():
        sys.stderr.write(f"needs {' and '.join(missing_tools())}\n")
        return 1
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="mcp-core-figures-") as folder:
        root = Path(folder)
        catalogue = root / "catalogue.json"
        _catalogue(catalogue, 20)
        for workers in (1, 2, 4):
            cluster = Cluster(
                root / f"rps{workers}", workers, env={"CATALOGUE_FILE": str(catalogue)}
            )
            cluster.root.mkdir()
            try:
                cluster.start()
                if workers == 2:  # noqa: PLR2004 -- the propagation figure uses two workers
                    seconds = anyio.run(propagation, cluster, args.changes)
                    rows.append(
                        (
                            f"change reaches every worker (2 workers, {len(seconds)} changes)",
                            (
                                f"median {statistics.median(seconds) * 1000:.1f} ms, "
                                f"max {max(seconds) * 1000:.1f} ms"
                            ),
                        )
                    )
                rate = anyio.run(throughput, cluster.url, args.requests, args.clients)
                rows.append(
                    (f"tools/call through HAProxy, {workers} worker(s)", f"{rate:.0f} req/s")
                )
            finally:
                cluster.stop()
        big = root / "big.json"
        _catalogue(big, args.catalogue)
        cluster = Cluster(root / "join", 1, env={"CATALOGUE_FILE": str(big)})
        cluster.root.mkdir()
        try:
            cluster.start()  # w1 reads the file and caches the catalogue in Redis
            warm, warm_listed = joining(cluster, "w2")
            big.rename(big.with_suffix(".away"))  # a warm join never reads it
            warm_no_file, _ = joining(cluster, "w3")
            big.with_suffix(".away").rename(big)
            cluster.stop_redis()
            _wipe(cluster.root / "appendonlydir")  # Redis comes back empty: a cold join
            cluster.start_redis()
            cold, cold_listed = joining(cluster, "w4")
        finally:
            cluster.stop()
        rows.append(
            (
                f"joining worker, {args.catalogue}-tool catalogue, warm (Redis)",
                f"{warm:.2f} s ({warm_listed} tools; {warm_no_file:.2f} s with the file gone)",
            )
        )
        rows.append(
            (
                f"joining worker, {args.catalogue}-tool catalogue, cold (file)",
                f"{cold:.2f} s ({cold_listed} tools)",
            )
        )
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        sys.stdout.write(f"{label:<{width}}  {value}\n")
    return 0


def _wipe(folder: Path) -> None:
    for path in folder.glob("*"):
        path.unlink()


if __name__ == "__main__":
    raise SystemExit(main())
