"""Streamable HTTP under load, driven by ``wrk`` (a compiled load generator), in both eras.

The harness's own load test (``bench/probe.py load``) drives each server with Python's aiohttp,
which on a 2-core machine shares the CPU with the server and tops out near the bare ASGI floor:
it measures the client as much as the server. This one spawns each server as ``bench/serve.py``
does (same catalogue, same uvicorn) and lets ``wrk`` (Debian package ``wrk``) keep 50
connections busy with ``tools/call`` requests for a fixed time:

- ``2026``: 2026-07-28 requests, each carrying its own envelope (no session);
- ``session``: 2025-11-25 requests, spread over 50 sessions opened (``initialize``,
  ``notifications/initialized``) before the timing starts.

Servers and eras are interleaved, round after round, so a busy machine weighs on all alike::

    python bench/wrk_load.py --rounds 3 --seconds 10 --json /tmp/wrk.json

Prints a Markdown table (requests/s and p99 as wrk saw them, ratios to ``MCPServer``'s); the
``--uvicorn`` option serves with another HTTP protocol / event loop (``httptools``, ``uvloop``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from bench import _catalogue, _layers  # noqa: E402 -- after the path is set
from bench._raw import HttpConnection, http_client, spawn_http  # noqa: E402

MODERN: Final = "2026-07-28"
LEGACY: Final = "2025-11-25"
ENVELOPE: Final = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "wrk", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
TITLES: Final = {"mcp-core": "mcp-core", "mcpserver": "MCPServer", "floor": "floor"}
_LATENCY: Final = re.compile(r"^\s+(50|75|90|99)%\s+([\d.]+)(us|ms|s)\s*$", re.MULTILINE)
_RATE: Final = re.compile(r"^Requests/sec:\s+([\d.]+)", re.MULTILINE)
_ERRORS: Final = re.compile(r"Non-2xx or 3xx responses: (\d+)")
_UNIT: Final = {"us": 1e-6, "ms": 1e-3, "s": 1.0}
_TIMES: Final = "\u00d7"
_NONE: Final = "\u2013"

_SCRIPT: Final = """
local bodies = {%(bodies)s}
local names = {%(names)s}
local sessions = {%(sessions)s}
local n = 0
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
wrk.headers["accept"] = "application/json, text/event-stream"
wrk.headers["mcp-protocol-version"] = "%(version)s"
%(extra)s
request = function()
  n = n + 1
  local headers = {}
  for key, value in pairs(wrk.headers) do headers[key] = value end
  if #sessions > 0 then
    headers["mcp-session-id"] = sessions[(n %% #sessions) + 1]
  else
    headers["mcp-name"] = names[(n %% #names) + 1]
  end
  return wrk.format(nil, nil, headers, bodies[(n %% #bodies) + 1])
end
"""


def _lua_string(text: str) -> str:
    return json.dumps(text)  # a JSON string of ASCII is a valid Lua string literal


def _bodies(size: int, era: str) -> list[str]:
    bodies = []
    for k, name in enumerate(_catalogue.call_targets(size)):
        params: dict[str, Any] = {"name": name, "arguments": {"x": k}}
        if era == "2026":
            params["_meta"] = ENVELOPE
        bodies.append(
            json.dumps(
                {"jsonrpc": "2.0", "id": k + 1, "method": "tools/call", "params": params},
                separators=(",", ":"),
            )
        )
    return bodies


async def _ready(url: str) -> None:
    """Wait until the server answers (it was spawned on a socket already listening)."""
    async with http_client() as client:
        await HttpConnection(client, url).request(
            "initialize",
            {
                "protocolVersion": LEGACY,
                "capabilities": {},
                "clientInfo": {"name": "wrk", "version": "1"},
            },
        )


async def _sessions(url: str, count: int) -> list[str]:
    """Open ``count`` handshake-era sessions; their ids."""
    opened = []
    async with http_client() as client:
        for _ in range(count):
            connection = HttpConnection(client, url)
            await connection.request(
                "initialize",
                {
                    "protocolVersion": LEGACY,
                    "capabilities": {},
                    "clientInfo": {"name": "wrk", "version": "1"},
                },
            )
            await connection.notify("notifications/initialized")
            opened.append(connection._headers["mcp-session-id"])  # noqa: SLF001 -- the harness's own client
    return opened


def _cpu_seconds(pid: int) -> tuple[float, float]:
    """The user and the system CPU time process ``pid`` has used (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rpartition(")")[2].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def _sampled(pid: int, raw: Path, seconds: float) -> subprocess.Popen[bytes]:
    """py-spy recording ``pid`` (the thread holding the GIL) into ``raw`` for ``seconds``."""
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    command = [spy, "record", "--gil", "--rate", "250", "--format", "raw", "--output", str(raw)]
    command += ["--pid", str(pid), "--duration", str(math.ceil(seconds))]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wrk(url: str, script: Path, *, connections: int, seconds: float) -> dict[str, float]:
    done = subprocess.run(
        [
            "wrk",
            "-t1",
            f"-c{connections}",
            f"-d{seconds:g}s",
            "--timeout",
            "30s",
            "--latency",
            "-s",
            str(script),
            url,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed: {done.stderr or done.stdout}")
    out = done.stdout
    rate = _RATE.search(out)
    if rate is None:
        raise RuntimeError(f"wrk printed no rate:\n{out}")
    errors = _ERRORS.search(out)
    if errors is not None:
        raise RuntimeError(f"{errors.group(1)} answers were not 2xx:\n{out}")
    figures = {"rps": float(rate.group(1))}
    for percent, value, unit in _LATENCY.findall(out):
        figures[f"p{percent}_s"] = float(value) * _UNIT[unit]
    return figures


async def _one(
    lib: str, era: str, args: argparse.Namespace, folder: Path, *, raw: Path | None = None
) -> dict[str, float]:
    """One timed run of ``lib`` in ``era``; ``raw``: sampled by py-spy into that file."""
    command = [
        sys.executable,
        str(_ROOT / "bench" / "serve.py"),
        lib,
        "--size",
        str(args.size),
        "--cache",
        str(args.cache),
        *(["--uvicorn", args.uvicorn] if args.uvicorn else []),
        "--http",
    ]
    async with spawn_http(command) as (server, url):
        await _ready(url)
        sessions = await _sessions(url, args.connections) if era == "session" else []
        version = MODERN if era == "2026" else LEGACY
        script = folder / f"{lib}-{era}.lua"
        script.write_text(
            _SCRIPT
            % {
                "bodies": ",".join(_lua_string(b) for b in _bodies(args.size, era)),
                "sessions": ",".join(_lua_string(s) for s in sessions),
                "names": ",".join(_lua_string(n) for n in _catalogue.call_targets(args.size)),
                "version": version,
                "extra": 'wrk.headers["mcp-method"] = "tools/call"' if era == "2026" else "",
            }
        )
        # Warm up (first list built, code paths hot), then the timed run.
        await asyncio.to_thread(_wrk, url, script, connections=args.connections, seconds=1)
        pid = server.process.pid
        spy = _sampled(pid, raw, args.seconds) if raw is not None else None
        user, system = _cpu_seconds(pid)
        figures = await asyncio.to_thread(
            _wrk, url, script, connections=args.connections, seconds=args.seconds
        )
        user_after, system_after = _cpu_seconds(pid)
        if spy is not None:
            await asyncio.to_thread(spy.wait)
        # CPU time per answer: what a busy machine's share of the cores does not change much.
        answered = figures["rps"] * args.seconds
        figures["cpu_per_request_s"] = (user_after - user + system_after - system) / answered
        figures["system_per_request_s"] = (system_after - system) / answered
        await server.stop()
        return figures


async def _main(args: argparse.Namespace) -> int:
    if shutil.which("wrk") is None:
        sys.stderr.write("wrk is not installed (Debian: apt-get install wrk)\n")
        return 1
    _catalogue.write_package(args.cache, "cat", args.size, 1000)
    results: dict[str, dict[str, list[dict[str, float]]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for round_ in range(args.rounds):
            for era in args.eras:
                for lib in args.libs:
                    if lib == "floor" and era == "session":
                        continue  # the floor keeps no sessions: one figure, under 2026
                    figures = await _one(lib, era, args, Path(folder))
                    sys.stderr.write(f"round {round_ + 1} {era} {lib}: {figures}\n")
                    results.setdefault(era, {}).setdefault(lib, []).append(figures)
        if args.profile is not None:
            await _profiled(args, Path(folder))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(_table(results))
    if args.profile is not None:
        print()
        print(_layer_table(results, args.profile, args.libs))
    return 0


async def _profiled(args: argparse.Namespace, folder: Path) -> None:
    """One more run per server and era, sampled by py-spy (apart: sampling costs the server CPU)."""
    args.profile.mkdir(parents=True, exist_ok=True)
    for era in args.eras:
        for lib in args.libs:
            if lib != "floor":
                await _one(lib, era, args, folder, raw=args.profile / f"{lib}-{era}.txt")


def _layer_table(
    results: dict[str, dict[str, list[dict[str, float]]]], folder: Path, libs: list[str]
) -> str:
    """Each server's CPU per request split by layer: the profiled run's shares of user time."""
    columns = [
        (era, lib) for era in results for lib in libs if (folder / f"{lib}-{era}.txt").exists()
    ]
    shares = {
        column: _layers.read_shares(folder / f"{column[1]}-{column[0]}.txt") for column in columns
    }
    layers = list(dict.fromkeys(layer for found in shares.values() for layer in found))
    head = " | ".join(f"{TITLES[lib]}, {era}" for era, lib in columns)
    lines = [f"| µs of server CPU per request | {head} |", "|---" + "|---:" * len(columns) + "|"]

    def cell(column: tuple[str, str], user_share: float | None) -> str:
        runs = results[column[0]][column[1]]
        total, system = _median(runs, "cpu_per_request_s"), _median(runs, "system_per_request_s")
        if user_share is None:
            return f"{system * 1e6:.0f}"
        return f"{(total - system) * user_share * 1e6:.0f}"

    for layer in layers:
        row = " | ".join(cell(column, shares[column].get(layer, 0.0)) for column in columns)
        lines.append(f"| {layer} | {row} |")
    system_row = " | ".join(cell(column, None) for column in columns)
    lines.append(f"| the kernel (system time: sockets, polling, waking threads) | {system_row} |")
    total_row = " | ".join(
        f"**{_median(results[era][lib], 'cpu_per_request_s') * 1e6:.0f}**" for era, lib in columns
    )
    lines.append(f"| **total** | {total_row} |")
    return "\n".join(lines)


def _median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def _table(results: dict[str, dict[str, list[dict[str, float]]]]) -> str:
    lines = [
        (
            "| era | server | requests/s | p50 | p99 | requests/s ÷ MCPServer's | "
            "MCPServer's p99 ÷ this p99 | server CPU per request | MCPServer's ÷ this | runs |"
        ),
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for era, libs in results.items():
        base = libs.get("mcpserver")
        for lib, runs in libs.items():
            rps, p50, p99 = (_median(runs, k) for k in ("rps", "p50_s", "p99_s"))
            cpu = _median(runs, "cpu_per_request_s")
            ratio = f"{rps / _median(base, 'rps'):.1f}{_TIMES}" if base else _NONE
            faster = f"{_median(base, 'p99_s') / p99:.1f}{_TIMES}" if base else _NONE
            cheaper = f"{_median(base, 'cpu_per_request_s') / cpu:.1f}{_TIMES}" if base else _NONE
            lines.append(
                f"| {era} | {TITLES[lib]} | {rps:.0f} | {p50 * 1e3:.1f} ms | {p99 * 1e3:.1f} ms "
                f"| {ratio} | {faster} | {cpu * 1e6:.0f} µs | {cheaper} | {len(runs)} |"
            )
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python bench/wrk_load.py", description=__doc__)
    parser.add_argument("--size", type=int, default=100, help="tools in the catalogue")
    parser.add_argument("--connections", type=int, default=50, help="concurrent connections")
    parser.add_argument("--seconds", type=float, default=10.0, help="timed seconds per run")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--libs", nargs="+", default=["mcp-core", "mcpserver", "floor"])
    parser.add_argument("--eras", nargs="+", default=["2026", "session"])
    parser.add_argument(
        "--uvicorn",
        help="uvicorn's HTTP protocol and loop as HTTP/LOOP, e.g. httptools/uvloop "
        "(default: uvicorn's auto choice)",
    )
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "mcp-core-bench"
    )
    parser.add_argument("--json", type=Path, help="also save every run's figures")
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="DIR",
        help="after the rounds, one more run per server and era under py-spy (the bench "
        "extra), its stacks kept in DIR; prints each server's CPU per request by layer",
    )
    return parser


if __name__ == "__main__":
    sys.exit(asyncio.run(_main(_parser().parse_args())))
