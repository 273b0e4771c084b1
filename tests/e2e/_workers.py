"""Helpers for the multi-worker tests: the example's cluster, clients that hear changes, polling.

The cluster is ``examples/deployment/cluster.py`` (Redis, ``mcp-core run`` workers, HAProxy on
127.0.0.1), the same one the example's one script starts.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, Final

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import IncomingMessage

ROOT: Final = Path(__file__).resolve().parents[2]
EXAMPLE: Final = ROOT / "examples" / "deployment"
sys.path.insert(0, str(EXAMPLE))

from cluster import Cluster, missing_tools, running  # noqa: E402 -- the example's folder is on the path first

__all__ = [
    "EXAMPLE",
    "WAIT",
    "Changes",
    "Cluster",
    "deployed",
    "has",
    "health",
    "listening",
    "needs_cluster",
    "text",
    "tools",
    "until",
]

WAIT: Final = 60.0
"""A bound against hanging on a loaded machine, not a measured time."""

needs_cluster = pytest.mark.skipif(
    bool(missing_tools()) and not os.environ.get("CI"),
    reason=f"needs {' and '.join(missing_tools())} (scripts/install --with-services)",
)


@contextmanager
def deployed(root: Path) -> Iterator[Cluster]:
    """The example's deployment in ``root`` (Redis, w1, w2, HAProxy) serving a catalogue copy.

    The copy (``cluster.env["CATALOGUE_FILE"]``) is the test's to change. When the block ends
    every process is stopped and the workers' last log lines are printed (pytest shows them when
    a test fails).
    """
    catalogue = root / "catalogue.json"
    shutil.copy(EXAMPLE / "catalogue.json", catalogue)
    with running(root, 2, env={"CATALOGUE_FILE": str(catalogue)}) as cluster:
        try:
            yield cluster
        finally:
            for name in ("w1", "w2"):
                print(f"--- {name}\n{cluster.log(name)[-4000:]}")  # noqa: T201 -- shown when a test fails


def add_catalogue_tool(path: Path, name: str) -> None:
    """Add a template tool to the catalogue file (as an operator editing it would)."""
    document = json.loads(path.read_text())
    document["elements"].append(
        {
            "kind": "tool",
            "definition": {
                "name": name,
                "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                "_meta": {"template": f"{name} says hi to {{name}}"},
            },
            "handler": "greetings:Template",
        }
    )
    path.write_text(json.dumps(document))


def health(url: str) -> tuple[int, dict[str, Any]]:
    """A health endpoint's status and document."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 -- our own loopback server
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def backend_states(document: dict[str, Any]) -> set[str]:
    """The states of the shared backends a health document lists."""
    return {backend["state"] for backend in document.get("backends", [])}


def text(result: types.CallToolResult) -> str:
    """The text of a tool result's first content block."""
    block = result.content[0]
    assert isinstance(block, types.TextContent), block
    return block.text


async def tools(client: Client) -> set[str]:
    """The names of the tools listed now (never from the client's cache)."""
    return {tool.name for tool in (await client.list_tools(cache_mode="bypass")).tools}


async def has(client: Client, name: str) -> bool:
    """Whether the tool ``name`` is listed now."""
    return name in await tools(client)


async def until(check: Callable[[], Awaitable[bool]], *, wait: float = WAIT) -> None:
    """Poll ``check`` until it holds (bounded by ``wait``)."""
    with anyio.fail_after(wait):
        while not await check():  # noqa: ASYNC110 -- the state polled lives in other processes
            await anyio.sleep(0.05)


class Changes:
    """``tools/list_changed`` as a client hears it: a notification (2025-11-25) or a listen event."""

    def __init__(self) -> None:
        self.seen = 0
        self._arrived = anyio.Event()

    def saw(self) -> None:
        """Count one announcement."""
        self.seen += 1
        self._arrived.set()

    async def on_message(self, message: IncomingMessage) -> None:
        """The official client's message handler."""
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self.saw()

    async def after(self, count: int) -> None:
        """Wait until more than ``count`` announcements were heard."""
        with anyio.fail_after(WAIT):
            while self.seen <= count:
                self._arrived = anyio.Event()
                await self._arrived.wait()


@asynccontextmanager
async def listening(url: str, mode: str) -> AsyncIterator[tuple[Client, Changes]]:
    """The official client at ``url`` in ``mode``, and the list changes it hears."""
    changes = Changes()
    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(
            Client(url, mode=mode, message_handler=changes.on_message)
        )
        if mode != "legacy":
            subscription = await stack.enter_async_context(client.listen(tools_list_changed=True))
            tasks = await stack.enter_async_context(anyio.create_task_group())

            async def follow() -> None:
                async for _ in subscription:
                    changes.saw()

            tasks.start_soon(follow)
            stack.callback(tasks.cancel_scope.cancel)
        yield client, changes
