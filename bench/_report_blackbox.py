"""The black-box report: each library's server in its own process, timed by a raw client.

Tables per transport (every figure at every N, with the peers' ratios and the distance to the
floor), the HTTP load test, import costs, the warm start, the black-box targets, and the
scaling plot.
"""

# ruff: noqa: RUF001 -- the report is typeset: multiplication signs and en dashes

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bench._format import count, mib, minus, ratio, seconds, size_label, table, verdict
from bench._results import FLOOR, LIB_TITLES, PEERS, SDK, Meta, Mode, Results

__all__ = ["METHOD", "plot", "render"]

CORE: Final = "mcp-core"
MCPSERVER: Final = "mcpserver"
COLUMNS: Final = (*LIB_TITLES, FLOOR)
TITLES: Final = {**LIB_TITLES, FLOOR: "floor"}


def _kib(value: float | None) -> str:
    return "–" if value is None else f"{value / 1024:,.0f} KiB"


@dataclass(frozen=True, slots=True)
class _Row:
    title: str
    figure: str
    fmt: Callable[[float | None], str]
    compare: bool = True  # False: a fact about each server, no ratio


_ROWS: Final = (
    _Row("spawn → `initialize` answered", "spawn_ready_s", seconds),
    _Row("spawn → first `tools/call` answered", "spawn_first_call_s", seconds),
    _Row("first full walk of `tools/list` after start", "walk_first_s", seconds),
    _Row("steady full walk of `tools/list`", "walk_s", seconds),
    _Row("pages in a walk", "walk_pages", count, compare=False),
    _Row("bytes in a walk", "walk_bytes", _kib, compare=False),
    _Row("`tools/call` median", "call_s", seconds),
    _Row("`ping` median (the SDK's own floor)", "ping_s", seconds),
    _Row("peak RSS of the server process", "rss_mib", mib),
)


def _columns(results: Results, mode: Mode) -> list[str]:
    present = {o.job.lib for o in results.outcomes if o.error is None and o.job.mode == mode}
    return [lib for lib in COLUMNS if lib in present]


def _transport(results: Results, meta: Meta, mode: Mode) -> list[str]:
    """One transport's table: every figure at every N, ratios to mcp-core, distance to the floor."""
    libs = _columns(results, mode)
    if CORE not in libs:
        return ["(not measured)"]
    peers = [p for p in PEERS if p in libs]
    header = ["figure", "N", *(TITLES[lib] for lib in libs)]
    header += [f"{TITLES[p]} ÷ mcp-core" for p in peers]
    if FLOOR in libs:
        header.append("mcp-core ÷ floor")
    header.append("runs")
    rows: list[list[str]] = []
    for row in _ROWS:
        for size in meta.sizes:
            values = {lib: results.median(mode, lib, size, row.figure) for lib in libs}
            if values[CORE] is None and all(v is None for v in values.values()):
                continue
            ours = values[CORE]
            cells = [row.title, size_label(size), *(row.fmt(values[lib]) for lib in libs)]
            cells += [ratio(values[p], ours) if row.compare else "" for p in peers]
            if FLOOR in libs:
                cells.append(ratio(ours, values[FLOOR]) if row.compare else "")
            cells.append("/".join(str(results.runs(mode, lib, size)) for lib in libs))
            rows.append(cells)
    return table(header, rows)


