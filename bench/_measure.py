"""The measurements one worker process makes, on one library at one catalogue size.

Times are seconds from :func:`time.perf_counter`; sizes are bytes; memory is MiB. Every figure
that is repeated inside the process is reported as the median of its repetitions; the
orchestrator then takes the median over processes.
"""

from __future__ import annotations

import importlib
import json
import re
import resource
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Final

from bench import _catalogue
from bench._libs import Library, McpCoreExtras
from bench._wire import WireClient, serving

__all__ = ["Budget", "Emit", "cold", "peak_rss_mib", "warm"]

Emit = Callable[[Mapping[str, Any]], None]
"""Sends one JSON event to the orchestrator (it timestamps it on arrival)."""

_ARGUMENT: Final = 7
# A cursor is base64url text and a dot: no quote or escape inside, so bytes suffice to find it.
_NEXT_CURSOR: Final = re.compile(rb'"nextCursor":"([^"\\]+)"')
_MIN_REPEATS: Final = 2


@dataclass(frozen=True, slots=True)
class Budget:
    """How many repetitions a figure gets, and the seconds after which it stops repeating.

    A figure is always measured at least twice (the first, cold time and one repeat), so slow
    peers cost seconds, not minutes, while fast figures get ``repeats`` samples.
    """

    repeats: int = 7
    seconds: float = 5.0
    calls: int = 200
    call_seconds: float = 3.0


@dataclass(slots=True)
class _Samples:
    first: float = 0.0
    rest: list[float] = field(default_factory=list)

    @property
    def steady(self) -> float:
        return statistics.median(self.rest) if self.rest else self.first


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (``ru_maxrss``, KiB on Linux), in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


async def _repeat(measure: Callable[[], Awaitable[float]], budget: Budget) -> _Samples:
    samples = _Samples(first=await measure())
    start = time.perf_counter()
    while len(samples.rest) < budget.repeats - 1 and (
        len(samples.rest) + 1 < _MIN_REPEATS or time.perf_counter() - start < budget.seconds
    ):
        samples.rest.append(await measure())
    return samples


def _result_of(data: bytes) -> dict[str, Any]:
    result = json.loads(data)["result"]
    assert isinstance(result, dict)  # noqa: S101 -- a JSON-RPC response's result is an object
    return result


def _check_call(data: bytes, name: str) -> None:
    result = _result_of(data)
    text = json.dumps(result)
    if result.get("isError") or str(_ARGUMENT) not in text:
        raise RuntimeError(f"tools/call {name} did not echo {_ARGUMENT}: {text[:300]}")


async def _call(client: WireClient, name: str) -> tuple[float, bytes]:
    return await client.timed("tools/call", {"name": name, "arguments": {"x": _ARGUMENT}})


def declare(lib: Library, size: int, cache: Path, module_size: int) -> Any:
    """Create the library's server object and declare ``size`` tools on it; return it."""
    app = lib.new_app()
    holder = ModuleType(_catalogue.HOLDER_MODULE)
    holder.app = app  # type: ignore[attr-defined]  # the generated modules import it
    sys.modules[_catalogue.HOLDER_MODULE] = holder
    if str(cache) not in sys.path:
        sys.path.insert(0, str(cache))
    importlib.import_module(_catalogue.package_name("cat", size, module_size))
    return app


async def cold(
    lib: Library, app: Any, *, size: int, budget: Budget, emit: Emit, started: float
) -> dict[str, float]:
    """Serve ``app``: first call, then lists, page walks, filtered lists and call latency.

    ``started`` is when declaring began: ``cold_start_s`` runs from there to the first answered
    ``tools/call`` (server built, handshake done, first call answered).

    Peak RSS is read twice: ``rss_serving_mib`` after everything the server does, before the
    harness parses any large response (the JSON limit needs the full result as Python objects,
    tens of MiB at 10k tools, which are the harness's, not the server's), and ``rss_peak_mib``
    at the very end.
    """
    figures: dict[str, float] = {}
    targets = _catalogue.call_targets(size)
    extras = lib.extras
    async with lib.lifespan(app), serving(lib.lowlevel(app)) as client:
        await client.initialize()
        _, data = await _call(client, targets[0])
        figures["cold_start_s"] = time.perf_counter() - started
        emit({"event": "first_call"})
        _check_call(data, targets[0])
        figures["rss_after_first_call_mib"] = peak_rss_mib()

        if extras is not None:
            extras.set_page_size(app, None)
        full = await _lists(client, size, budget, figures)
        if extras is not None:
            await _mcp_core_lists(client, extras, app, size=size, budget=budget, figures=figures)
        await _calls(client, targets, budget, figures)
        figures["rss_serving_mib"] = peak_rss_mib()

        await _json_limit(full, budget, figures)
        if extras is not None:
            await _sansio(extras, app, budget, figures)
    figures["rss_peak_mib"] = peak_rss_mib()
    return figures


def _count_tools(data: bytes) -> int:
    """Tools in a ``tools/list`` response, without parsing it (each has one ``inputSchema``)."""
    return data.count(b'"inputSchema"')


