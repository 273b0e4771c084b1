"""Profile one black-box figure of a benchmark server with py-spy, from outside, as it is measured.

    python bench/profile.py spawn --size 10000               # spawn → first tools/call
    python bench/profile.py walk --size 10000                # steady full walks of tools/list
    python bench/profile.py call --size 10 --transport http  # tools/call round trips
    python bench/profile.py load --size 100 --lib mcpserver  # 50 concurrent HTTP sessions
    python bench/profile.py spawn --dump /tmp/mcp-core-bench/warm_10000_by1000_target.json
    python bench/profile.py memory --size 100000             # what holds the peak RSS
    python bench/profile.py gc --size 10000 --gc off         # start-up with the collector off

The server is ``bench/serve.py`` (mcp-core by default), driven by the same raw client as the
harness (``bench/_raw.py``). ``spawn`` runs it under ``py-spy record`` from its first
instruction to the first answered call; the other figures attach py-spy to the running server
(after the first call and, for all but ``first-walk``, after a warm-up walk), sample while the
figure repeats for ``--seconds``, then detach. Only the thread holding the GIL is sampled
(``--no-gil``: every thread py-spy thinks busy, which on a loaded machine includes threads
parked in a wait), so shares are of the interpreter's CPU time.

It prints the top frames by inclusive and by own time, with their share of all samples, and
keeps py-spy's raw collapsed stacks (``--raw FILE``) for a flame graph. Needs the bench extra
(py-spy) and the right to ptrace the server (root, or ``kernel.yama.ptrace_scope`` 0).

``memory`` and ``gc`` are the exceptions, run in this process with the in-process driver
(``bench/_wire.py``): ``memory`` runs import, declare, first call and a full walk under
``tracemalloc`` and lists the largest allocation sites still alive; ``gc`` times declaring, the
first call and the first full walk with the cyclic garbage collector as ``--gc`` says (on, off,
or frozen after the imports) and reports the collections each phase ran and their time.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import compileall
import gc
import itertools
import re
import shutil
import signal
import sys
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Final

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from bench import _blackbox, _catalogue, _layers, serve  # noqa: E402 -- after the path is set
from bench._raw import (  # noqa: E402
    Connection,
    HttpConnection,
    Server,
    http_client,
    spawn_http,
    spawn_stdio,
)

FIGURES: Final = ("spawn", "first-walk", "walk", "call", "ping", "load", "memory", "gc")
_ATTACH_SECONDS: Final = 1.0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python bench/profile.py",
        description="Profile one black-box figure of a benchmark server with py-spy.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("figure", choices=FIGURES)
    parser.add_argument("--lib", default="mcp-core", choices=("mcp-core", "mcpserver", "fastmcp"))
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "mcp-core-bench"
    )
    parser.add_argument("--module-size", type=int, default=1000)
    parser.add_argument("--json-response", action="store_true", help="HTTP: JSON, not SSE")
    parser.add_argument("--dump", type=Path, help="spawn: mcp-core serving this dumped collection")
    parser.add_argument(
        "--gc", choices=("on", "off", "freeze"), default="on", help="gc: the collector's setting"
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="how long a figure repeats")
    parser.add_argument("--rate", type=int, default=500, help="py-spy samples per second")
    parser.add_argument(
        "--gil",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="count only the thread holding the GIL (Python CPU time; threads blocked in a wait "
        "otherwise show up as busy on a loaded machine)",
    )
    parser.add_argument("--top", type=int, default=25, help="frames listed per table")
    parser.add_argument("--raw", type=Path, help="keep py-spy's collapsed stacks here")
    parser.add_argument(
        "--focus", metavar="TEXT", help="count only samples with a frame containing TEXT"
    )
    parser.add_argument(
        "--from-raw",
        type=Path,
        metavar="FILE",
        help="profile nothing: summarize collapsed stacks kept with --raw",
    )
    return parser


# -- py-spy -----------------------------------------------------------------------------------


def _py_spy() -> str:
    found = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(found).exists():
        raise SystemExit("py-spy is not installed: pip install -e '.[bench]'")
    return found


def _record(args: argparse.Namespace, raw: Path) -> list[str]:
    command = [_py_spy(), "record", "--format", "raw", "--rate", str(args.rate)]
    return [*command, "--output", str(raw), *(["--gil"] if args.gil else [])]


@asynccontextmanager
async def _attached(pid: int, args: argparse.Namespace, raw: Path) -> AsyncIterator[None]:
    """Sample ``pid`` with py-spy while the body runs; py-spy writes ``raw`` when interrupted.

    Anything py-spy says goes to stderr, where it explains an empty profile.
    """
    spy = await asyncio.create_subprocess_exec(
        *_record(args, raw),
        "--pid",
        str(pid),
        stdout=sys.stderr,
        stderr=sys.stderr,
    )
    await asyncio.sleep(_ATTACH_SECONDS)  # py-spy reads the interpreter's layout before sampling
    try:
        yield
    finally:
        spy.send_signal(signal.SIGINT)
        await spy.wait()


# -- driving the figure -----------------------------------------------------------------------


async def _repeat_for(seconds: float, action: Callable[[], Awaitable[object]]) -> int:
    count, start = 0, time.perf_counter()
    while count == 0 or time.perf_counter() - start < seconds:
        await action()
        count += 1
    return count


async def _drive(
    args: argparse.Namespace, server: Server, connection: Connection, url: str | None, raw: Path
) -> str:
    """Warm up, then profile the figure while it repeats; returns what was repeated."""
    await _blackbox.first_call(server, connection, size=args.size)
    if args.figure != "first-walk":
        await _blackbox.walk(connection, args.size)
    names = itertools.cycle(_catalogue.call_targets(args.size))

    async def call() -> None:
        await connection.request("tools/call", {"name": next(names), "arguments": {"x": 7}})

    actions: dict[str, Callable[[], Awaitable[object]]] = {
        "first-walk": lambda: _blackbox.walk(connection, args.size),
        "walk": lambda: _blackbox.walk(connection, args.size),
        "call": call,
        "ping": lambda: connection.request("ping"),
    }
    async with _attached(server.process.pid, args, raw):
        if args.figure == "load":
            if url is None:
                raise SystemExit("load is an HTTP figure: --transport http")
            await _blackbox.load(url, _blackbox.LoadPlan(size=args.size))
            return "one load test (warm-up session, then 3 bursts of 50 sessions)"
        if args.figure == "first-walk":
            await _blackbox.walk(connection, args.size)
            return "the first full walk of tools/list after the first call"
        count = await _repeat_for(args.seconds, actions[args.figure])
        return f"{count} x {args.figure}"


async def _profile(args: argparse.Namespace, raw: Path) -> str:
    command = serve.command(args)
    if args.figure == "spawn":
        if args.transport != "stdio":
            raise SystemExit("spawn is profiled over stdio")
        async with spawn_stdio([*_record(args, raw), "--", *command]) as (server, connection):
            await _blackbox.first_call(server, connection, size=args.size)
        return "spawn → first tools/call (and the server's exit)"
    if args.transport == "stdio":
        async with spawn_stdio(command) as (server, connection):
            return await _drive(args, server, connection, None, raw)
    async with spawn_http([*command, "--http"]) as (server, url), http_client() as client:
        return await _drive(args, server, HttpConnection(client, url), url, raw)


# -- the report -------------------------------------------------------------------------------


def _frame(text: str) -> str:
    """``function (file)``: the line number dropped, site-packages shortened."""
    found = _layers.FRAME.match(text)
    if found is None:
        return text
    path = found.group("file")
    for marker in ("site-packages/", "lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    root = str(_ROOT) + "/"
    return f"{found.group('function')} ({path.removeprefix(root)})"


def _package(frame: str) -> str:
    """The top-level package of a frame's file, marked when it is the standard library."""
    path = frame.rpartition(" (")[2].rstrip(")")
    if path.startswith("<frozen "):  # a frozen stdlib module: <frozen importlib._bootstrap>
        return f"stdlib ({path.removeprefix('<frozen ').rstrip('>').lstrip('_')})"
    top = path.split("/", 1)[0].removesuffix(".py")
    return f"stdlib ({top})" if top in sys.stdlib_module_names else top


