"""Fixtures for the consumer examples: each served as its documented command runs it."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from tests.e2e.conftest import free_port, serving, serving_http

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

MODES = ("auto", "legacy")
"""The official client's default mode (negotiates 2026-07-28) and its legacy mode (2025-11-25)."""


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    """Each test runs once per client mode."""
    value: str = request.param
    return value


@pytest.fixture
def serve_http() -> Callable[..., AbstractContextManager[str]]:
    """``mcp-core run TARGET --transport http`` on a free loopback port (a fresh server per use)."""
    return serving_http


@contextmanager
def running_script(
    script: Path, *arguments: str, env: Mapping[str, str] | None = None
) -> Iterator[str]:
    """``python SCRIPT --port N ARGUMENTS`` on a free loopback port, as its docs page says; yields its URL."""
    port = free_port()
    command = [sys.executable, str(script), "--port", str(port), *arguments]
    with serving(command, port, {**os.environ, **(env or {})}):
        yield f"http://127.0.0.1:{port}"


async def send_call(
    client: Client, name: str, arguments: dict[str, Any] | None = None
) -> types.CallToolResult:
    """``tools/call`` sent as is (no ``tools/list`` first, unlike ``client.call_tool``).

    The official client lists every tool after a call to check structured content against output
    schemas, which loads every source; this shows what the call alone costs.
    """
    request = types.CallToolRequest(
        params=types.CallToolRequestParams(name=name, arguments=arguments)
    )
    return await client.session.send_request(request, types.CallToolResult)


async def call(client: Client, name: str, arguments: dict[str, Any] | None = None) -> Any:
    """:func:`send_call`, for a call that succeeds: its text, JSON-decoded."""
    result = await send_call(client, name, arguments)
    assert not result.is_error, result
    return json.loads(text(result))


def text(result: types.CallToolResult | types.GetPromptResult | types.ReadResourceResult) -> str:
    """The first text of a tool result, prompt or resource read."""
    if isinstance(result, types.GetPromptResult):
        content: object = result.messages[0].content
    elif isinstance(result, types.ReadResourceResult):
        content = result.contents[0]
    else:
        content = result.content[0]
    assert isinstance(content, types.TextContent | types.TextResourceContents), content
    return content.text
