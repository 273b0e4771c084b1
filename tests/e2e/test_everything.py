"""examples/everything.py end to end with the official ``mcp`` client: in memory, stdio, HTTP."""

from __future__ import annotations

import mcp_types as types
import pytest
from mcp import Client

from tests.clients import Inbox, pages, text
from tests.e2e.conftest import PAGE_SIZE, everything

pytestmark = pytest.mark.filterwarnings(
    "ignore::mcp.shared.exceptions.MCPDeprecationWarning"
)  # handshake-era APIs


def connect(transport: str, request: pytest.FixtureRequest, inbox: Inbox) -> Client:
    """A handshake-era client of examples/everything.py over ``transport``."""
    return inbox.client(everything(transport, request), mode="legacy")


@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
class TestEverything:
    """Every request the example serves, over each transport."""

    async def test_lists_and_reads(self, transport: str, request: pytest.FixtureRequest) -> None:
        """Lists (all pages), a call, static and templated reads, a prompt and a completion."""
        inbox = Inbox()
        async with connect(transport, request, inbox) as client:
            tools = await pages(lambda c: client.list_tools(cursor=c), "tools")
            resources = await pages(lambda c: client.list_resources(cursor=c), "resources")
            templates = await pages(
                lambda c: client.list_resource_templates(cursor=c), "resource_templates"
            )
            prompts = await pages(lambda c: client.list_prompts(cursor=c), "prompts")
            simple = await client.call_tool("test_simple_text")
            static = await client.read_resource("test://static-text")
            binary = await client.read_resource("test://static-binary")
            templated = await client.read_resource("test://template/123/data")
            prompt = await client.get_prompt(
                "test_prompt_with_arguments", {"arg1": "a", "arg2": "b"}
            )
            ref = types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments")
            completion = await client.complete(ref, {"name": "arg1", "value": "te"})
        names = [t.name for t in tools]
        assert len(names) == len(set(names)) > PAGE_SIZE
        assert {"test_simple_text", "test_sampling", "json_schema_2020_12_tool"} <= set(names)
        assert all(t.description for t in tools)
        assert {r.uri for r in resources} == {
            "test://static-text",
            "test://static-binary",
            "test://watched-resource",
        }
        assert [t.uri_template for t in templates] == ["test://template/{id}/data"]
        assert len(prompts) == 4
        assert text(simple) == "This is a simple text response for testing."
        assert static.contents[0].text == "This is the content of the static text resource."  # type: ignore[union-attr]  # text contents
        assert binary.contents[0].mime_type == "image/png"
        assert '"id": "123"' in templated.contents[0].text  # type: ignore[union-attr]  # text contents
        assert prompt.messages[0].content.text == "Prompt with arguments: arg1='a', arg2='b'"  # type: ignore[union-attr]  # text
        assert completion.completion.values == ["test", "testValue1"]

    async def test_logging_progress_sampling_elicitation(
        self, transport: str, request: pytest.FixtureRequest
    ) -> None:
        """Logs honour setLevel; progress, sampling and elicitation reach the client during the call."""
        inbox = Inbox()
        reports: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            reports.append(progress)

        async with connect(transport, request, inbox) as client:
            await client.set_logging_level("warning")
            await client.call_tool("test_tool_with_logging")
            quiet = len(inbox.logs)
            await client.set_logging_level("debug")
            await client.call_tool("test_tool_with_logging")
            await client.call_tool("test_tool_with_progress", progress_callback=on_progress)
            sampled = await client.call_tool("test_sampling", {"prompt": "meaning?"})
            elicited = await client.call_tool("test_elicitation", {"message": "who are you?"})
        assert quiet == 0
        assert inbox.logs == [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ]
        assert reports == [0, 50, 100]
        assert text(sampled) == "LLM response: forty-two"
        assert text(elicited).startswith("User response: action=accept")
        assert "ann@example.org" in text(elicited)

    async def test_subscribe_and_list_changed(
        self, transport: str, request: pytest.FixtureRequest
    ) -> None:
        """A subscribed resource's update and a runtime registration are both announced."""
        inbox = Inbox()
        async with connect(transport, request, inbox) as client:
            await client.subscribe_resource("test://watched-resource")
            await client.call_tool("test_update_watched_resource", {"text": "new"})
            updated = await inbox.wait_for("notifications/resources/updated")
            watched = await client.read_resource("test://watched-resource")
            await client.unsubscribe_resource("test://watched-resource")
            await client.call_tool("test_register_tool", {"name": f"runtime_{transport}"})
            await inbox.wait_for("notifications/tools/list_changed")
            names = {t.name for t in await pages(lambda c: client.list_tools(cursor=c), "tools")}
            called = await client.call_tool(f"runtime_{transport}")
        assert updated.params.uri == "test://watched-resource"
        assert watched.contents[0].text == "new"  # type: ignore[union-attr]  # text contents
        assert f"runtime_{transport}" in names
        assert text(called) == f"I am runtime_{transport}, registered at runtime"