def _importing(frames: Sequence[str]) -> str:
    """The package of the module body executing in a sample (its deepest ``<module>`` frame)."""
    for frame in reversed(frames):
        if frame.startswith("<module> (") and not frame.startswith("<module> (bench/"):
            return _package(frame)
    return "(no module body executing)"


def summarize(lines: Sequence[str], top: int, focus: str | None = None) -> list[str]:
    """Top frames by inclusive and own samples, own samples by package, and import time by package.

    The last table attributes each sample to the module body it was executing, if any (the
    deepest ``<module>`` frame): where start-up spends its import time, package by package.
    With ``focus``, only samples with a frame containing that text count (shares stay of all
    samples, so they add up with an unfocused summary of the same profile).
    """
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    packages: collections.Counter[str] = collections.Counter()
    imports: collections.Counter[str] = collections.Counter()
    total = focused = 0
    for line in lines:
        stack, _, number = line.rstrip().rpartition(" ")
        if not stack or not number.isdigit():
            continue
        samples = int(number)
        frames = [_frame(f) for f in stack.split(";") if not f.startswith(("process ", "thread "))]
        if not frames:
            continue
        total += samples
        if focus is not None and not any(focus in frame for frame in frames):
            continue
        focused += samples
        for frame in set(frames):
            inclusive[frame] += samples
        own[frames[-1]] += samples
        packages[_package(frames[-1])] += samples
        imports[_importing(frames)] += samples
    if not total:
        return ["no samples (was the server busy while py-spy sampled?)"]
    out = [f"{total} samples"]
    if focus is not None:
        out[0] += f"; {focused} ({100 * focused / total:.1f} %) with a frame containing `{focus}`"
    tables = (
        ("inclusive", "frame", inclusive),
        ("own", "frame", own),
        ("own", "package", packages),
        ("all", "package of the module body executing", imports),
    )
    for share, what, counter in tables:
        out += ["", f"| {share} share | {what} |", "|---:|---|"]
        out += [f"| {100 * n / total:.1f} % | `{f}` |" for f, n in counter.most_common(top)]
    return out


