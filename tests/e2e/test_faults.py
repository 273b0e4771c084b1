"""The fault suite: every fault the isolation promise covers, over stdio and streamable HTTP, in both protocol eras.

``tests/fixtures/faulty_app.py`` declares one of every fault next to healthy elements; it is
served with ``mcp-core run`` (a real subprocess) and driven with the official ``mcp`` client,
handshake era (``mode="legacy"``, 2025-11-25) and 2026-07-28 (the default). Each fault must cost
only itself: the healthy elements stay listed and callable, and the server stays up.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION

from tests.clients import ROOT, WAIT, Inbox, stdio, text, tool_names
from tests.e2e.conftest import run_http, stop

FAULTY = ROOT / "tests" / "fixtures" / "faulty_app.py"

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

HEALTHY_TOOLS = {"echo", "add", "dup", "fine", "also_fine", "from_file"}
BROKEN_TOOLS = {"bad name!", "unresolvable", "deep", "invalid_schema", "bad_regex", "never"}


def start_http(flag: Path) -> tuple[str, subprocess.Popen[bytes]]:
    """faulty_app.py over HTTP, its ``ComesBack`` source waiting for ``flag``."""
    return run_http(FAULTY, env={"FAULTY_APP_FLAG": str(flag)})


@pytest.fixture(scope="module")
def shared_http(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """One HTTP server for the tests that do not change its state."""
    url, process = start_http(tmp_path_factory.mktemp("flag") / "never")
    try:
        yield url, process
    finally:
        stop(process)


@asynccontextmanager
async def connect(
    transport: str,
    era: str,
    request: pytest.FixtureRequest,
    *,
    flag: Path | None = None,
    inbox: Inbox | None = None,
) -> AsyncIterator[Client]:
    """The official client of faulty_app.py over ``transport``, in ``era``.

    stdio runs a fresh server per client; HTTP uses the shared server unless ``flag`` is given,
    in which case a fresh one is started for this client alone.
    """
    process: subprocess.Popen[bytes] | None = None
    target: Any
    if transport == "stdio":
        target = stdio(FAULTY, env={"FAULTY_APP_FLAG": str(flag or ROOT / "no-such-flag")})
    elif flag is None:
        target = request.getfixturevalue("shared_http")[0] + "/mcp"
    else:
        url, process = start_http(flag)
        target = url + "/mcp"
    options: dict[str, Any] = {"mode": "legacy"} if era == "legacy" else {}
    if inbox is not None:
        options["message_handler"] = inbox.on_message
    try:
        async with Client(target, **options) as client:
            expected = LATEST_HANDSHAKE_VERSION if era == "legacy" else LATEST_MODERN_VERSION
            assert client.protocol_version == expected
            yield client
    finally:
        if process is not None:
            stop(process)


def server_alive(transport: str, request: pytest.FixtureRequest) -> None:
    """Over HTTP, the shared server process is still running (stdio: the session still answers)."""
    if transport == "http":
        assert request.getfixturevalue("shared_http")[1].poll() is None


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("era", ["legacy", "modern"])
class TestFaults:
    """Each fault against the real transports, in both protocol eras."""

    async def test_broken_declarations_cost_only_themselves(
        self, transport: str, era: str, request: pytest.FixtureRequest
    ) -> None:
        """Bad names, templates, bindings, annotations and duplicates skip themselves, nothing more.

        Declared with @app, discovered from a package, or read from a collection file: the healthy
        elements of the same source are listed and answer.
        """
        async with connect(transport, era, request) as client:
            names = await tool_names(client)
            templates = (await client.list_resource_templates()).resource_templates
            echoed = await client.call_tool("echo", {"text": "hi"})
            first = await client.call_tool("dup", {})
            discovered = await client.call_tool("fine", {"x": 4})
            from_file = await client.call_tool("from_file", {"a": 2, "b": 3})
            prompt = await client.get_prompt("greet", {"name": "Ada"})
            with pytest.raises(MCPError) as unknown:
                await client.call_tool("bad name!", {})
        assert names >= HEALTHY_TOOLS
        assert not names & BROKEN_TOOLS
        assert templates == []  # both of the app's templates were broken
        assert (text(echoed), text(first), text(discovered), text(from_file)) == (
            "hi",
            "first",
            "4",
            "5",
        )
        assert prompt.messages[0].content.text == "Hello Ada"  # type: ignore[union-attr]  # a text message
        assert unknown.value.code == -32602

    async def test_one_element_cannot_break_a_request(
        self, transport: str, era: str, request: pytest.FixtureRequest
    ) -> None:
        """A ~600-deep schema, an invalid schema and a bad regex are skipped; lists and calls work."""
        async with connect(transport, era, request) as client:
            names = await tool_names(client)
            called = await client.call_tool("add", {"a": 1, "b": 2})
            refused = []
            for name in ("deep", "invalid_schema", "bad_regex"):
                with pytest.raises(MCPError) as caught:
                    await client.call_tool(name, {"a": "x"})
                refused.append((caught.value.code, caught.value.message))
        assert {"deep", "invalid_schema", "bad_regex"}.isdisjoint(names)
        assert text(called) == "3"
        assert refused == [
            (-32602, "Unknown tool: deep"),
            (-32602, "Unknown tool: invalid_schema"),
            (-32602, "Unknown tool: bad_regex"),
        ]

    async def test_one_handler_cannot_kill_the_server(
        self, transport: str, era: str, request: pytest.FixtureRequest
    ) -> None:
        """SystemExit, BaseException subclasses, lone surrogates and NaN fail only their own call."""
        async with connect(transport, era, request) as client:
            exits = await client.call_tool("exits", {})
            custom = await client.call_tool("base_exception", {})
            surrogate = await client.call_tool("lone_surrogate", {})
            nan = await client.call_tool("not_a_number", {})
            with pytest.raises(MCPError) as read:
                await client.read_resource("app://exits")
            with pytest.raises(MCPError) as prompt:
                await client.get_prompt("prompt_exits", {})
            after = await client.call_tool("echo", {"text": "still here"})
        assert (exits.is_error, text(exits)) == (True, "Error executing tool exits")
        assert (custom.is_error, text(custom)) == (True, "Error executing tool base_exception")
        assert surrogate.is_error is True
        assert text(surrogate).startswith(
            "Error executing tool lone_surrogate: its result cannot be sent as JSON "
            "($.content[0].text: the string holds a lone surrogate"
        )
        assert nan.is_error is True
        assert "$.structuredContent.result: nan is not a JSON number" in text(nan)
        assert (read.value.code, read.value.message) == (-32603, "Internal error")
        assert (prompt.value.code, prompt.value.message) == (-32603, "Internal error")
        assert text(after) == "still here"
        server_alive(transport, request)

    async def test_a_hanging_source_blocks_nothing(
        self, transport: str, era: str, request: pytest.FixtureRequest
    ) -> None:
        """A provide() that never returns costs its own elements: every list and call answers."""
        async with connect(transport, era, request) as client:
            with anyio.fail_after(30):  # a guard against hanging, not a timing assertion
                names = await tool_names(client)
                resources = (await client.list_resources()).resources
                prompts = (await client.list_prompts()).prompts
                called = await client.call_tool("echo", {"text": "x"})
                again = await tool_names(client)
        assert names == again >= HEALTHY_TOOLS
        assert {r.uri for r in resources} == {"app://note", "app://exits"}
        assert {p.name for p in prompts} >= {"greet"}
        assert text(called) == "x"

    async def test_invalid_arguments_are_tool_errors(
        self, transport: str, era: str, request: pytest.FixtureRequest
    ) -> None:
        """SEP-1303: arguments failing the input schema are isError results with the message."""
        async with connect(transport, era, request) as client:
            wrong_type = await client.call_tool("add", {"a": "one", "b": 2})
            missing = await client.call_tool("add", {"a": 1})
            with pytest.raises(MCPError) as unknown:
                await client.call_tool("no_such_tool", {})
        assert wrong_type.is_error is True
        assert (
            text(wrong_type) == "tool 'add': invalid arguments: /a: 'one' is not of type 'integer'"
        )
        assert missing.is_error is True
        assert text(missing) == "tool 'add': invalid arguments: /: 'b' is a required property"
        assert (unknown.value.code, unknown.value.message) == (-32602, "Unknown tool: no_such_tool")

    async def test_down_at_cold_start_comes_back(
        self, transport: str, era: str, request: pytest.FixtureRequest, tmp_path: Path
    ) -> None:
        """A source down at cold start (no cache) is retried; when it answers, clients hear of it."""
        flag = tmp_path / "backend-up"
        inbox = Inbox()
        async with connect(transport, era, request, flag=flag, inbox=inbox) as client:
            before = await tool_names(client)
            with anyio.fail_after(30):  # a guard against hanging, not a timing assertion
                if era == "legacy":
                    flag.touch()
                    await inbox.wait_for("notifications/tools/list_changed")
                else:
                    async with client.listen(tools_list_changed=True) as events:
                        flag.touch()
                        event = await anext(aiter(events))
                    assert type(event).__name__ == "ToolsListChanged"
            after = await tool_names(client)
            called = await client.call_tool("came_back", {"text": "back"})
        assert "came_back" not in before
        assert after == before | {"came_back"}
        assert text(called) == "back"


def test_health_endpoint(shared_http: tuple[str, Any]) -> None:
    """GET /healthz: 200 once loaded (degraded sources named), 503 with ?strict; JSON per source."""
    url = shared_http[0]
    status, body = 503, dict[str, Any](ready=False)
    deadline = time.monotonic() + WAIT
    while not body["ready"]:  # 503 while the first load runs (the Hanging source takes 0.5 s)
        assert time.monotonic() < deadline, body
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=30) as response:  # noqa: S310 -- our own loopback server
                status, body = response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            status, body = error.code, json.loads(error.read())
            time.sleep(0.05)
    try:
        urllib.request.urlopen(f"{url}/healthz?strict", timeout=30)  # noqa: S310 -- same
        strict = 200
    except urllib.error.HTTPError as error:
        strict = error.code
    assert status == 200
    assert strict == 503
    assert (body["status"], body["ready"]) == ("degraded", True)
    states = {s["source"]: s for s in body["sources"]}
    assert states["Hanging()"]["state"] == "down"
    assert states["Hanging()"]["lastError"] == "provide() did not finish within 0.5 s"
    assert states["ComesBack()"]["state"] == "down"
    assert states["ComesBack()"]["nextRetry"] is not None
    assert states["App('faulty').functions"]["state"] == "ok"
    assert states["App('faulty').functions"]["lastSuccess"] is not None
    assert set(states["Hanging()"]) == {
        "source",
        "priority",
        "state",
        "elements",
        "lastSuccess",
        "lastError",
        "lastErrorAt",
        "staleSince",
        "failures",
        "nextRetry",
    }
