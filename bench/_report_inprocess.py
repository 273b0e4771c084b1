"""The in-process breakdown: where a server's time goes, each library driven inside one process.

Every library serves through the SDK's low-level ``Server`` driven over in-memory streams by
``bench/_wire.py`` (``bench/worker.py``); the figures split a black-box number into declaring,
importing, the first request's loading and the server's own time per request.
"""

# ruff: noqa: RUF001 -- the report is typeset: multiplication signs and en dashes

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from bench._format import count, mib, minus, ratio, seconds, size_label, table
from bench._results import LIB_TITLES, PEERS, Meta, Results

__all__ = ["METHOD", "render"]

CORE: Final = "mcp-core"


# -- tables -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Row:
    title: str
    figure: str
    fmt: Callable[[float | None], str]
    sizes: str = "all"  # "all" (comparison sizes), "calls" (baseline + sizes), "baseline"
    compare: bool = True  # False: each library's own limit, no ratio between them


_COMPARED: Final = (
    _Row("cold start: declare N tools → first `tools/call` answered", "cold_start_s", seconds),
    _Row(
        "process start → first `tools/call` (interpreter + imports + cold start)",
        "process_first_call_s",
        seconds,
    ),
    _Row("import the library (and the SDK)", "import_s", seconds, "baseline"),
    _Row("`tools/list` server time, one full list (steady)", "list_s", seconds),
    _Row("`tools/list`, first one after start", "list_first_s", seconds),
    _Row(
        "`json.dumps` of the same result (each library's own limit)",
        "json_dumps_s",
        seconds,
        compare=False,
    ),
    _Row("`tools/call` latency (median)", "call_s", seconds, "calls"),
    _Row(
        "peak RSS while serving (before the harness parses a large response)",
        "rss_serving_mib",
        mib,
        "calls",
    ),
    _Row("peak RSS at exit (harness parsing included)", "rss_peak_mib", mib, "calls"),
)


def _compared(results: Results, meta: Meta) -> list[str]:
    libs = results.libs("cold")
    peers = [p for p in PEERS if p in libs]
    header = ["figure", "N", *(LIB_TITLES[lib] for lib in libs)]
    header += [f"{LIB_TITLES[p]} ÷ mcp-core" for p in peers]
    header.append("runs")
    rows: list[list[str]] = []
    for row in _COMPARED:
        if row.sizes == "baseline":
            sizes = [meta.baseline_size]
        elif row.sizes == "calls":
            sizes = [meta.baseline_size, *meta.inprocess_sizes]
        else:
            sizes = list(meta.inprocess_sizes)
        for size in sizes:
            values = {lib: results.median("cold", lib, size, row.figure) for lib in libs}
            if all(v is None for v in values.values()):
                continue
            cells = [row.title, size_label(size), *(row.fmt(values[lib]) for lib in libs)]
            cells += [ratio(values[p], values.get(CORE)) if row.compare else "" for p in peers]
            cells.append("/".join(str(results.runs("cold", lib, size)) for lib in libs))
            rows.append(cells)
    return table(header, rows, "l" + "r" * (len(header) - 1))


def _core_only(results: Results, meta: Meta) -> list[str]:
    header = [
        "N",
        "one full list",
        "walk all pages (pages)",
        "walk ÷ full",
        "filtered list",
        "filtered ÷ full",
        "sans-IO list",
        "sans-IO list + `json.dumps`",
        "`json.dumps` alone",
        "full list ÷ `json.dumps`",
    ]
    rows: list[list[str]] = []
    for size in sorted({*meta.inprocess_sizes, *meta.scale_sizes}):

        def get(figure: str, size: int = size) -> float | None:
            return results.median("cold", CORE, size, figure)

        if get("list_s") is None:
            continue
        rows.append(
            [
                size_label(size),
                seconds(get("list_s")),
                f"{seconds(get('walk_s'))} ({count(get('walk_pages'))})",
                ratio(get("walk_s"), get("list_s")),
                seconds(get("filtered_s")),
                ratio(get("filtered_s"), get("list_s")),
                seconds(get("sansio_list_s")),
                seconds(get("sansio_list_json_s")),
                seconds(get("json_dumps_s")),
                ratio(get("list_s"), get("json_dumps_s")),
            ]
        )
    return table(header, rows)


