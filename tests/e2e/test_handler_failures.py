"""Handlers that fail on purpose, and by accident, as the official client sees them.

``tests/e2e/servers/failing_server.py`` is served by ``mcp-core run`` over stdio and over
streamable HTTP, and read in both protocol eras (``mcp.Client`` negotiates 2026-07-28,
``mode="legacy"`` 2025-11-25). What the spec asks of each failure:

- a URI that names nothing (``ResourceNotFoundError`` from a template, the SDK's
  ``ResourceNotFoundError``, fastmcp's ``NotFoundError``): ``-32002`` with the URI in ``data``
  (2025-11-25), ``-32602`` on 2026-07-28, which retired ``-32002``; the message is the handler's;
- a read or a prompt refused on purpose (``ResourceError``, ``PromptError``, theirs too):
  ``-32603`` with the handler's message (a read's with the URI in ``data``);
- a crash (a ``KeyError``): ``-32603 Internal error`` and nothing of the exception; the server's
  log holds the traceback, starting at the handler's own line.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.clients import MCP_CORE, ROOT, stdio, text
from tests.e2e.conftest import run_http, serving_http, stop

SERVER = ROOT / "tests" / "e2e" / "servers" / "failing_server.py"

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """The failing server over streamable HTTP, for the module."""
    with serving_http(SERVER) as url:
        yield url


def target(transport: str, http_url: str) -> Any:
    """Where the client reaches the failing server over ``transport``."""
    return stdio(SERVER) if transport == "stdio" else http_url


async def refusal(client: Client, kind: str, key: str, **arguments: str) -> tuple[int, str, Any]:
    """The JSON-RPC error a read (``kind="read"``) or a prompt (``"prompt"``) is refused with."""
    request = client.read_resource(key) if kind == "read" else client.get_prompt(key, arguments)
    with pytest.raises(MCPError) as refused:
        await request
    error = refused.value.error
    return error.code, error.message, error.data


ERAS = pytest.mark.parametrize("mode", ["legacy", "modern"])
TRANSPORTS = pytest.mark.parametrize("transport", ["stdio", "http"])


@ERAS
@TRANSPORTS
async def test_failures_on_purpose_reach_the_client(
    transport: str, mode: str, http_url: str
) -> None:
    """Not found, refused reads and prompts: the spec's codes, the handler's messages and URIs."""
    options: dict[str, Any] = {"mode": "legacy"} if mode == "legacy" else {}
    not_found = -32002 if mode == "legacy" else -32602  # SEP-2164
    async with Client(target(transport, http_url), **options) as client:
        found = await client.read_resource("note://1")
        answers = {
            "template not found": await refusal(client, "read", "note://2"),
            "resource error": await refusal(client, "read", "notes://locked"),
            "sdk not found": await refusal(client, "read", "sdk://missing"),
            "sdk error": await refusal(client, "read", "sdk://x"),
            "fastmcp not found": await refusal(client, "read", "fastmcp://missing"),
            "fastmcp error": await refusal(client, "read", "fastmcp://x"),
            "tool error in a read": await refusal(client, "read", "tool-error://y"),
            "prompt error": await refusal(client, "prompt", "summary", topic=" "),
            "fastmcp prompt error": await refusal(client, "prompt", "fastmcp_summary", topic="x"),
        }
        taken = await client.call_tool("take", {"id": "9"})
    assert text(found) == "buy milk"
    assert answers == {
        "template not found": (not_found, "there is no note 2", {"uri": "note://2"}),
        "resource error": (
            -32603,
            "the notes are locked; unlock them first",
            {"uri": "notes://locked"},
        ),
        "sdk not found": (not_found, "sdk: no missing", {"uri": "sdk://missing"}),
        "sdk error": (-32603, "sdk: x is refused", {"uri": "sdk://x"}),
        "fastmcp not found": (not_found, "fastmcp: no missing", {"uri": "fastmcp://missing"}),
        "fastmcp error": (-32603, "fastmcp: x is refused", {"uri": "fastmcp://x"}),
        "tool error in a read": (-32603, "y: no such thing", {"uri": "tool-error://y"}),
        "prompt error": (-32603, "give a topic to summarise, e.g. 'groceries'", None),
        "fastmcp prompt error": (-32603, "fastmcp: no summary of x", None),
    }
    assert taken.is_error
    assert text(taken) == "there is no note 9"


@ERAS
@TRANSPORTS
async def test_crashes_stay_hidden(transport: str, mode: str, http_url: str) -> None:
    """A KeyError from a read or a prompt is ``-32603 Internal error``: its text is not sent."""
    options: dict[str, Any] = {"mode": "legacy"} if mode == "legacy" else {}
    async with Client(target(transport, http_url), **options) as client:
        read = await refusal(client, "read", "crash://secret")
        prompt = await refusal(client, "prompt", "crashing", topic="secret")
    assert read == (-32603, "Internal error", None)
    assert prompt == (-32603, "Internal error", None)


async def test_crash_log_starts_at_the_handlers_line(tmp_path: Path) -> None:
    """The server's log shows each crash's traceback from the handler's own frame on.

    The sync read runs in a worker thread, the async prompt on the event loop: neither shows the
    invoker's, anyio's or the SDK's frames before the handler's line.
    """
    log = tmp_path / "stderr.log"
    with log.open("wb") as stderr:
        url, process = run_http(SERVER, stderr=stderr)
        try:
            async with Client(f"{url}/mcp", mode="legacy") as client:
                await refusal(client, "read", "crash://secret")
                await refusal(client, "prompt", "crashing", topic="secret")
        finally:
            stop(process)
    lines = log.read_text().splitlines()
    first_frames = [lines[i + 1] for i, line in enumerate(lines) if line.startswith("Traceback")]
    read_line, prompt_line = line_of('"b"}[key]'), line_of('"b"}[topic]')
    assert first_frames == [
        f'  File "{SERVER}", line {read_line}, in crash',
        f'  File "{SERVER}", line {prompt_line}, in crashing',
    ]
    assert "request failed; the client is told only 'Internal error'" in log.read_text()
    assert sum("KeyError: 'secret'" in line for line in lines) == 2


def line_of(code: str) -> int:
    """The line of the failing server that holds ``code``."""
    lines = SERVER.read_text().splitlines()
    return next(number for number, text in enumerate(lines, 1) if code in text)


def test_the_failing_server_imports_cleanly() -> None:
    """The server file itself is sound: ``mcp-core inspect --strict`` finds nothing to report."""
    inspected = subprocess.run(  # noqa: S603 -- our own console script
        [str(MCP_CORE), "inspect", str(SERVER), "--strict"],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert inspected.returncode == 0, inspected.stdout + inspected.stderr
