"""Handlers that fail, on purpose and by accident, as the official client sees them.

``tests/e2e/servers/failing_server.py`` is served by ``mcp-core run`` over stdio and over
streamable HTTP, and read in both protocol eras (``mcp.Client`` negotiates 2026-07-28,
``mode="legacy"`` 2025-11-25). What the spec asks of each failure:

- a URI that names nothing (an unknown URI; ``ResourceNotFoundError`` from a resource or a
  template, the SDK's ``ResourceNotFoundError``, fastmcp's ``NotFoundError``): ``-32002`` with the
  URI in ``data`` (2025-11-25), ``-32602`` on 2026-07-28, which retired ``-32002``; the message is
  the handler's;
- a read, a prompt or a completion refused on purpose (``ResourceError``, ``PromptError``, theirs
  too): ``-32603`` with the handler's message (a read's with the URI in ``data``; a completion's
  "not found" is a refusal like any other);
- a crash (a ``KeyError``) of any handler kind: ``-32603 Internal error`` (a tool: a generic
  ``isError`` result) and nothing of the exception; the server's log holds the traceback,
  starting at the handler's own line.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from tests.clients import MCP_CORE, ROOT, stdio, text
from tests.e2e.conftest import run_http, stop

SERVER = ROOT / "tests" / "e2e" / "servers" / "failing_server.py"

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


@dataclass(frozen=True)
class Served:
    """The failing server over streamable HTTP: its MCP URL and the file its log goes to."""

    url: str
    log: Path

    def logged_since(self, offset: int) -> str:
        """What the server logged after ``offset`` bytes of its log."""
        return self.log.read_bytes()[offset:].decode()


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The failing server over streamable HTTP, for the module, its log kept."""
    log = tmp_path_factory.mktemp("failing") / "stderr.log"
    with log.open("wb") as stderr:
        url, process = run_http(SERVER, stderr=stderr)
        try:
            yield Served(f"{url}/mcp", log)
        finally:
            stop(process)


def target(transport: str, http_server: Served) -> Any:
    """Where the client reaches the failing server over ``transport``."""
    return stdio(SERVER) if transport == "stdio" else http_server.url


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
    transport: str, mode: str, http_server: Served
) -> None:
    """Not found, refused reads and prompts: the spec's codes, the handler's messages and URIs."""
    options: dict[str, Any] = {"mode": "legacy"} if mode == "legacy" else {}
    not_found = -32002 if mode == "legacy" else -32602  # SEP-2164
    async with Client(target(transport, http_server), **options) as client:
        found = await client.read_resource("note://1")
        answers = {
            "unknown uri": await refusal(client, "read", "nothing://here"),
            "resource not found": await refusal(client, "read", "notes://archived"),
            "template not found": await refusal(client, "read", "note://2"),
            "resource error": await refusal(client, "read", "notes://locked"),
            "template error": await refusal(client, "read", "note://3"),
            "sdk not found": await refusal(client, "read", "sdk://missing"),
            "sdk error": await refusal(client, "read", "sdk://x"),
            "fastmcp not found": await refusal(client, "read", "fastmcp://missing"),
            "fastmcp error": await refusal(client, "read", "fastmcp://x"),
            "tool error in a read": await refusal(client, "read", "tool-error://y"),
            "prompt error": await refusal(client, "prompt", "summary", topic=" "),
            "fastmcp prompt error": await refusal(client, "prompt", "fastmcp_summary", topic="x"),
        }
        for name, ref in (
            ("topic", types.PromptReference(type="ref/prompt", name="summary")),
            ("id", types.ResourceTemplateReference(type="ref/resource", uri="note://{id}")),
        ):
            with pytest.raises(MCPError) as refused:
                await client.complete(ref, {"name": name, "value": "gr"})
            error = refused.value.error
            answers[f"{name} completion error"] = (error.code, error.message, error.data)
        taken = await client.call_tool("take", {"id": "9"})
    assert text(found) == "buy milk"
    assert answers == {
        "unknown uri": (not_found, "Resource not found", {"uri": "nothing://here"}),
        "resource not found": (
            not_found,
            "the archive was deleted; read note://1 instead",
            {"uri": "notes://archived"},
        ),
        "template not found": (not_found, "there is no note 2", {"uri": "note://2"}),
        "resource error": (
            -32603,
            "the notes are locked; unlock them first",
            {"uri": "notes://locked"},
        ),
        "template error": (-32603, "note 3 is locked; unlock it first", {"uri": "note://3"}),
        "sdk not found": (not_found, "sdk: no missing", {"uri": "sdk://missing"}),
        "sdk error": (-32603, "sdk: x is refused", {"uri": "sdk://x"}),
        "fastmcp not found": (not_found, "fastmcp: no missing", {"uri": "fastmcp://missing"}),
        "fastmcp error": (-32603, "fastmcp: x is refused", {"uri": "fastmcp://x"}),
        "tool error in a read": (-32603, "y: no such thing", {"uri": "tool-error://y"}),
        "prompt error": (-32603, "give a topic to summarise, e.g. 'groceries'", None),
        "fastmcp prompt error": (-32603, "fastmcp: no summary of x", None),
        "topic completion error": (
            -32603,
            "topics are not completed; type one ('gr' so far)",
            None,
        ),
        "id completion error": (-32603, "no note id starts with 'gr'", None),
    }
    assert taken.is_error
    assert text(taken) == "there is no note 9"