def _warm(results: Results, meta: Meta) -> list[str]:
    size = meta.warm_size
    if size is None or not results.runs("warm", CORE, size):
        return ["(not measured)"]

    def get(figure: str) -> float | None:
        return results.median("warm", CORE, size, figure)

    rows = [
        [
            "process start → first `tools/call` answered (wall clock, parent side)",
            seconds(get("process_first_call_s")),
        ],
        [
            "… of which interpreter start + imports (mcp-core, SDK, pydantic)",
            seconds(get("import_s")),
        ],
        ["… of which `App` + `CollectionFileSource` + handshake", seconds(get("warm_handshake_s"))],
        [
            "… of which the first call (load the dump, import the handler module, call)",
            seconds(minus(get("warm_serve_s"), get("warm_handshake_s"))),
        ],
        [
            "loading the dumped collection alone (`provide()`, measured apart)",
            seconds(get("warm_load_collection_s")),
        ],
        ["peak RSS", mib(get("rss_peak_mib"))],
        [
            "`mcp-core dump` of the catalogue (build step, once, not a start-up cost)",
            seconds(meta.dump_s),
        ],
    ]
    runs = results.runs("warm", CORE, size)
    return [
        f"N = {size_label(size)}, median of {runs} fresh processes.",
        "",
        *table(["figure", "value"], rows),
    ]


def _single(results: Results, meta: Meta) -> list[str]:
    size = meta.single_module
    if not size or not results.runs("single", CORE, size):
        return []
    header = [
        "mcp-core, N = " + size_label(size),
        f"modules of {meta.module_size} tools",
        "one module",
        "one ÷ split",
    ]
    rows: list[list[str]] = []
    for title, figure in (
        ("declare", "declare_s"),
        ("cold start (declare → first call)", "cold_start_s"),
    ):
        split = results.median("cold", CORE, size, figure)
        one = results.median("single", CORE, size, figure)
        rows.append([title, seconds(split), seconds(one), ratio(one, split)])
    runs = results.runs("single", CORE, size)
    return [
        "#### mcp-core: the whole catalogue in one module",
        "",
        (
            f"The same cold start with every tool in one generated module (median of {runs}). A "
            "ratio well above 1× means each declaration costs time proportional to the size of "
            "the module declaring it, so declaring is quadratic in a module's size."
        ),
        "",
        *table(header, rows),
        "",
    ]


def _scale(results: Results, meta: Meta) -> list[str]:
    header = [
        "N",
        "runs",
        "declare",
        "cold start",
        "first full list",
        "full list",
        "walk all pages (pages)",
        "`tools/call`",
        "peak RSS (serving)",
    ]
    rows: list[list[str]] = []
    for size in sorted({meta.baseline_size, *meta.inprocess_sizes, *meta.scale_sizes}):

        def get(figure: str, size: int = size) -> float | None:
            return results.median("cold", CORE, size, figure)

        if not results.runs("cold", CORE, size):
            continue
        rows.append(
            [
                size_label(size),
                str(results.runs("cold", CORE, size)),
                seconds(get("declare_s")),
                seconds(get("cold_start_s")),
                seconds(get("list_first_s")),
                seconds(get("list_s")),
                f"{seconds(get('walk_s'))} ({count(get('walk_pages'))})",
                seconds(get("call_s")),
                mib(get("rss_serving_mib")),
            ]
        )
    return table(header, rows)


