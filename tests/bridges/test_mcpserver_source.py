"""MCPServerSource: an SDK MCPServer's elements, converted, with calls going back to it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.shared.exceptions import MCPError

from mcp_core import App
from mcp_core.bridges import MCPServerSource
from mcp_core.elements import ElementKind, Tool
from mcp_core.errors import SourceUnavailableError
from mcp_core.handlers import Invoker
from mcp_core.handlers.testing import RecordingGateway
from mcp_core.sources import PrefixedSource

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


@asynccontextmanager
async def lifespan(server: MCPServer[dict[str, int]]) -> AsyncIterator[dict[str, int]]:
    """A counter shared by the server's calls."""
    yield {"calls": 0}


def legacy_server() -> MCPServer[dict[str, int]]:
    """An existing SDK app: a tool with Context, a resource, a template, a prompt, a lifespan."""
    mcp: MCPServer[dict[str, int]] = MCPServer("legacy", lifespan=lifespan)

    @mcp.tool()
    async def count(step: int, ctx: Context[dict[str, int], Any]) -> int:
        """Add ``step`` to the counter."""
        await ctx.info(f"adding {step}")
        state = ctx.request_context.lifespan_context
        state["calls"] += step
        return state["calls"]

    @mcp.tool()
    def refuse() -> str:
        """Always refuse."""
        raise ToolError("not today")

    @mcp.resource("data://config", mime_type="application/json")
    def config() -> str:
        """The configuration."""
        return '{"a": 1}'

    @mcp.resource("data://broken")
    def broken() -> str:
        """A resource that fails on purpose."""
        raise ResourceError("the disk is gone")

    @mcp.resource("data://items/{item}")
    def item(item: str) -> str:
        """One item."""
        return f"item {item}"

    @mcp.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello {name}"

    @mcp.completion()  # type: ignore[no-untyped-call, untyped-decorator]  # untyped in the SDK
    async def complete(
        ref: types.PromptReference | types.ResourceTemplateReference,
        argument: types.CompletionArgument,
        context: types.CompletionContext | None,
    ) -> types.Completion:
        return types.Completion(values=[f"{argument.value}-1", f"{argument.value}-2"])

    return mcp


class TestDefinitions:
    """The catalogue is the server's own listing, converted."""

    async def test_provide(self) -> None:
        """Kinds answer without providing; each definition equals the SDK's listing."""
        server = legacy_server()
        source = MCPServerSource(server, tags={"legacy"})
        collection = await source.provide()
        assert source.kinds() == ElementKind.ALL
        listed = {tool.name: tool for tool in await server.list_tools()}
        tools = [e.definition for e in collection if isinstance(e.definition, Tool)]
        assert {tool.name for tool in tools} == set(listed)
        for tool in tools:
            wire = listed[tool.name].model_dump(by_alias=True, mode="json", exclude_none=True)
            assert tool.to_wire() == wire
        assert all(element.tags == {"legacy"} for element in collection)
        assert await source.provide() == collection

    def test_not_an_mcpserver(self) -> None:
        """Anything else is refused with the way out."""
        with pytest.raises(TypeError, match="FastMCPSource"):
            MCPServerSource(object())  # type: ignore[arg-type]  # what is being refused


class TestCalls:
    """Calls go to the server's own methods, with mcp-core's Context."""

    async def test_lifespan_must_run(self) -> None:
        """A server with a lifespan that was not entered fails clearly, then works once running."""
        source = MCPServerSource(legacy_server())
        element = (await source.provide()).get(
            Tool(name="count", input_schema={"type": "object"}).ref
        )
        assert element is not None
        gateway = RecordingGateway()
        with pytest.raises(SourceUnavailableError, match="is not running"):
            source.context(gateway)
        async with source.running():
            result = await Invoker().call_tool(element, {"step": 2}, gateway)
        assert result["structuredContent"] == {"result": 2}
        assert [log.data for log in gateway.logs] == ["adding 2"]

    async def test_through_an_app_prefixed(self) -> None:
        """Served under a prefix: calls, reads (the template's URI rebuilt), prompts, completion."""
        app = App("new")
        app.add_source(PrefixedSource(MCPServerSource(legacy_server()), "old"))
        async with Client(app.server.lowlevel, mode="legacy") as client:
            first = await client.call_tool("old_count", {"step": 1})
            second = await client.call_tool("old_count", {"step": 3})
            refused = await client.call_tool("old_refuse", {})
            config = await client.read_resource("old+data://config")
            item = await client.read_resource("old+data://items/42")
            greeting = await client.get_prompt("old_greet", {"name": "Ann"})
            completion = await client.complete(
                types.ResourceTemplateReference(type="ref/resource", uri="old+data://items/{item}"),
                {"name": "item", "value": "x"},
            )
            with pytest.raises(MCPError) as failed:
                await client.read_resource("old+data://broken")
        assert (first.structured_content, second.structured_content) == (
            {"result": 1},
            {"result": 4},
        )
        assert refused.is_error
        assert refused.content[0].text == "Error executing tool refuse: not today"  # type: ignore[union-attr]  # text
        assert config.contents[0].text == '{"a": 1}'  # type: ignore[union-attr]  # text
        assert str(item.contents[0].uri) == "old+data://items/42"
        assert item.contents[0].text == "item 42"  # type: ignore[union-attr]  # text
        assert greeting.messages[0].content.text == "Hello Ann"  # type: ignore[union-attr]  # text
        assert completion.completion.values == ["x-1", "x-2"]
        assert "the disk is gone" in failed.value.message