def _load(results: Results, meta: Meta) -> list[str]:
    size = meta.load_size
    if size is None:
        return ["(not measured)"]
    entries: list[tuple[str, Mode, str]] = [
        (TITLES[lib], "load", lib) for lib in _columns(results, "load") if lib != FLOOR
    ]
    if results.runs("load-json", CORE, size):
        entries.insert(1, ("mcp-core, `json_response=True`", "load-json", CORE))
    if results.runs("load", FLOOR, size):
        entries.append(("floor: bare ASGI JSON endpoint", "load", FLOOR))
    if not entries:
        return ["(not measured)"]
    base_rps = results.median("load", MCPSERVER, size, "load_rps")
    base_p99 = results.median("load", MCPSERVER, size, "load_p99_s")
    header = [
        "server",
        "requests/s",
        "p50",
        "p99",
        "requests/s ÷ MCPServer's",
        "MCPServer's p99 ÷ this p99",
        "peak RSS",
        "runs",
    ]
    rows: list[list[str]] = []
    for title, mode, lib in entries:

        def get(figure: str, mode: Mode = mode, lib: str = lib) -> float | None:
            return results.median(mode, lib, size, figure)

        rps = get("load_rps")
        rows.append(
            [
                title,
                count(rps),
                seconds(get("load_p50_s")),
                seconds(get("load_p99_s")),
                ratio(rps, base_rps),
                ratio(base_p99, get("load_p99_s")),
                mib(get("rss_mib")),
                str(results.runs(mode, lib, size)),
            ]
        )
    requests = 3 + meta.load_calls
    intro = (
        f"N = {size_label(size)} tools, one uvicorn worker; {meta.load_sessions} concurrent "
        f"sessions, each `initialize`, `notifications/initialized`, a full `tools/list` walk and "
        f"{meta.load_calls} `tools/call` ({requests} requests), after one warm-up session; "
        f"{meta.load_rounds} such bursts per server process, each figure the median over bursts, "
        "then over processes. Latency is per request, as the client saw it."
    )
    return [intro, "", *table(header, rows)]


def _imports(results: Results) -> list[str]:
    keys = [
        (CORE, "`import mcp_core.app`"),
        (MCPSERVER, "`import mcp.server.mcpserver`"),
        ("fastmcp", "`import fastmcp`"),
        (SDK, "`import mcp` (the SDK's root)"),
        (FLOOR, "`import json` (a bare interpreter)"),
    ]
    rows = [
        [
            title,
            seconds(results.median("import", key, 0, "import_s")),
            str(results.runs("import", key, 0)),
        ]
        for key, title in keys
        if results.runs("import", key, 0)
    ]
    if not rows:
        return ["(not measured)"]
    ours = results.median("import", CORE, 0, "import_s")
    lines = table(["a fresh interpreter, then", "wall clock to exit", "runs"], rows)
    beyond_server = minus(ours, results.median("import", MCPSERVER, 0, "import_s"))
    beyond_root = minus(ours, results.median("import", SDK, 0, "import_s"))
    lines += [
        "",
        (
            f"mcp-core's imports beyond the SDK's: {seconds(beyond_server)} more than "
            f"`MCPServer`'s, {seconds(beyond_root)} more than the SDK's root."
        ),
    ]
    return lines


def _warm(results: Results, meta: Meta) -> list[str]:
    size = meta.dump_size
    if size is None or not results.runs("dump-start", CORE, size):
        return ["(not measured)"]
    warm = results.median("dump-start", CORE, size, "spawn_first_call_s")
    rows = [
        [
            f"mcp-core serving a dump of {size_label(size)} tools: spawn → first `tools/call`",
            seconds(warm),
            "",
        ],
        [
            "… of which spawn → `initialize` answered",
            seconds(results.median("dump-start", CORE, size, "spawn_ready_s")),
            "",
        ],
    ]
    for lib in (CORE, MCPSERVER):
        small = results.median("stdio", lib, 10, "spawn_first_call_s")
        if small is not None:
            rows.append(
                [
                    f"{TITLES[lib]} with 10 declared tools: spawn → first `tools/call`",
                    seconds(small),
                    ratio(warm, small),
                ]
            )
    rows.append(
        ["peak RSS (warm start)", mib(results.median("dump-start", CORE, size, "rss_mib")), ""]
    )
    rows.append(
        [
            "`mcp-core dump` of the catalogue (a build step, not a start-up cost)",
            seconds(meta.dump_s),
            "",
        ]
    )
    runs = results.runs("dump-start", CORE, size)
    return [
        f"Over stdio, median of {runs} fresh processes.",
        "",
        *table(["figure", "value", "warm ÷ this"], rows),
    ]


# -- targets ----------------------------------------------------------------------------------

_SMALL: Final = 10
_K1: Final = 1000
_K10: Final = 10_000
_K100: Final = 100_000
_FIGURE_NAMES: Final = {
    "spawn_first_call_s": "spawn → first `tools/call`",
    "walk_first_s": "first full walk after start",
    "walk_s": "steady full walk",
}

_Rows = list[list[str]]


