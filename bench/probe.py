"""The raw client: spawns one benchmark server (``bench/serve.py``) and measures it from outside.

Started by ``bench/run.py``, one process per measurement; it can be run by hand::

    python bench/probe.py stdio --lib mcp-core --size 1000 --cache /tmp/mcp-core-bench
    python bench/probe.py load --lib mcpserver --size 100 --cache /tmp/mcp-core-bench

Modes: ``stdio`` and ``http`` (spawn → first call, tools/list walks, call and ping medians, peak
RSS), ``load`` (concurrent HTTP sessions: requests/s, p50/p99), ``start`` (spawn → first call
over stdio only, with the server's CPU time up to it), ``warm`` (the same for mcp-core serving a
dumped collection) and ``import`` (a fresh interpreter importing the library). It
prints one JSON line, ``{"event": "result", "figures": {...}, "versions": {...}}``; on failure
it says why on stderr and exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Final

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from bench import _blackbox, serve  # noqa: E402 -- after the path is set
from bench._raw import HttpConnection, Server, http_client, spawn_http, spawn_stdio  # noqa: E402

MODES: Final = ("stdio", "http", "load", "warm", "start", "import")
IMPORTS: Final = {
    "mcp-core": "mcp_core.app",
    "mcpserver": "mcp.server.mcpserver",
    "fastmcp": "fastmcp",
    "sdk": "mcp",
    "floor": "json",
}
"""What a fresh interpreter imports in ``import`` mode, per key (``sdk``: the SDK's root alone)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="One black-box measurement (see bench/run.py).")
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--lib", default="mcp-core")
    parser.add_argument("--size", type=int, default=10)
    parser.add_argument("--cache", type=Path, help="folder of the generated catalogues")
    parser.add_argument("--module-size", type=int, default=1000)
    parser.add_argument("--dump", type=Path, help="warm: the dumped collection")
    parser.add_argument("--json-response", action="store_true", help="HTTP: JSON bodies, not SSE")
    parser.add_argument("--sessions", type=int, default=50, help="load: concurrent sessions")
    parser.add_argument("--session-calls", type=int, default=20, help="load: calls per session")
    parser.add_argument("--rounds", type=int, default=3, help="load: bursts of sessions")
    parser.add_argument("--repeats", type=int, default=7, help="steady walks per process")
    parser.add_argument("--seconds", type=float, default=3.0, help="budget of a repeated figure")
    parser.add_argument("--calls", type=int, default=200, help="tools/call requests per process")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds for the whole run")
    return parser


async def _finish(server: Server, figures: dict[str, float]) -> dict[str, float]:
    rss = server.rss_mib()
    if rss is not None:
        figures.setdefault("rss_mib", rss)
    status = await server.stop()
    if status is not None and status > 0:
        raise RuntimeError(f"the server exited with status {status}: {server.stderr_tail()}")
    return figures


async def _measure(args: argparse.Namespace) -> dict[str, float]:
    budget = _blackbox.Budget(repeats=args.repeats, seconds=args.seconds, calls=args.calls)
    command = serve.command(args)
    if args.mode in ("stdio", "warm", "start"):
        async with spawn_stdio(command) as (server, connection):
            try:
                if args.mode in ("warm", "start"):
                    figures = await _blackbox.first_call(server, connection, size=args.size)
                else:
                    figures = await _blackbox.serve_figures(
                        server, connection, size=args.size, budget=budget
                    )
            except Exception as exc:
                raise RuntimeError(f"{exc}; the server's stderr: {server.stderr_tail()}") from exc
            return await _finish(server, figures)
    async with spawn_http([*command, "--http"]) as (server, url):
        try:
            if args.mode == "load":
                plan = _blackbox.LoadPlan(
                    size=args.size,
                    sessions=args.sessions,
                    calls=args.session_calls,
                    rounds=args.rounds,
                )
                figures = await _blackbox.load(url, plan)
            else:
                async with http_client() as client:
                    figures = await _blackbox.serve_figures(
                        server, HttpConnection(client, url), size=args.size, budget=budget
                    )
        except Exception as exc:
            raise RuntimeError(f"{exc}; the server's stderr: {server.stderr_tail()}") from exc
        return await _finish(server, figures)


def _import(lib: str) -> dict[str, float]:
    module = IMPORTS[lib]
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
    return {"import_s": time.perf_counter() - start}


_PACKAGES: Final = {
    "mcp-core": ("mcp-core", "mcp", "pydantic"),
    "mcpserver": ("mcp", "pydantic"),
    "fastmcp": ("fastmcp", "mcp", "pydantic"),
}
_DISTRIBUTIONS: Final = {"mcp-core": "mcp-core-server"}
"""A package's distribution where its name differs (``mcp-core`` on PyPI is another project)."""


def _versions(args: argparse.Namespace) -> dict[str, str]:
    """The installed versions of what this measurement exercised (without importing it)."""
    packages = list(_PACKAGES.get(args.lib, ()))
    if args.mode in ("http", "load"):
        packages += ["uvicorn", "aiohttp"]
    found: dict[str, str] = {}
    for package in packages:
        try:
            found[package] = version(_DISTRIBUTIONS.get(package, package))
        except PackageNotFoundError:
            found[package] = "absent"
    return found


def main(argv: list[str] | None = None) -> int:
    """Measure once; print the figures as one JSON line."""
    args = _parser().parse_args(argv)
    try:
        if args.mode == "import":
            figures = _import(args.lib)
        else:
            figures = asyncio.run(asyncio.wait_for(_measure(args), args.timeout))
    except TimeoutError:
        print(f"probe: no result within {args.timeout:.0f} s", file=sys.stderr)
        return 1
    except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
        print(f"probe: {exc}", file=sys.stderr)
        return 1
    result = {"event": "result", "figures": figures, "versions": _versions(args)}
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
