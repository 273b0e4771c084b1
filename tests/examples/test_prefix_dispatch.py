"""examples/prefix_dispatch end to end: a call builds only the plugin its prefix names; roles."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.clients import bearer, call, send_call, stdio, tool_names
from tests.examples.conftest import EXAMPLES, running_script

SERVER = EXAMPLES / "prefix_dispatch" / "ai_mcp_server.py"
ADMIN, EDITOR = secrets.token_urlsafe(16), secrets.token_urlsafe(16)

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


@pytest.fixture
def url() -> Iterator[str]:
    """A fresh server per test (what it instantiated is the point), tokens for admin and editor."""
    with running_script(SERVER, env={"SITE_TOKENS": f"{ADMIN}=admin,{EDITOR}=editor"}) as base:
        yield f"{base}/mcp"


def texts(result: types.CallToolResult) -> list[str]:
    """The text of each content block of a result that succeeded."""
    assert not result.is_error, result
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


@asynccontextmanager
async def over_stdio(user: str, mode: str) -> AsyncIterator[Client]:
    """``mcp-core run examples/prefix_dispatch/ai_mcp_server.py`` as ``SITE_USER=user``."""
    async with Client(stdio(SERVER, env={"SITE_USER": user}), mode=mode) as client:
        yield client


async def test_a_call_builds_only_the_plugin_its_prefix_names_over_http(
    url: str, mode: str
) -> None:
    """content_search builds the content plugin alone; the list is filtered by role."""
    async with (
        bearer(url, ADMIN, mode=mode) as admin,
        bearer(url, EDITOR, mode=mode) as editor,
    ):
        found = texts(await send_call(editor, "content_search", {"query": "wel"}))
        built = await call(editor, "plugins_instantiated")
        with pytest.raises(MCPError) as refused:
            await editor.call_tool("users_list", {})
        editor_tools = await tool_names(editor)
        admin_tools = await tool_names(admin)
        accounts = texts(await send_call(admin, "users_list"))
    assert found == ["Welcome"]
    assert built == ["content"]  # the users plugin was never instantiated
    assert (refused.value.code, refused.value.message) == (-32602, "Unknown tool: users_list")
    assert editor_tools == {"content_search", "content_count", "plugins_instantiated"}
    assert admin_tools == editor_tools | {"users_list"}
    assert accounts == ["admin", "editor"]


async def test_prefix_dispatch_over_stdio(mode: str) -> None:
    """Over stdio as the editor: the same dispatch, the same role filter."""
    async with over_stdio("editor", mode) as editor:
        counted = await send_call(editor, "content_count")
        built = await call(editor, "plugins_instantiated")
        names = await tool_names(editor)
    assert not counted.is_error
    assert built == ["content"]
    assert names == {"content_search", "content_count", "plugins_instantiated"}