@dataclass(frozen=True, slots=True)
class _Look:
    """Medians of one run's black-box outcomes, by library."""

    results: Results
    meta: Meta

    def of(self, lib: str, figure: str, size: int, mode: Mode = "stdio") -> float | None:
        return self.results.median(mode, lib, size, figure)

    def ours(self, figure: str, size: int, mode: Mode = "stdio") -> float | None:
        return self.of(CORE, figure, size, mode)

    def theirs(self, figure: str, size: int, mode: Mode = "stdio") -> float | None:
        return self.of(MCPSERVER, figure, size, mode)

    def sizes(self, *wanted: int) -> list[int]:
        return [size for size in (wanted or self.meta.sizes) if size in self.meta.sizes]


def _row(target: str, measured: str, ok: bool | None) -> list[str]:
    return [target, measured, verdict(ok)]


def _faster(look: _Look, factor: float, figure: str, size: int) -> list[str]:
    a, b = look.ours(figure, size), look.theirs(figure, size)
    return _row(
        f"{_FIGURE_NAMES[figure]}, {size_label(size)}: ≥ {factor:g}× faster than `MCPServer`",
        f"{seconds(a)} vs {seconds(b)}: {ratio(b, a)}",
        None if a is None or b is None else b / a >= factor,
    )


def _start_targets(look: _Look) -> _Rows:
    rows = [_faster(look, 20, "spawn_first_call_s", size) for size in look.sizes(_K10)]
    for size in look.sizes(_K100):
        big = look.ours("spawn_first_call_s", size)
        rows.append(
            _row(
                f"spawn → first `tools/call`, {size_label(size)}: ≤ 2 s",
                seconds(big),
                None if big is None else big <= 2,  # noqa: PLR2004 -- the target
            )
        )
    rows += [_faster(look, 1, "spawn_first_call_s", size) for size in look.sizes(_SMALL)]
    ours, sdk = look.of(CORE, "import_s", 0, "import"), look.of(MCPSERVER, "import_s", 0, "import")
    extra = minus(ours, sdk)
    rows.append(
        _row(
            "imports beyond the SDK's (`mcp_core.app` − `mcp.server.mcpserver`): ≤ 150 ms",
            f"{seconds(ours)} − {seconds(sdk)} = {seconds(extra)}",
            None if extra is None else extra <= 0.150,  # noqa: PLR2004 -- the target
        )
    )
    dumped = look.meta.dump_size
    if dumped:
        warm = look.ours("spawn_first_call_s", dumped, "dump-start")
        small = look.ours("spawn_first_call_s", _SMALL)
        rows.append(
            _row(
                f"warm start from a dumped {size_label(dumped)} catalogue: "
                "≤ 1.2× spawn → first call of a 10-tool app",
                f"{seconds(warm)} vs {seconds(small)}: {ratio(warm, small)}",
                None if warm is None or small is None else warm <= 1.2 * small,
            )
        )
    return rows


def _walk_targets(look: _Look) -> _Rows:
    rows: _Rows = []
    for size in look.sizes():
        first, steady = look.ours("walk_first_s", size), look.ours("walk_s", size)
        rows.append(
            _row(
                f"first full walk ≤ 2× a steady walk, {size_label(size)}",
                f"{seconds(first)} vs {seconds(steady)}: {ratio(first, steady)}",
                None if first is None or steady is None else first <= 2 * steady,
            )
        )
    rows += [_faster(look, 5, "walk_first_s", size) for size in look.sizes(_K1, _K10)]
    for size in look.sizes(_K1, _K10):
        row = _faster(look, 20, "walk_s", size)
        ours, floor = look.ours("walk_s", size), look.of(FLOOR, "walk_s", size)
        row[1] += f"; the floor (writing the bytes) {seconds(floor)}: we take {ratio(ours, floor)}"
        rows.append(row)
    return rows


def _call_targets(look: _Look) -> _Rows:
    rows: _Rows = []
    for size in look.sizes():
        a, b = look.ours("call_s", size), look.theirs("call_s", size)
        if b is not None:
            rows.append(
                _row(
                    f"`tools/call` median, {size_label(size)}: ≤ 0.7× `MCPServer`'s",
                    f"{seconds(a)} vs {seconds(b)}: {ratio(a, b)} of it",
                    None if a is None else a <= 0.7 * b,
                )
            )
    calls = {size: look.ours("call_s", size) for size in look.sizes()}
    known = [v for v in calls.values() if v is not None]
    sizes = list(calls)
    if len(known) > 1:
        low = calls[sizes[0]]
        rows.append(
            _row(
                f"`tools/call` flat from {size_label(sizes[0])} to {size_label(sizes[-1])} tools "
                "(each ≤ 1.1× the smallest app's)",
                ", ".join(f"{size_label(s)} {seconds(v)}" for s, v in calls.items()),
                None if low is None else all(v <= 1.1 * low for v in known),
            )
        )
    return rows


