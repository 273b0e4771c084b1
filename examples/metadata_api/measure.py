"""The metadata-driven API's figures, measured against a real server process.

    .venv/bin/python examples/metadata_api/measure.py [--calls 200] [--resources 2000]

Starts ``mcp-core run bookstore_api.py --transport http`` on a free loopback port and, with the
official client (default mode, then legacy), reports:

- spawn -> first call: from starting the process to the first ``tools/call`` answered (the
  process start, imports, the connection and the call);
- a call's latency: the median and 95th percentile of ``--calls`` sequential calls;
- how many operations were built to answer them (the server's ``api_stats``), then after one full
  ``tools/list`` walk.

Calls are sent as ``tools/call`` requests as they are: ``client.call_tool`` would list every tool
first (to check structured content against output schemas), which builds the whole catalogue.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client

HERE = Path(__file__).resolve().parent
MCP_CORE = Path(sys.executable).with_name("mcp-core")
SERVING = re.compile(r"serving \S+ at (http://\S+)")


def start(resources: int) -> tuple[subprocess.Popen[str], str, float]:
    """Spawn the server on a free port; return it, its URL and the time it was spawned."""
    env = {**os.environ, "API_RESOURCES": str(resources)}
    command = [str(MCP_CORE), "run", str(HERE / "bookstore_api.py"), "--transport", "http"]
    spawned = time.perf_counter()
    process = subprocess.Popen(  # noqa: S603 -- our own console script
        [*command, "--port", "0"], env=env, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None  # noqa: S101 -- piped just above
    for line in process.stderr:
        found = SERVING.search(line)
        if found:
            return process, found.group(1), spawned
    process.wait()
    raise SystemExit(f"the server exited with {process.returncode} before serving")


async def call(client: Client, name: str, arguments: dict[str, Any] | None = None) -> Any:
    """One ``tools/call`` as is; the JSON of its first text block."""
    request = types.CallToolRequest(
        params=types.CallToolRequestParams(name=name, arguments=arguments)
    )
    result = await client.session.send_request(request, types.CallToolResult)
    if result.is_error:
        raise SystemExit(f"{name} failed: {result.content}")
    block = result.content[0]
    assert isinstance(block, types.TextContent)  # noqa: S101 -- the API answers JSON text
    return json.loads(block.text)


async def measure(mode: str, resources: int, calls: int) -> dict[str, Any]:
    """Spawn a server and measure it with a client in ``mode``."""
    process, url, spawned = start(resources)
    try:
        async with Client(url, mode=mode) as client:
            await call(client, "book_create", {"title": "Dune", "author_id": 1, "year": 1965})
            first = time.perf_counter() - spawned
            after_first = await call(client, "api_stats")
            latencies = []
            for _ in range(calls):
                began = time.perf_counter()
                await call(client, "book_get", {"id": 1})
                latencies.append(time.perf_counter() - began)
            after_calls = await call(client, "api_stats")
            began = time.perf_counter()
            cursor, listed = None, 0
            while True:
                page = await client.list_tools(cursor=cursor, cache_mode="bypass")
                listed += len(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
            listing = time.perf_counter() - began
            after_list = await call(client, "api_stats")
    finally:
        process.terminate()
        process.wait(timeout=10)
    latencies.sort()
    return {
        "mode": mode,
        "spawn_to_first_call_ms": round(first * 1000, 1),
        "call_median_ms": round(statistics.median(latencies) * 1000, 2),
        "call_p95_ms": round(latencies[int(len(latencies) * 0.95) - 1] * 1000, 2),
        "built_after_first_call": after_first["operations_built"],
        "built_after_calls": after_calls["operations_built"],
        "declared": after_first["operations_declared"],
        "tools_listed": listed,
        "first_full_list_ms": round(listing * 1000, 1),
        "built_after_list": after_list["operations_built"],
    }


def main() -> None:
    """Measure in both client modes and print one JSON line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--resources", type=int, default=2000)
    args = parser.parse_args()
    for mode in ("auto", "legacy"):
        print(json.dumps(asyncio.run(measure(mode, args.resources, args.calls))))


if __name__ == "__main__":
    main()