# Each crash the failing server has, as (the handler's name, the code of its failing line).
CRASHES = [
    ("broken", '{"a": "b"}["secret"]'),
    ("crash", '"b"}[key]'),
    ("crashing", '"b"}[topic]'),
    ("crashing_topics", '"b"}[value]'),
    ("crashing_tool", '"b"}[key]'),
    ("crashing_async_tool", '"b"}[key]'),
]


async def crash_each(client: Client) -> dict[str, Any]:
    """Make each handler of the failing server crash, in :data:`CRASHES`'s order: what came back."""
    answers: dict[str, Any] = {
        "static read": await refusal(client, "read", "broken://static"),
        "template read": await refusal(client, "read", "crash://secret"),
        "prompt": await refusal(client, "prompt", "crashing", topic="secret"),
    }
    with pytest.raises(MCPError) as refused:
        await client.complete(
            types.PromptReference(type="ref/prompt", name="crashing"),
            {"name": "topic", "value": "secret"},
        )
    answers["completion"] = (refused.value.error.code, refused.value.error.message)
    for name in ("crashing_tool", "crashing_async_tool"):
        result = await client.call_tool(name, {"key": "secret"})
        answers[name] = (result.is_error, text(result))
    return answers


@ERAS
@TRANSPORTS
async def test_crashes_stay_hidden_and_are_logged_from_the_users_line(
    transport: str, mode: str, http_server: Served, tmp_path: Path
) -> None:
    """A crash of any handler kind: the client learns nothing of it, the log shows the user's line.

    Every handler raises ``KeyError('secret')``. The client gets ``-32603 Internal error`` (a
    tool: a generic ``isError`` result); the server logs each traceback, whose first frame is the
    handler's own line: sync handlers run in a worker thread, async ones on the event loop, and
    neither shows the invoker's, anyio's or the SDK's frames before it.
    """
    options: dict[str, Any] = {"mode": "legacy"} if mode == "legacy" else {}
    if transport == "stdio":
        log = tmp_path / "stderr.log"
        with log.open("w") as errlog:
            async with Client(stdio_client(stdio(SERVER), errlog=errlog), **options) as client:
                answers = await crash_each(client)
        logged = log.read_text()
    else:
        offset = http_server.log.stat().st_size
        async with Client(http_server.url, **options) as client:
            answers = await crash_each(client)
        logged = http_server.logged_since(offset)
    hidden = (-32603, "Internal error", None)
    assert answers == {
        "static read": hidden,
        "template read": hidden,
        "prompt": hidden,
        "completion": hidden[:2],
        "crashing_tool": (True, "Error executing tool crashing_tool"),
        "crashing_async_tool": (True, "Error executing tool crashing_async_tool"),
    }
    lines = logged.splitlines()
    first_frames = [lines[i + 1] for i, line in enumerate(lines) if line.startswith("Traceback")]
    assert first_frames == [
        f'  File "{SERVER}", line {line_of(code, name)}, in {name}' for name, code in CRASHES
    ]
    assert sum(line == "KeyError: 'secret'" for line in lines) == len(CRASHES)
    # Each crash's log line names the request and says what the client was told instead.
    for request in (
        "resources/read 'broken://static'",
        "resources/read 'crash://secret'",
        "prompts/get 'crashing'",
        "completion/complete 'crashing'",
    ):
        assert f"{request} failed; the client is told only 'Internal error'" in logged
    for tool in ("crashing_tool", "crashing_async_tool"):
        assert (
            f"tool {tool!r} raised; the client is told only 'Error executing tool {tool}'" in logged
        )


def line_of(code: str, function: str) -> int:
    """The line of the failing server that holds ``code`` in ``function``."""
    lines = SERVER.read_text().splitlines()
    header = re.compile(rf"(async )?def {function}\(")
    start = next(n for n, text in enumerate(lines) if header.match(text))
    return next(n for n, text in enumerate(lines[start:], start + 1) if code in text)


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