def _other_targets(look: _Look) -> _Rows:
    rows: _Rows = []
    for size, limit in ((_K100, 300), (_K10, 150)):
        if size in look.meta.sizes:
            rss = look.ours("rss_mib", size)
            rows.append(
                _row(
                    f"peak RSS, {size_label(size)}: ≤ {limit} MiB",
                    mib(rss),
                    None if rss is None else rss <= limit,
                )
            )
    loaded = look.meta.load_size
    if loaded is not None:
        a, b = look.ours("load_rps", loaded, "load"), look.theirs("load_rps", loaded, "load")
        rows.append(
            _row(
                f"HTTP, {look.meta.load_sessions} sessions, N = {size_label(loaded)}: "
                "≥ 3× `MCPServer`'s requests/s",
                f"{count(a)} vs {count(b)}: {ratio(a, b)}",
                None if a is None or b is None else a >= 3 * b,
            )
        )
        a, b = look.ours("load_p99_s", loaded, "load"), look.theirs("load_p99_s", loaded, "load")
        rows.append(
            _row(
                "same: p99 under a third of `MCPServer`'s",
                f"{seconds(a)} vs {seconds(b)}: {ratio(a, b)} of it",
                None if a is None or b is None else 3 * a < b,
            )
        )
    return rows


def _targets(results: Results, meta: Meta) -> list[str]:
    look = _Look(results, meta)
    rows = _start_targets(look) + _walk_targets(look) + _call_targets(look) + _other_targets(look)
    return table(["target (stdio unless noted)", "measured (median)", "verdict"], rows, "lll")


# -- the document -----------------------------------------------------------------------------

METHOD: Final = """\
- **Processes.** Each cell is a fresh server process (`bench/serve.py`: the library imported,
  its server object created, N tools declared with its own decorator, served with its own entry
  point) spawned and driven by a raw client in another process (`bench/probe.py`), itself
  spawned by the orchestrator (`bench/run.py`). Runs are interleaved: run 1 of every cell, then
  run 2, ... so noise on the shared machine spreads over all libraries alike. Each cell is the
  median over its runs; a figure repeated inside a process enters as that process's median;
  ratios are ratios of those medians.
- **stdio.** Requests are JSON-RPC lines written to the server's stdin, answers read from its
  stdout: no client library, no validation. `MCPServer.run()`, `FastMCP.run()` and mcp-core's
  `App.run()` serve: the peers with the SDK's stdio transport, mcp-core with its own (the SDK's
  server over the same pipes served from the event loop; ADR 0052).
- **Streamable HTTP.** Each library's own ASGI app (`App.asgi()`, `MCPServer.streamable_http_app()`,
  `FastMCP.run_http_async`) under uvicorn, one worker, on 127.0.0.1: the client binds the
  listening socket and hands it to the server process, so timing starts at spawn as over stdio.
  Requests are POSTs by aiohttp; an answer is the JSON body, or the `data` of the server-sent
  event carrying it. Each library with its defaults (mcp-core answers a handshake-era request
  with JSON unless it needs a stream, ADR 0053, and keeps an in-memory event store for resumable
  streams; the others answer with SSE streams and keep no store).
- **The floor** (`bench/_floor.py`) is no library: a bare process answering the same JSON-RPC
  from bytes built at start, over stdio a loop on the pipe, over HTTP a raw ASGI callable under
  the same uvicorn. Its catalogue is mcp-core's wire form of the same tools, paginated as
  mcp-core paginates (500 per page). `mcp-core ÷ floor` is how far mcp-core is from what the
  transport itself costs. The SDK's own floor is a `ping` round trip through each library.
- **Figures.** Spawn → `initialize` answered, then `notifications/initialized` and the first
  `tools/call`; spawn → that call answered. Then the first full walk of `tools/list` following
  `nextCursor` (mcp-core pages by 500; the peers answer one page), steady walks (up to 7, within
  3 s, at least 2), `tools/call` (up to 200, round-robin over 20 tools spread over the catalogue,
  `{"x": 7}` answered with 7, within 3 s) and `ping` medians, and the server's peak RSS
  (`VmHWM` from `/proc`). Time is from writing the request to reading its answer's last byte.
- **Catalogue.** N generated `def tool_NNNNNN(x: int) -> int` with a docstring, declared with
  each library's own decorator in modules of 1000, byte-compiled beforehand, and so is
  mcp-core's own package (the peers' wheels were byte-compiled when installed): no measured
  import compiles source. Homogeneous, which favours any per-signature cache (mcp-core has one).
- **Warm start.** The same catalogue marked with mcp-core's standalone `@tool`, dumped once with
  `mcp-core dump`; each run spawns an `App` serving it through `CollectionFileSource` and times
  spawn → first `tools/call` (which imports the one module that holds the tool).
- **Imports.** A fresh interpreter running `python -c "import X"`, wall clock to its exit.
- **Budgets.** The peers take tens of seconds to register 10k tools (fastmcp's registration is
  superlinear), so their 10k cells get fewer runs (see the runs column) and they are not run at
  100k; every process has a time limit, and a failed run is listed, never dropped silently.
"""


