"""FastMCPSource: a fastmcp server served through mcp-core, its Context and lifespan working."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from fastmcp import Context, FastMCP

from mcp_core import App
from mcp_core.bridges import FastMCPSource
from tests.clients import Inbox

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def fast_server(events: list[str]) -> Any:
    """An existing fastmcp app: a tool with Context, a resource, a prompt, a lifespan."""

    @asynccontextmanager
    async def lifespan(server: Any) -> AsyncIterator[dict[str, str]]:
        events.append("start")
        yield {"db": "open"}
        events.append("stop")

    server = FastMCP("fast", lifespan=lifespan)

    @server.tool
    async def greet(name: str, ctx: Context) -> str:
        """Greet after asking the user to confirm."""
        await ctx.info(f"greeting {name}")
        await ctx.report_progress(1, 2)
        answer = await ctx.elicit("confirm?", response_type=bool)
        return f"hello {name} ({answer.action})"

    @server.resource("fast://data")
    def data() -> str:
        """Some data."""
        return "data!"

    @server.prompt
    def ask(topic: str) -> str:
        """A prompt."""
        return f"tell me about {topic}"

    return server


class TestFastMCPSource:
    """Listing, calls with relays, reads, prompts; the lifespan runs with the app."""

    async def test_served_through_an_app(self) -> None:
        """The official client sees fastmcp's elements; logs, progress and elicitation relayed."""
        events: list[str] = []
        app = App("new")
        app.add_source(FastMCPSource(fast_server(events)))
        inbox = Inbox(form={"value": True})  # a user who accepts
        reports: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            reports.append(progress)

        async with inbox.client(app.server.lowlevel, mode="legacy") as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            greeted = await client.call_tool(
                "greet", {"name": "Ann"}, progress_callback=on_progress
            )
            data = await client.read_resource("fast://data")
            prompt = await client.get_prompt("ask", {"topic": "bees"})
        assert tools == {"greet"}
        assert greeted.content[0].text == "hello Ann (accept)"  # type: ignore[union-attr]  # text
        assert reports == [1]
        assert any("greeting Ann" in str(entry) for entry in inbox.logs)
        assert data.contents[0].text == "data!"  # type: ignore[union-attr]  # text
        assert prompt.messages[0].content.text == "tell me about bees"  # type: ignore[union-attr]  # text
        assert events[0] == "start"
        assert events[-1] == "stop"

    def test_refuses_other_servers(self) -> None:
        """Only FastMCP servers."""
        with pytest.raises(TypeError, match="MCPServerSource"):
            FastMCPSource(object())

    def test_fastmcp_is_imported_only_when_used(self) -> None:
        """Importing the bridges (and the whole package) does not import fastmcp."""
        code = "import sys, mcp_core.bridges, mcp_core.app; print('fastmcp' in sys.modules)"
        out = subprocess.run(  # noqa: S603 -- this interpreter, a fixed program
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == "False"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_its_middleware_denies_adopted_as_natively(mode: str) -> None:
    """A fastmcp middleware refusing a tool refuses it identically once adopted."""
    from fastmcp.exceptions import ToolError
    from fastmcp.server.middleware import Middleware
    from mcp import Client

    class Deny(Middleware):
        async def on_call_tool(self, context: Any, call_next: Any) -> Any:
            if context.message.name == "secret":
                raise ToolError("denied by policy")
            return await call_next(context)

    server = FastMCP("guarded", middleware=[Deny()])

    @server.tool
    def secret() -> str:
        """Kept to itself."""
        return "the secret"

    @server.tool
    def public() -> str:
        """For anyone."""
        return "public"

    app = App("guarded")
    app.add_source(FastMCPSource(server))
    answers = []
    for target in (server._mcp_server, app.server.lowlevel):
        async with Client(target, mode=mode) as client:
            results = [await client.call_tool(name, {}) for name in ("secret", "public")]
        answers.append([(r.is_error, r.content[0].text) for r in results])  # type: ignore[union-attr]  # text
    assert answers[0] == answers[1] == [(True, "denied by policy"), (False, "public")]


@pytest.mark.parametrize("masked", [False, True])
async def test_its_crashes_answered_as_natively(masked: bool) -> None:
    """A fastmcp read that crashes is answered as fastmcp answers it alone (docs/adopt.md).

    fastmcp sends the exception's text unless ``mask_error_details=True``; adopted, the same.
    """
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    server = FastMCP("crashing", mask_error_details=masked)

    @server.resource("fast://crash")
    def crash() -> str:
        """Fails by accident."""
        return {"a": "b"}["secret"]

    app = App("adopting")
    app.add_source(FastMCPSource(server))
    answers = []
    for target in (server._mcp_server, app.server.lowlevel):
        async with Client(target, mode="legacy") as client:
            with pytest.raises(MCPError) as refused:
                await client.read_resource("fast://crash")
        answers.append((refused.value.error.code, refused.value.error.message))
    shown = "" if masked else ": 'secret'"
    assert answers[0] == answers[1] == (-32603, f"Error reading resource 'fast://crash'{shown}")