METHOD: Final = """\
- **Processes.** Every figure comes from fresh worker processes (`bench/worker.py`), one per
  library, catalogue size and run, so start-up, RSS and the garbage collector are those of a real
  server process. Runs are interleaved (run 1 of every library and size, then run 2, ...) so that
  noise on the shared machine spreads over all libraries alike. Each cell is the median over the
  runs shown; figures repeated inside a process enter as that process's median.
- **Catalogue.** N generated `def tool_NNNNNN(x: int) -> int` functions with a docstring, declared
  with each library's own decorator (`@app.tool(name=...)`, `@mcp.tool(name=...)`) in a generated
  package of modules of at most `--module-size` tools (1000 by default), byte-compiled beforehand,
  so "declare" is importing modules that execute N decorated definitions, nothing else. The
  catalogue is homogeneous (every tool has the same signature), which any per-signature cache
  (mcp-core has one for simple signatures) turns to its advantage; a heterogeneous catalogue
  costs more to derive.
- **Server time, raw JSON-RPC.** Every library serves through the SDK's low-level `Server`
  (mcp-core's `McpServer.lowlevel`, `MCPServer._lowlevel_server`, fastmcp's `_mcp_server` inside
  its lifespan). The harness feeds it what a stdio client writes (a JSON line parsed by the SDK's
  own message adapter, as `mcp.server.stdio` does) and takes the bytes stdio would write
  (`model_dump_json(by_alias=True, exclude_unset=True)`), over in-memory streams, after the
  `initialize` handshake (protocol 2025-11-25). No client library, no client-side validation.
  The time of a request is line in → bytes out.
- **Cold start** is from creating the server object and declaring N tools to the first answered
  `tools/call` (handshake included); **process start → first call** adds interpreter start and
  imports, timed by the orchestrator from spawning the process to reading the worker's
  "answered" line.
- **`tools/list`** is one request returning all N tools (mcp-core with `page_size=None`; the peers
  do not paginate by default): the first one after start, then the median of the repeats.
  The **limit** is `json.dumps` of the same `result` object. **Walking all pages** is mcp-core at
  its default page size (500), summing the server time of each page (the client's parsing of
  each page to find `nextCursor` is not counted). The **filtered list** hides every tenth tool
  with `requires_scopes` (the session lacks the scope). **Sans-IO** is
  `RequestHandlers.list_tools` alone, without the SDK.
- **`tools/call` latency** is the median over up to 200 calls spread round-robin over 20 tools
  across the catalogue, each call `{"x": 7}` answered with 7.
- **Warm start** (mcp-core): the same catalogue marked with the standalone `@tool` is dumped once
  with `mcp-core dump` (discovery turns handlers into `HandlerRef("package.part_K:tool_N")`);
  each run is a fresh process that builds an `App` with
  `CollectionFileSource(dump, kinds=ElementKind.TOOL)` and answers the first `tools/call`
  (which imports the one module holding that tool), timed from spawning the process.
- **Peak RSS** is `resource.getrusage(RUSAGE_SELF).ru_maxrss`, read after the server has done
  everything (first call, lists, walks, calls) but before the harness parses a full list into
  Python objects for the `json.dumps` limit (which costs the harness tens of MiB at 10k tools);
  the side-by-side table also shows the high-water mark at exit.
- **Budgets.** A repeated figure stops after its repeat count or its time budget, whichever comes
  first, but is always measured at least twice; the peers' 10k registrations take tens of
  seconds, so they get fewer runs (see the runs column).
"""


def render(results: Results, meta: Meta) -> list[str]:
    """The breakdown's sections (markdown lines); nothing if no in-process worker ran."""
    if not any(o.job.mode in ("cold", "warm", "single") for o in results.outcomes):
        return []
    return [
        "### In-process breakdown",
        "",
        (
            "Where the time goes: each library's SDK low-level server driven inside one process "
            "over in-memory streams (no pipe, no socket, no client), "
            f"{meta.inprocess_runs}."
        ),
        "",
        "#### Side by side",
        "",
        *_compared(results, meta),
        "",
        (
            "Ratios are the peer's figure divided by mcp-core's: above 1× mcp-core is faster (or "
            "smaller). The runs column counts successful runs per library, in column order."
        ),
        "",
        "#### mcp-core: pages, visibility, sans-IO",
        "",
        *_core_only(results, meta),
        "",
        "#### mcp-core: warm start from a dump",
        "",
        *_warm(results, meta),
        "",
        "#### mcp-core: scaling",
        "",
        *_scale(results, meta),
        "",
        *_single(results, meta),
    ]
