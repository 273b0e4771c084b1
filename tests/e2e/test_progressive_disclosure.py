"""Progressive disclosure end to end: the official client, stdio and streamable HTTP, both eras.

``tests/e2e/servers/disclosure_server.py`` serves 4,000 tools with disclosure; the vault's
tools are hidden from everyone. Over each transport and in each era a client lists only the
disclosure tools, finds a tool with a natural query, and calls it: directly once it is listed
(handshake era: the session is told its list changed), through ``call_tool`` in either era. A
vault tool is never found, and ``call_tool`` answers for it as for a tool that does not exist.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from tests.clients import Inbox, send_call, stdio, text, tool_names
from tests.e2e._http import serve

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

SERVER = Path(__file__).with_name("servers") / "disclosure_server.py"
LISTED = {"ping", "search_tools", "call_tool"}


def _http_app() -> Any:
    spec = importlib.util.spec_from_file_location("disclosure_server", SERVER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.app.asgi()


@asynccontextmanager
async def _client(transport: str, mode: str, inbox: Inbox) -> AsyncIterator[Client]:
    options: dict[str, Any] = {"mode": "legacy"} if mode == "legacy" else {}
    if transport == "stdio":
        async with inbox.client(stdio(SERVER), **options) as client:
            yield client
        return
    with serve(_http_app()) as url:
        async with inbox.client(url, **options) as client:
            yield client


def _names(result: types.CallToolResult) -> list[str]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return [tool["name"] for tool in result.structured_content["tools"]]


@pytest.mark.parametrize("mode", ["legacy", "modern"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_find_a_tool_by_asking_and_call_it(transport: str, mode: str) -> None:
    """List the disclosure tools, search in words, call what was found."""
    inbox = Inbox()
    async with _client(transport, mode, inbox) as client:
        assert await tool_names(client) == LISTED
        found = _names(
            await send_call(client, "search_tools", {"query": "send an email draft in slack"})
        )
        assert found[0] == "slack_send_email_draft"
        assert len(found) == 5
        through = await send_call(
            client, "call_tool", {"name": found[0], "arguments": {"note": "hi"}}
        )
        assert text(through) == "slack_send_email_draft [('note', 'hi')]"
        if mode == "legacy":
            await inbox.wait_for("notifications/tools/list_changed")
            assert await tool_names(client) == LISTED | set(found)
            direct = await send_call(client, found[0], {"note": "hi"})
            assert text(direct) == text(through)
        else:
            assert await tool_names(client) == LISTED
        # The vault is missing: never found, and called it answers as no tool at all.
        vault = _names(await send_call(client, "search_tools", {"query": "vault", "limit": 50}))
        assert vault == []
        hidden = await send_call(client, "call_tool", {"name": "vault_send_email"})
        missing = await send_call(client, "call_tool", {"name": "vaulx_send_email"})
        assert hidden.is_error
        assert text(hidden).replace("vault", "V") == text(missing).replace("vaulx", "V")