class TestAdoption:
    """What adoption keeps, and what it refuses at once, saying why."""

    def test_handlers_that_would_never_run_are_refused(self) -> None:
        """A custom method, a replaced list, a notification handler: each named, at adoption."""
        server: MCPServer[Any] = MCPServer("custom")

        async def custom(ctx: Any, params: Any) -> dict[str, Any]:
            return {}

        async def listing(ctx: Any, params: Any) -> types.ListToolsResult:
            return types.ListToolsResult(tools=[])

        async def changed(ctx: Any, params: Any) -> None:
            return None

        lowlevel = server._lowlevel_server
        lowlevel.add_request_handler("x/custom", types.RequestParams, custom)
        lowlevel.add_request_handler("tools/list", types.PaginatedRequestParams, listing)
        lowlevel.add_notification_handler(
            "notifications/roots/list_changed", types.NotificationParams, changed
        )
        with pytest.raises(ValueError, match="cannot be adopted as it is") as refused:
            MCPServerSource(server)
        message = str(refused.value)
        assert "'x/custom'" in message
        assert "tools/list handler was replaced" in message
        assert "'notifications/roots/list_changed'" in message
        assert "MCPServer(middleware=[...])" in message

    async def test_a_handler_added_after_adoption_fails_the_next_provide(self) -> None:
        """Added later, it is refused when the server is next provided (a source failure)."""
        server = legacy_server()
        source = MCPServerSource(server)

        async def custom(ctx: Any, params: Any) -> dict[str, Any]:
            return {}

        server._lowlevel_server.add_request_handler("x/later", types.RequestParams, custom)
        with pytest.raises(ValueError, match="'x/later'"):
            await source.provide()

    async def test_middleware_added_later_runs_too(self) -> None:
        """The chain is read per request: ``server.middleware.append`` after adoption counts."""
        server = legacy_server()
        app = App("new")
        app.add_source(MCPServerSource(server))
        seen: list[str] = []

        async def record(ctx: Any, call_next: Any) -> Any:
            seen.append(ctx.method)
            result = await call_next(ctx)
            if ctx.method == "prompts/get":
                result.messages[0].content.text += "!"
            return result

        server.middleware.append(record)
        async with Client(app.server.lowlevel) as client:
            greeting = await client.get_prompt("greet", {"name": "Ann"})
            await client.read_resource("data://config")
            await client.call_tool("refuse", {})
            await client.complete(
                types.PromptReference(type="ref/prompt", name="greet"),
                {"name": "name", "value": "A"},
            )
        assert greeting.messages[0].content.text == "Hello Ann!"  # type: ignore[union-attr]  # text
        assert seen == ["prompts/get", "resources/read", "tools/call", "completion/complete"]

    async def test_a_native_tool_raising_an_sdk_protocol_error_answers_with_it(self) -> None:
        """An mcp-core tool raising the SDK's MCPError answers with it, as MCPServer's would."""
        from mcp.shared.exceptions import UrlElicitationRequiredError

        app = App("native")

        @app.tool
        def login() -> str:
            """Sign in first."""
            params = types.ElicitRequestURLParams(
                message="Sign in", url="https://example.org/in", elicitation_id="e1"
            )
            raise UrlElicitationRequiredError([params])

        async with Client(app.server.lowlevel, mode="legacy") as client:
            with pytest.raises(MCPError) as raised:
                await client.call_tool("login", {})
        assert raised.value.error.code == -32042
        assert raised.value.error.data["elicitations"][0]["url"] == "https://example.org/in"

    async def test_a_handler_it_installed_for_a_routed_request_is_reached(self) -> None:
        """A ``tools/call`` handler the server put on its low-level server answers the call."""
        server = legacy_server()
        lowlevel = server._lowlevel_server
        original = lowlevel.get_request_handler("tools/call")
        assert original is not None

        async def stamped(ctx: Any, params: types.CallToolRequestParams) -> Any:
            result = await original.handler(ctx, params)
            assert isinstance(result, types.CallToolResult)
            result.content.append(types.TextContent(type="text", text="(stamped)"))
            return result

        lowlevel.add_request_handler("tools/call", types.CallToolRequestParams, stamped)
        app = App("new")
        app.add_source(MCPServerSource(server))
        async with Client(app.server.lowlevel, mode="legacy") as client:
            refused = await client.call_tool("refuse", {})
        assert [block.text for block in refused.content] == [  # type: ignore[union-attr]  # text
            "Error executing tool refuse: not today",
            "(stamped)",
        ]
