"""Figures of a deployment: change propagation, throughput through HAProxy, a joining worker's start.

    .venv/bin/python scripts/deployment_figures.py [--changes 100] [--requests 2000] [--clients 8]
        [--catalogue 5000] [--modules 100] [--functions 20] [--joins 5]

Measures, on this machine, with the example deployment (``examples/deployment``: real Redis,
``mcp-core run`` workers, HAProxy, all on 127.0.0.1):

1. the time for a change to reach every worker: a shared registration made through w1, until a
   client of each other worker sees it listed (median and max over ``--changes`` changes, with 2
   and with 4 workers);
2. requests per second through the balancer with 1, 2 and 4 workers (``tools/call`` of a small
   tool over 2026-07-28, ``--clients`` concurrent clients);
3. a joining worker's start (process start to ``/healthz`` 200, then the catalogue listed;
   median over ``--joins`` workers),
   warm (the catalogue cached in the shared Redis by the workers before it; once more with the
   inner source's input moved away, so it cannot have been read) and cold (Redis empty), for
   two inner sources: a ``--catalogue``-tool collection file, and a ``DiscoverySource`` over a
   generated package of ``--modules`` modules of ``--functions`` functions (a warm worker
   imports none of them).

Prints one table, each row with the 1-minute load average after it was measured (the figures
depend on what else the machine runs); asserts nothing (tests assert behaviour, this measures).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
from mcp import Client
from redis import Redis

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
    async with AsyncExitStack() as stack:
        writer = await stack.enter_async_context(Client(cluster.worker_url("w1")))
        clients = [
            await stack.enter_async_context(Client(cluster.worker_url(name))) for name in others
        ]
        for number in range(changes):
            name = f"figure_{number}"
            started = time.perf_counter()
            await writer.call_tool("add_greeting", {"name": name, "template": "{name}"})
            for client in clients:
                while name not in await _names(client):  # noqa: ASYNC110 -- state in another process
                    await anyio.sleep(0.001)
            seconds.append(time.perf_counter() - started)
            await writer.call_tool("remove_greeting", {"name": name})
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


def joining(
    cluster: Cluster, name: str, times: int, *, empty: bool = False
) -> tuple[float, float, int]:
    """Median seconds for a joining worker to answer ``/healthz`` 200 and to list its catalogue.

    Workers ``name``-1 to ``name``-``times`` start one after another (each stopped before the
    next); also returns the catalogue's size. ``empty``: Redis is emptied before each.
    """
    ready, listed, size = [], [], 0
    for number in range(1, times + 1):
        if empty:
            Redis.from_url(cluster.redis_url).flushdb()
        worker = f"{name}-{number}"
        started = time.perf_counter()
        ready.append(cluster.start_worker(worker))
        size = anyio.run(_listed, cluster.worker_url(worker))
        listed.append(time.perf_counter() - started)
        cluster.stop_worker(worker)
    return statistics.median(ready), statistics.median(listed), size


def _machine() -> str:
    """What the figures were taken on."""
    model = "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} cores ({model}), Python {platform.python_version()}"


def _load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def _propagation_row(cluster: Cluster, changes: int) -> tuple[str, str]:
    seconds = anyio.run(propagation, cluster, changes)
    return (
        f"change reaches every worker ({cluster.workers} workers, {len(seconds)} changes)",
        f"median {statistics.median(seconds) * 1000:.1f} ms, max {max(seconds) * 1000:.1f} ms",
    )


def main() -> int:
    """Measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--changes", type=int, default=100)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--catalogue", type=int, default=5000)
    parser.add_argument("--modules", type=int, default=100)
    parser.add_argument("--functions", type=int, default=20, help="per module")
    parser.add_argument("--joins", type=int, default=5, help="workers joining, per figure")
    args = parser.parse_args()
    if missing_tools():
        sys.stderr.write(f"needs {' and '.join(missing_tools())}\n")
        return 1
    rows: list[tuple[str, str, str]] = []
    sys.stdout.write(f"machine: {_machine()}; {_load()} before\n")
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
                if workers > 1:
                    rows.append((*_propagation_row(cluster, args.changes), _load()))
                rate = anyio.run(throughput, cluster.url, args.requests, args.clients)
                rows.append(
                    (
                        f"tools/call through HAProxy, {workers} worker(s), {args.clients} clients",
                        f"{rate:.0f} req/s",
                        _load(),
                    )
                )
            finally:
                cluster.stop()
        big = root / "big.json"
        _catalogue(big, args.catalogue)
        rows += _joins(
            Cluster(root / "join-file", 1, env={"CATALOGUE_FILE": str(big)}),
            f"{args.catalogue}-tool catalogue file",
            big,
            args.joins,
        )
        package = _package(root / "packages", args.modules, args.functions)
        rows += _joins(
            Cluster(
                root / "join-discovery",
                1,
                env={"PYTHONPATH": str(package.parent)},
                server=_discovery_server(root),
            ),
            f"discovery of {args.modules * args.functions} functions in {args.modules} modules",
            package,
            args.joins,
        )
    width = max(len(label) for label, _, _ in rows)
    value_width = max(len(value) for _, value, _ in rows)
    for label, value, load in rows:
        sys.stdout.write(f"{label:<{width}}  {value:<{value_width}}  {load}\n")
    return 0