def render(results: Results, meta: Meta) -> list[str]:
    """The black-box sections (markdown lines); nothing if no probe ran."""
    if not any(
        o.job.mode in ("stdio", "http", "load", "load-json", "dump-start", "import")
        for o in results.outcomes
    ):
        return []
    lines = [
        "### Targets (black-box)",
        "",
        *_targets(results, meta),
        "",
        "### Black-box over stdio",
        "",
        *_transport(results, meta, "stdio"),
        "",
        (
            "Ratios: a peer's figure ÷ mcp-core's (above 1×, mcp-core is faster or smaller); "
            "mcp-core's ÷ the floor's (how many times the bare transport's cost mcp-core takes). "
            "The runs column counts successful runs per column."
        ),
        "",
        "### Black-box over streamable HTTP, one session",
        "",
        *_transport(results, meta, "http"),
        "",
        "### Streamable HTTP under load",
        "",
        *_load(results, meta),
        "",
        "### Imports",
        "",
        *_imports(results),
        "",
        "### Warm start from a dump (mcp-core)",
        "",
        *_warm(results, meta),
        "",
    ]
    if meta.plot_name:
        lines += ["### Scaling", "", f"![black-box scaling over stdio]({meta.plot_name})", ""]
    return lines


# -- the plot ---------------------------------------------------------------------------------

_PANELS: Final = (
    ("spawn → first tools/call", "spawn_first_call_s", "seconds"),
    ("steady full walk of tools/list", "walk_s", "seconds"),
    ("tools/call median", "call_s", "seconds"),
    ("peak RSS of the server", "rss_mib", "MiB"),
)


def plot(results: Results, meta: Meta, path: Path) -> str | None:
    """Draw the stdio figures against N, one line per library and the floor; None, or why not."""
    try:
        matplotlib: Any = importlib.import_module("matplotlib")
    except ImportError:
        return "matplotlib is not installed: no plot"
    matplotlib.use("Agg")
    pyplot: Any = importlib.import_module("matplotlib.pyplot")
    figure, axes = pyplot.subplots(2, 2, figsize=(11, 8.5))
    styles = {CORE: "-", MCPSERVER: "--", "fastmcp": ":", FLOOR: "-."}
    for axis, (title, name, unit) in zip(axes.flat, _PANELS, strict=True):
        for lib in _columns(results, "stdio"):
            points = [(s, results.median("stdio", lib, s, name)) for s in meta.sizes]
            xs: Sequence[int] = [s for s, v in points if v is not None]
            ys = [v for _, v in points if v is not None]
            if xs:
                axis.plot(xs, ys, linestyle=styles[lib], marker="o", label=TITLES[lib])
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_title(title)
        axis.set_xlabel("tools (N)")
        axis.set_ylabel(unit)
        axis.grid(visible=True, which="both", alpha=0.3)
        axis.legend(fontsize=8)
    figure.suptitle(f"Black-box over stdio, medians ({meta.date})")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    pyplot.close(figure)
    return None