async def _lists(client: WireClient, size: int, budget: Budget, figures: dict[str, float]) -> bytes:
    """One full ``tools/list``, first and repeated; returns the last response."""
    last: list[bytes] = []

    async def full_list() -> float:
        seconds, data = await client.timed("tools/list", {})
        last[:] = [data]
        return seconds

    samples = await _repeat(full_list, budget)
    figures["list_first_s"] = samples.first
    figures["list_s"] = samples.steady
    data = last[0]
    if _count_tools(data) != size or b'"nextCursor"' in data:
        raise RuntimeError(f"tools/list returned {_count_tools(data)} tools of {size} in one page")
    figures["list_bytes"] = float(len(data))
    return data


async def _json_limit(data: bytes, budget: Budget, figures: dict[str, float]) -> None:
    """``json.dumps`` of the same ``result`` object: the limit a list cannot beat by much."""
    result = _result_of(data)

    async def dump() -> float:
        start = time.perf_counter()
        json.dumps(result)
        return time.perf_counter() - start

    figures["json_dumps_s"] = (await _repeat(dump, budget)).steady


async def _walk(client: WireClient, size: int) -> tuple[float, int]:
    """Seconds spent by the server on every page of ``tools/list`` (client parsing excluded)."""
    seconds, pages, seen, cursor = 0.0, 0, 0, None
    while True:
        spent, data = await client.timed("tools/list", {} if cursor is None else {"cursor": cursor})
        seconds += spent
        pages += 1
        seen += _count_tools(data)
        found = _NEXT_CURSOR.search(data)
        cursor = found.group(1).decode() if found else None
        if cursor is None:
            break
    if seen != size:
        raise RuntimeError(f"walking tools/list saw {seen} tools of {size}")
    return seconds, pages


async def _mcp_core_lists(
    client: WireClient,
    extras: McpCoreExtras,
    app: Any,
    *,
    size: int,
    budget: Budget,
    figures: dict[str, float],
) -> None:
    # Walking every page at the default page size.
    extras.set_page_size(app, 500)
    pages = [0]

    async def walk() -> float:
        seconds, pages[0] = await _walk(client, size)
        return seconds

    samples = await _repeat(walk, budget)
    figures["walk_first_s"] = samples.first
    figures["walk_s"] = samples.steady
    figures["walk_pages"] = float(pages[0])
    extras.set_page_size(app, None)

    # A per-session visibility rule hiding every tenth tool (requires_scopes), one full list.
    hidden = _catalogue.hidden(size)
    extras.set_hidden(app, hidden)
    counted = [0]

    async def filtered() -> float:
        seconds, data = await client.timed("tools/list", {})
        counted[0] = _count_tools(data)
        return seconds

    samples = await _repeat(filtered, budget)
    if counted[0] != size - len(hidden):
        raise RuntimeError(
            f"filtered tools/list returned {counted[0]} tools, expected {size - len(hidden)}"
        )
    figures["filtered_first_s"] = samples.first
    figures["filtered_s"] = samples.steady
    extras.set_hidden(app, None)


async def _sansio(
    extras: McpCoreExtras, app: Any, budget: Budget, figures: dict[str, float]
) -> None:
    """The sans-IO request handlers alone, and with a plain ``json.dumps`` of their result."""

    async def sansio() -> float:
        start = time.perf_counter()
        await extras.sansio_list(app)
        return time.perf_counter() - start

    async def sansio_json() -> float:
        start = time.perf_counter()
        json.dumps(await extras.sansio_list(app))
        return time.perf_counter() - start

    figures["sansio_list_s"] = (await _repeat(sansio, budget)).steady
    figures["sansio_list_json_s"] = (await _repeat(sansio_json, budget)).steady


async def _calls(
    client: WireClient, targets: list[str], budget: Budget, figures: dict[str, float]
) -> None:
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < budget.calls and (
        len(times) < len(targets) * 2 or time.perf_counter() - start < budget.call_seconds
    ):
        name = targets[len(times) % len(targets)]
        seconds, data = await _call(client, name)
        if len(times) < len(targets):
            _check_call(data, name)
        times.append(seconds)
    figures["call_s"] = statistics.median(times)
    figures["calls"] = float(len(times))


async def warm(lib: Library, dump: Path, *, size: int, emit: Emit) -> dict[str, float]:
    """Serve a dumped collection (``CollectionFileSource``): handshake, then the first call."""
    extras = lib.extras
    if extras is None:
        raise ValueError("the warm start is mcp-core's: serving a dumped collection")
    from mcp_core.elements import ElementKind  # noqa: PLC0415 -- mcp-core only, and timed as startup
    from mcp_core.sources import CollectionFileSource  # noqa: PLC0415

    figures: dict[str, float] = {}
    start = time.perf_counter()
    app = lib.new_app()
    app.add_source(CollectionFileSource(dump, kinds=ElementKind.TOOL))
    name = _catalogue.call_targets(size)[0]
    async with serving(lib.lowlevel(app)) as client:
        await client.initialize()
        figures["warm_handshake_s"] = time.perf_counter() - start
        _, data = await _call(client, name)
        figures["warm_serve_s"] = time.perf_counter() - start
        emit({"event": "first_call"})
        _check_call(data, name)
        # How long the collection takes to load, measured apart on a fresh source.
        source = CollectionFileSource(dump, kinds=ElementKind.TOOL)
        load_start = time.perf_counter()
        collection = await source.provide()
        figures["warm_load_collection_s"] = time.perf_counter() - load_start
        if len(collection) != size:
            raise RuntimeError(f"the dump holds {len(collection)} tools, expected {size}")
    figures["rss_peak_mib"] = peak_rss_mib()
    return figures
