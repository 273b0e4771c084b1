"""Server memory under hostile load: the figures behind docs/security.md's memory bounds.

Serves examples/everything.py over streamable HTTP in a subprocess and reads its resident set
size (``VmRSS`` in ``/proc``, Linux) at each step:

1. after start-up and one session;
2. after 60 ``tools/call`` requests of 3.9 MB each whose argument fails validation (the error
   answer used to echo it twice), then after that session is deleted;
3. after each of three waves of 2,000 sessions that initialize and are abandoned (no DELETE)
   and, when the server has an idle timeout (``--idle-timeout``), after it passed. Freed memory
   is seldom returned to the system, so what a timeout shows is that later waves reuse it.

A measurement, not a test: nothing is asserted. Usage::

    .venv/bin/python scripts/memory_figures.py [--idle-timeout SECONDS]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx2

ROOT = Path(__file__).resolve().parents[1]
EVERYTHING = ROOT / "examples" / "everything.py"
VERSION = "2025-11-25"
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": VERSION,
}
HUGE = 3_900_000

SERVER = """
import runpy, sys
app = runpy.run_path({everything!r})["app"]
idle = {idle!r}
options = {{}} if idle is None else {{"session_idle_timeout": idle}}
app.run("http", port={port}, **options)
"""


def rss_mib(pid: int) -> float:
    """The resident set size of ``pid`` in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def open_session(http: httpx2.AsyncClient, url: str) -> str:
    """Initialize a session; return its id."""
    params = {
        "protocolVersion": VERSION,
        "capabilities": {},
        "clientInfo": {"name": "memory", "version": "1"},
    }
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    response = await http.post(url, json=body, headers=HEADERS)
    session = response.headers["mcp-session-id"]
    notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await http.post(url, json=notification, headers={**HEADERS, "mcp-session-id": session})
    return session


async def measure(url: str, pid: int, idle: float | None) -> list[tuple[str, float]]:
    """Drive the server through the steps; return (step, RSS MiB) pairs."""
    figures = [("started", rss_mib(pid))]
    async with httpx2.AsyncClient(timeout=120) as http:
        session = await open_session(http, url)
        figures.append(("one session", rss_mib(pid)))
        headers = {**HEADERS, "mcp-session-id": session}
        answer_bytes, statuses = 0, set()
        for n in range(60):
            body = {
                "jsonrpc": "2.0",
                "id": n + 1,
                "method": "tools/call",
                "params": {
                    "name": "json_schema_2020_12_tool",
                    "arguments": {"address": "x" * HUGE},
                },
            }
            response = await http.post(url, content=json.dumps(body), headers=headers)
            answer_bytes = max(answer_bytes, len(response.content))
            statuses.add(response.status_code)
        step = f"after 60 x 3.9 MB (HTTP {sorted(statuses)}, largest answer {answer_bytes} bytes)"
        figures.append((step, rss_mib(pid)))
        await http.delete(url, headers=headers)
        await anyio.sleep(2)
        figures.append(("after that session's DELETE", rss_mib(pid)))

        limiter = anyio.Semaphore(16)

        async def abandoned() -> None:
            async with limiter:
                await open_session(http, url)

        for wave in range(1, 4):
            async with anyio.create_task_group() as group:
                for _ in range(2000):
                    group.start_soon(abandoned)
            figures.append((f"after wave {wave} of 2,000 abandoned sessions", rss_mib(pid)))
            if idle is not None:
                await anyio.sleep(idle + 5)
                figures.append((f"  then the idle timeout ({idle:g} s) passed", rss_mib(pid)))
    return figures


def main() -> int:
    """Run the measurement and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle-timeout", type=float, default=None)
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as directory:
        server = Path(directory) / "server.py"
        server.write_text(
            SERVER.format(everything=str(EVERYTHING), port=port, idle=args.idle_timeout),
            encoding="utf-8",
        )
        process = subprocess.Popen(  # noqa: S603 -- this interpreter, our own file
            [sys.executable, str(server)], cwd=ROOT, env=dict(os.environ)
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or process.poll() is not None:
                        raise RuntimeError("the server did not start") from None
                    time.sleep(0.1)
            figures = anyio.run(
                measure, f"http://127.0.0.1:{port}/mcp", process.pid, args.idle_timeout
            )
        finally:
            process.terminate()
            process.wait(timeout=10)
    for step, mib in figures:
        print(f"{mib:8.1f} MiB  {step}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