def _joins(cluster: Cluster, what: str, inner: Path, times: int) -> list[tuple[str, str, str]]:
    """Rows: a worker joining ``cluster`` warm, warm with ``inner`` gone, and cold.

    ``inner`` is what the catalogue's inner source reads (a file, a package): w1 provides it and
    caches the result in Redis; workers join warm; more join warm with ``inner`` moved away (so
    they cannot have read it); then, w1 stopped, workers join cold, Redis emptied before each.
    ``times`` of each.
    """
    cluster.root.mkdir()
    away = inner.with_name(inner.name + ".away")
    try:
        cluster.start()
        warm = joining(cluster, "warm", times)
        inner.rename(away)
        warm_without = joining(cluster, "away", times)
        away.rename(inner)
        cluster.stop_worker("w1")
        cold = joining(cluster, "cold", times, empty=True)
    finally:
        cluster.stop()
    return [
        (
            f"joining worker, {what}, {label}",
            f"ready {ready:.2f} s, {size} tools listed at {listed:.2f} s",
            _load(),
        )
        for label, (ready, listed, size) in (
            ("warm (Redis)", warm),
            (f"warm, {inner.name} moved away", warm_without),
            ("cold (Redis empty)", cold),
        )
    ]


def _package(folder: Path, modules: int, functions: int) -> Path:
    """A package of ``modules`` modules of ``functions`` ``@tool`` functions each."""
    package = folder / "figures_tools"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""Generated tools."""\n')
    for m in range(modules):
        body = [f'"""Generated tools, module {m}."""', "", "from mcp_core.handlers import tool", ""]
        for n in range(functions):
            body += [
                "",
                "@tool",
                f"def tool_{m}_{n}(name: str, times: int = 1, loud: bool = False) -> str:",
                f'    """Tool {n} of module {m}: greets ``name``.',
                "",
                "    Args:",
                "        name: Who to greet.",
                "        times: How many times.",
                "        loud: Whether to shout.",
                '    """',
                f'    text = f"tool {m}.{n} greets {{name}} " * times',
                "    return text.upper() if loud else text",
                "",
            ]
        (package / f"module_{m:03d}.py").write_text("\n".join(body))
    return package


def _discovery_server(folder: Path) -> Path:
    """A worker whose catalogue is a discovery of ``figures_tools``, cached in the shared Redis."""
    server = folder / "discovery_server.py"
    server.write_text(
        "from mcp_core import App\n"
        "from mcp_core.server import Deployment\n"
        "from mcp_core.sources import CachedSource, DiscoverySource\n"
        "deployment = Deployment.from_environment()\n"
        "assert deployment is not None\n"
        'app = App("figures", deployment=deployment)\n'
        "app.add_source(CachedSource(\n"
        '    DiscoverySource(["figures_tools"]), deployment.store,\n'
        '    key="figures-tools-1", secret=deployment.cache_secret))\n'
    )
    return server


if __name__ == "__main__":
    raise SystemExit(main())
