"""What the raw client measures on a server process, over either transport.

Times are seconds; memory is MiB. A figure repeated inside one process enters as the median of
its repetitions; the orchestrator then takes the median over processes.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

import aiohttp

from bench import _catalogue
from bench._raw import PROTOCOL_VERSION, Connection, HttpConnection, Server, http_client

__all__ = ["Budget", "LoadPlan", "first_call", "handshake", "load", "serve_figures"]

_ARGUMENT: Final = 7
# A cursor is opaque text without quotes or escapes in every library here.
_NEXT_CURSOR: Final = re.compile(rb'"nextCursor":"([^"\\]+)"')
_MIN_REPEATS: Final = 2
_PERCENT: Final = 100

INITIALIZE: Final[dict[str, Any]] = {
    "protocolVersion": PROTOCOL_VERSION,
    "capabilities": {},
    "clientInfo": {"name": "mcp-core-bench", "version": "0"},
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    """Repetitions per figure, and the seconds after which a figure stops repeating.

    A figure is always measured at least twice, so a slow peer costs seconds, not minutes,
    while fast figures get their full count.
    """

    repeats: int = 7
    seconds: float = 3.0
    calls: int = 200
    pings: int = 100


async def _repeat(
    measure: Callable[[], Awaitable[float]], count: int, seconds: float
) -> list[float]:
    samples: list[float] = []
    start = time.perf_counter()
    while len(samples) < count and (
        len(samples) < _MIN_REPEATS or time.perf_counter() - start < seconds
    ):
        samples.append(await measure())
    return samples


def _call_params(name: str) -> dict[str, Any]:
    return {"name": name, "arguments": {"x": _ARGUMENT}}


def _check_call(data: bytes, name: str) -> None:
    if b'"isError":true' in data or f'"result":{_ARGUMENT}'.encode() not in data:
        raise RuntimeError(f"tools/call {name} did not answer {_ARGUMENT}: {data[:300]!r}")


async def handshake(connection: Connection) -> float:
    """``initialize`` then ``notifications/initialized``; returns the seconds to the answer."""
    seconds, _ = await connection.request("initialize", INITIALIZE)
    await connection.notify("notifications/initialized")
    return seconds


async def walk(connection: Connection, size: int) -> tuple[float, int, int]:
    """Every page of ``tools/list``, following cursors: seconds, pages and bytes."""
    start = time.perf_counter()
    pages = seen = total = 0
    cursor: str | None = None
    while True:
        _, data = await connection.request(
            "tools/list", {} if cursor is None else {"cursor": cursor}
        )
        pages += 1
        total += len(data)
        seen += data.count(b'"inputSchema"')
        found = _NEXT_CURSOR.search(data)
        if found is None:
            break
        cursor = found.group(1).decode()
    seconds = time.perf_counter() - start
    if seen != size:
        raise RuntimeError(f"walking tools/list saw {seen} tools, expected {size}")
    return seconds, pages, total


async def first_call(server: Server, connection: Connection, *, size: int) -> dict[str, float]:
    """Spawn → ``initialize`` answered, and spawn → the first ``tools/call`` answered."""
    figures: dict[str, float] = {}
    await handshake(connection)
    figures["spawn_ready_s"] = time.perf_counter() - server.spawned
    name = _catalogue.call_targets(size)[0]
    _, data = await connection.request("tools/call", _call_params(name))
    figures["spawn_first_call_s"] = time.perf_counter() - server.spawned
    cpu = server.cpu_s()
    if cpu is not None:
        figures["first_call_cpu_s"] = cpu
    _check_call(data, name)
    return figures


async def serve_figures(
    server: Server, connection: Connection, *, size: int, budget: Budget
) -> dict[str, float]:
    """The black-box figures of one server process, from its spawn to its peak RSS."""
    figures = await first_call(server, connection, size=size)
    targets = _catalogue.call_targets(size)

    seconds, pages, total = await walk(connection, size)
    figures.update(walk_first_s=seconds, walk_pages=float(pages), walk_bytes=float(total))

    async def steady() -> float:
        return (await walk(connection, size))[0]

    figures["walk_s"] = statistics.median(await _repeat(steady, budget.repeats, budget.seconds))

    checked: set[str] = set()
    names = itertools.cycle(targets)

    async def call() -> float:
        name = next(names)
        seconds, data = await connection.request("tools/call", _call_params(name))
        if name not in checked:
            _check_call(data, name)
            checked.add(name)
        return seconds

    calls = await _repeat(call, max(budget.calls, 2 * len(targets)), budget.seconds)
    figures.update(call_s=statistics.median(calls), calls=float(len(calls)))

    async def ping() -> float:
        return (await connection.request("ping"))[0]

    figures["ping_s"] = statistics.median(await _repeat(ping, budget.pings, budget.seconds / 3))
    rss = server.rss_mib()
    if rss is not None:
        figures["rss_mib"] = rss
    return figures


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadPlan:
    """Concurrent sessions, each: initialize, initialized, a full ``tools/list`` walk, calls."""

    size: int
    sessions: int = 50
    calls: int = 20
    rounds: int = 3
    """Bursts of ``sessions`` per process; each figure is the median over bursts."""


async def _session(connection: HttpConnection, plan: LoadPlan, latencies: list[float]) -> None:
    targets = _catalogue.call_targets(plan.size)
    start = time.perf_counter()
    await connection.request("initialize", INITIALIZE)
    latencies.append(time.perf_counter() - start)
    start = time.perf_counter()
    await connection.notify("notifications/initialized")
    latencies.append(time.perf_counter() - start)
    cursor: str | None = None
    while True:
        seconds, data = await connection.request(
            "tools/list", {} if cursor is None else {"cursor": cursor}
        )
        latencies.append(seconds)
        found = _NEXT_CURSOR.search(data)
        if found is None:
            break
        cursor = found.group(1).decode()
    for k in range(plan.calls):
        name = targets[k % len(targets)]
        seconds, data = await connection.request("tools/call", _call_params(name))
        _check_call(data, name)
        latencies.append(seconds)


def _percentile(values: list[float], percent: int) -> float:
    return statistics.quantiles(values, n=_PERCENT, method="inclusive")[percent - 1]


async def _burst(client: aiohttp.ClientSession, url: str, plan: LoadPlan) -> dict[str, float]:
    latencies: list[float] = []
    start = time.perf_counter()
    outcomes = await asyncio.gather(
        *(_session(HttpConnection(client, url), plan, latencies) for _ in range(plan.sessions)),
        return_exceptions=True,
    )
    wall = time.perf_counter() - start
    failures = [o for o in outcomes if isinstance(o, BaseException)]
    if failures:
        raise RuntimeError(
            f"{len(failures)} of {plan.sessions} sessions failed; the first: {failures[0]!r}"
        )
    return {
        "load_rps": len(latencies) / wall,
        "load_p50_s": _percentile(latencies, 50),
        "load_p99_s": _percentile(latencies, 99),
        "load_requests": float(len(latencies)),
        "load_wall_s": wall,
    }


async def load(url: str, plan: LoadPlan) -> dict[str, float]:
    """One warm-up session, then bursts of ``plan.sessions`` at once: requests/s, p50, p99."""
    async with http_client() as client:
        await _session(HttpConnection(client, url), plan, [])  # first list built, paths warm
        bursts = [await _burst(client, url, plan) for _ in range(plan.rounds)]
    return {key: statistics.median(b[key] for b in bursts) for key in bursts[0]}
