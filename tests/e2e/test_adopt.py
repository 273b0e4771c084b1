"""An existing SDK MCPServer app served by ``mcp-core run`` over stdio, its code unchanged."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext

ROOT = Path(__file__).resolve().parents[2]
SDK_APP = ROOT / "examples" / "adopt" / "everything_sdk.py"
MCP_CORE = Path(sys.executable).with_name("mcp-core")

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


async def sampling(
    context: ClientRequestContext, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    """A model that answers 'forty-two'."""
    content = types.TextContent(type="text", text="forty-two")
    return types.CreateMessageResult(role="assistant", content=content, model="m")


def text(result: types.CallToolResult) -> str:
    """The first text block of a result."""
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_sdk_app_over_stdio(mode: str) -> None:
    """Tools with Context (logging, progress, the lifespan), resources, a template, prompts."""
    logs: list[object] = []
    reports: list[float] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(progress)

    target = StdioServerParameters(
        command=str(MCP_CORE), args=["run", str(SDK_APP)], cwd=ROOT, env=dict(os.environ)
    )
    async with Client(
        target, mode=mode, sampling_callback=sampling, logging_callback=on_log, log_level="debug"
    ) as client:
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
    assert logs == ["Tool execution started", "Tool processing data", "Tool execution completed"]
    assert reports == [0, 50, 100]
    assert served.structured_content == {"test_tool_with_logging": 1, "test_tool_with_progress": 1}
    assert binary.contents[0].mime_type == "image/png"
    assert '"id": "9"' in templated.contents[0].text  # type: ignore[union-attr]  # text contents
    assert prompt.messages[0].content.text == "Prompt with arguments: arg1='a', arg2='b'"  # type: ignore[union-attr]  # text
    if sampled is not None:
        assert text(sampled) == "LLM response: forty-two"
