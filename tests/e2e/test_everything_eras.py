"""examples/everything.py's sampling and elicitation tools with the official client in both eras.

The official conformance suite speaks only the handshake era; these run the same tools with the
client's default mode (2026-07-28: the questions travel in InputRequiredResult rounds) and its
legacy mode (2025-11-25: standalone requests), in memory, over stdio and over HTTP.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext

from mcp_core.cli._target import load_target

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "everything.py"
MCP_CORE = Path(sys.executable).with_name("mcp-core")

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


async def sampling(
    context: ClientRequestContext, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    """A model that answers every prompt with 'forty-two'."""
    content = types.TextContent(type="text", text="forty-two")
    return types.CreateMessageResult(role="assistant", content=content, model="m")


async def elicitation(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult:
    """A user who fills each form in with its defaults, or as ann."""
    assert isinstance(params, types.ElicitRequestFormParams)
    properties = params.requested_schema["properties"]
    defaults = {name: spec["default"] for name, spec in properties.items() if "default" in spec}
    return types.ElicitResult(
        action="accept", content=defaults or {"username": "ann", "email": "ann@example.org"}
    )


def client(transport: str, mode: str, request: pytest.FixtureRequest) -> Client:
    """The official client of examples/everything.py over ``transport`` in ``mode``."""
    target: Any
    if transport == "memory":
        target = load_target(str(EVERYTHING)).server.lowlevel
    elif transport == "stdio":
        target = StdioServerParameters(
            command=str(MCP_CORE), args=["run", str(EVERYTHING)], cwd=ROOT, env=dict(os.environ)
        )
    else:
        target = request.getfixturevalue("http_url")
    return Client(target, mode=mode, sampling_callback=sampling, elicitation_callback=elicitation)


def text_of(result: types.CallToolResult) -> str:
    """The first text block of a successful tool result."""
    assert not result.is_error, result
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
async def test_sampling_and_elicitation_in_both_eras(
    transport: str, mode: str, request: pytest.FixtureRequest
) -> None:
    """test_sampling and every elicitation tool get the client's answers in either era."""
    async with client(transport, mode, request) as connected:
        sampled = await connected.call_tool("test_sampling", {"prompt": "meaning?"})
        elicited = await connected.call_tool("test_elicitation", {"message": "who are you?"})
        defaults = await connected.call_tool("test_elicitation_sep1034_defaults", {})
    assert text_of(sampled) == "LLM response: forty-two"
    assert text_of(elicited) == (
        'User response: action=accept, content={"username": "ann", "email": "ann@example.org"}'
    )
    content = json.loads(text_of(defaults).partition("content=")[2])
    assert content == {
        "name": "John Doe",
        "age": 30,
        "score": 95.5,
        "status": "active",
        "verified": True,
    }