def _in_process(args: argparse.Namespace, mark: Callable[[str], None]) -> None:
    """Import, declare, first call, first full walk, in this process; ``mark`` ends each phase."""
    from bench import _libs, _measure, _wire  # noqa: PLC0415 -- part of what is measured

    lib = _libs.load(args.lib)
    mark("import")
    app = _measure.declare(lib, args.size, args.cache, args.module_size)
    mark("declare")

    async def serve() -> None:
        async with lib.lifespan(app), _wire.serving(lib.lowlevel(app)) as client:
            await client.initialize()
            name = _catalogue.call_targets(args.size)[0]
            await client.request("tools/call", {"name": name, "arguments": {"x": 7}})
            mark("first call")
            cursor: str | None = None
            while True:
                data = await client.request("tools/list", {"cursor": cursor} if cursor else {})
                found = re.search(rb'"nextCursor":"([^"\\]+)"', data)
                if found is None:
                    break
                cursor = found.group(1).decode()
            mark("first walk")

    asyncio.run(serve())


def _gc(args: argparse.Namespace) -> list[str]:
    """Each start-up phase's time, and the collections it ran (count and time per generation)."""
    spent = {generation: [0, 0.0] for generation in range(3)}
    started = [0.0]

    def collecting(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            entry = spent[info["generation"]]
            entry[0] += 1
            entry[1] += time.perf_counter() - started[0]

    rows = ["| phase | seconds | gen 0 | gen 1 | gen 2 |", "|---|---:|---:|---:|---:|"]
    clock = [time.perf_counter()]

    def mark(phase: str) -> None:
        now = time.perf_counter()
        cells = [f"{n} in {seconds * 1e3:.0f} ms" for n, seconds in spent.values()]
        rows.append(f"| {phase} | {now - clock[0]:.3f} | " + " | ".join(cells) + " |")
        if phase == "import" and args.gc == "freeze":
            gc.freeze()  # the modules' objects are never collected again
        if phase == "import" and args.gc == "off":
            gc.disable()
        for entry in spent.values():
            entry[:] = [0, 0.0]
        clock[0] = time.perf_counter()

    gc.callbacks.append(collecting)
    try:
        _in_process(args, mark)
    finally:
        gc.callbacks.remove(collecting)
        gc.enable()
    return [
        f"collector {args.gc} after the imports; tracked objects now {len(gc.get_objects())}",
        "",
        *rows,
    ]


def _memory(args: argparse.Namespace) -> list[str]:
    """The allocation sites holding the most memory after start, first call and a full walk."""
    tracemalloc.start()
    _in_process(args, lambda _: None)
    snapshot = tracemalloc.take_snapshot()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    mib = 1 << 20
    out = [f"traced now {current / mib:.0f} MiB, traced peak {peak / mib:.0f} MiB"]
    for key, title in (("lineno", "line"), ("filename", "file")):
        stats = snapshot.statistics(key)
        out += ["", f"| MiB | share | blocks | {title} |", "|---:|---:|---:|---|"]
        for stat in stats[: args.top]:
            frame = stat.traceback[0]
            where = _frame(f"x ({frame.filename}:{frame.lineno})").removeprefix("x (")[:-1]
            where += f":{frame.lineno}" if key == "lineno" else ""
            out.append(
                f"| {stat.size / mib:.1f} | {100 * stat.size / current:.1f} % | {stat.count} | `{where}` |"
            )
    return out


def main(argv: list[str] | None = None) -> int:
    """Profile the figure; print the tables."""
    args = _parser().parse_args(argv)
    if args.figure in ("memory", "gc"):
        _catalogue.write_package(args.cache, "cat", args.size, args.module_size)
        title = f"{args.lib}, in process, N = {args.size}: {args.figure}"
        print("\n".join([f"### {title}", "", *(_memory if args.figure == "memory" else _gc)(args)]))
        return 0
    if args.from_raw is not None:
        lines = args.from_raw.read_text(encoding="utf-8").splitlines()
        print("\n".join([f"### {args.from_raw}", "", *summarize(lines, args.top, args.focus)]))
        return 0
    package = _catalogue.write_package(args.cache, "cat", args.size, args.module_size)
    compileall.compile_dir(args.cache / package, quiet=1)  # no measured import compiles
    with tempfile.TemporaryDirectory() as folder:
        raw = args.raw or Path(folder) / "profile.txt"
        done = asyncio.run(_profile(args, raw))
        if not raw.exists():
            raise SystemExit("py-spy wrote no profile (its messages are above)")
        lines = raw.read_text(encoding="utf-8").splitlines()
    title = f"{args.lib}, {args.transport}, N = {args.size}: {done}"
    print("\n".join([f"### {title}", "", *summarize(lines, args.top, args.focus)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
