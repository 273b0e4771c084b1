"""An existing SDK MCPServer app served by ``mcp-core run`` over stdio, its code unchanged."""

from __future__ import annotations

import pytest

from tests.clients import ROOT, Inbox, stdio, text

SDK_APP = ROOT / "examples" / "adopt" / "everything_sdk.py"

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_sdk_app_over_stdio(mode: str) -> None:
    """Tools with Context (logging, progress, the lifespan), resources, a template, prompts."""
    inbox = Inbox()
    reports: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(progress)

    async with inbox.client(stdio(SDK_APP), mode=mode, log_level="debug") as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        logged = await client.call_tool("test_tool_with_logging")
        await client.call_tool("test_tool_with_progress", progress_callback=on_progress)
        served = await client.call_tool("calls_served")
        binary = await client.read_resource("test://static-binary")
        templated = await client.read_resource("test://template/9/data")
        prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        sampled = (
            await client.call_tool("test_sampling", {"prompt": "?"}) if mode == "legacy" else None
        )
    assert {"test_simple_text", "test_sampling", "calls_served"} <= tools
    assert text(logged) == "Tool with logging executed successfully"
    assert inbox.logs == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert reports == [0, 50, 100]
    assert served.structured_content == {"test_tool_with_logging": 1, "test_tool_with_progress": 1}
    assert binary.contents[0].mime_type == "image/png"
    assert '"id": "9"' in templated.contents[0].text  # type: ignore[union-attr]  # text contents
    assert prompt.messages[0].content.text == "Prompt with arguments: arg1='a', arg2='b'"  # type: ignore[union-attr]  # text
    if sampled is not None:
        assert text(sampled) == "LLM response: forty-two"
