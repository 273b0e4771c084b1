"""Progressive disclosure through the official client, in both eras, in process.

A disclosing app lists, to each session, its pinned tools, ``search_tools`` and ``call_tool``;
a search answers with the best tools' definitions among those the session may see; in a
handshake-era session the tools found join that session's list (``list_changed`` to it alone);
``call_tool`` calls any tool the session may see, and a hidden tool answers exactly as a missing
one, through search, call and list alike.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from bench.tool_catalogue import collection
from mcp_core.app import App
from mcp_core.elements import ElementCollection, ElementRef
from mcp_core.search import Disclosure
from mcp_core.sources import StaticSource
from mcp_core.visibility import SessionInfo, predicate
from tests.clients import Inbox, send_call, tool_names

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

DISCLOSURE = {"search_tools", "call_tool", "ping"}


@functools.cache
def _catalogue(size: int) -> ElementCollection:
    return collection(size)


def _app(size: int = 18_000, **options: Any) -> App:
    app = App("big", disclosure=Disclosure(pinned=["ping"], **options))

    @app.tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    app.add_source(StaticSource(_catalogue(size)))
    return app


def _found(result: types.CallToolResult) -> list[str]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert json.loads(text.text) == result.structured_content
    return [tool["name"] for tool in result.structured_content["tools"]]


async def test_a_handshake_session_lists_what_it_found_and_only_it_is_told() -> None:
    """Legacy era: found tools join the searching session's list; another session sees nothing."""
    app = _app()
    searcher, other = Inbox(), Inbox()
    async with (
        searcher.client(app.server.lowlevel, mode="legacy") as client,
        other.client(app.server.lowlevel, mode="legacy") as bystander,
    ):
        assert await tool_names(client) == DISCLOSURE
        result = await send_call(
            client, "search_tools", {"query": "send an email in gmail", "limit": 3}
        )
        found = _found(result)
        assert found[0] == "gmail_send_email"
        await searcher.wait_for("notifications/tools/list_changed")
        assert await tool_names(client) == DISCLOSURE | set(found)
        called = await send_call(client, "gmail_send_email", {"email_id": "e1"})
        assert not called.is_error
        # The other session heard nothing and lists what it did.
        assert "notifications/tools/list_changed" not in other.methods
        assert await tool_names(bystander) == DISCLOSURE
        with pytest.raises(MCPError, match="Unknown tool: gmail_send_email"):
            await send_call(bystander, "gmail_send_email", {"email_id": "e1"})
        # The same search again changes nothing, and says nothing.
        before = len(searcher.messages)
        assert (
            _found(
                await send_call(
                    client, "search_tools", {"query": "send an email in gmail", "limit": 3}
                )
            )
            == found
        )
        assert len(searcher.messages) == before


async def test_a_2026_client_searches_and_calls_through_call_tool() -> None:
    """2026-07-28: each request is its own session; the list stays small, call_tool calls."""
    app = _app()
    async with Inbox().client(app.server.lowlevel) as client:
        assert await tool_names(client) == DISCLOSURE
        found = _found(
            await send_call(client, "search_tools", {"query": "weather forecast in outlook"})
        )
        assert found[0].startswith("outlook_")
        assert "weather_forecast" in found[0]
        assert await tool_names(client) == DISCLOSURE
        called = await send_call(
            client, "call_tool", {"name": found[0], "arguments": {"note": "hi"}}
        )
        assert not called.is_error
        assert "note" in str(called.content)


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_hidden_tools_are_missing_through_search_and_call(mode: str) -> None:
    """A tool the base rule hides is never found, and call_tool answers for it as for a missing one."""
    app = _app()

    def rule(ref: ElementRef, session: SessionInfo) -> bool:
        return "gmail" not in ref.key

    app.visibility = predicate(rule)
    options = {"mode": "legacy"} if mode == "legacy" else {}
    async with Inbox().client(app.server.lowlevel, **options) as client:
        found = _found(
            await send_call(client, "search_tools", {"query": "gmail send email", "limit": 50})
        )
        assert found
        assert not any("gmail" in name for name in found)
        hidden = await send_call(client, "call_tool", {"name": "gmail_send_email", "arguments": {}})
        missing = await send_call(
            client, "call_tool", {"name": "gmail_send_emails", "arguments": {}}
        )
        assert hidden.is_error
        assert missing.is_error
        assert str(hidden.content).replace("gmail_send_email", "X") == str(missing.content).replace(
            "gmail_send_emails", "X"
        )
        assert "gmail_send_email" not in await tool_names(client)


async def test_a_session_keeps_at_most_max_active_found_tools() -> None:
    """The tools found longest ago leave a session's list first."""
    app = _app(max_active=3)
    async with Inbox().client(app.server.lowlevel, mode="legacy") as client:
        first = _found(await send_call(client, "search_tools", {"query": "invoice", "limit": 2}))
        second = _found(
            await send_call(client, "search_tools", {"query": "gmail weather", "limit": 2})
        )
        listed = await tool_names(client) - DISCLOSURE
        assert len(listed) == 3
        assert set(second) <= listed
        assert len(set(first) & listed) == 1


async def test_bad_searches_are_tool_errors_naming_the_bound() -> None:
    """A query too long is a tool error the model can read."""
    app = _app(size=100)
    async with Inbox().client(app.server.lowlevel, mode="legacy") as client:
        result = await send_call(client, "search_tools", {"query": "x" * 2000})
        assert result.is_error
        assert "at most 1000" in str(result.content)


def test_disclosure_refuses_bad_settings() -> None:
    """Bad settings name the field and the bound."""
    with pytest.raises(ValueError, match="limit must be at most 50"):
        Disclosure(limit=51)
    with pytest.raises(TypeError, match="not one string"):
        Disclosure(pinned="ping")
    with pytest.raises(TypeError, match=r"must be a mcp_core\.search\.Disclosure"):
        App("x", disclosure={"pinned": []})  # type: ignore[arg-type]


async def test_a_session_that_ends_is_forgotten_and_a_rule_change_unlists() -> None:
    """Found tools leave with their session; a tool the rule hides later leaves every list."""
    app = _app()
    disclosure = app.disclosure
    assert disclosure is not None
    async with Inbox().client(app.server.lowlevel, mode="legacy") as client:
        found = _found(
            await send_call(client, "search_tools", {"query": "gmail invoice", "limit": 2})
        )
        assert disclosure.sessions == 1
        assert set(found) <= await tool_names(client)
        app.visibility = predicate(lambda ref, session: ref.key != found[0])
        assert found[0] not in await tool_names(client)
    assert disclosure.sessions == 0


async def test_the_index_can_be_built_in_the_lifespan() -> None:
    """docs/large-catalogues.md: refreshing in the lifespan builds it before the first search."""
    built: list[int] = []

    @contextlib.asynccontextmanager
    async def lifespan(app: App) -> AsyncIterator[None]:
        if app.disclosure is not None:
            await app.disclosure.index.refresh()
            built.append(len(app.disclosure.index))
        yield

    app = App("warm", disclosure=Disclosure(), lifespan=lifespan)
    app.add_source(StaticSource(_catalogue(100)))
    async with Inbox().client(app.server.lowlevel, mode="legacy") as client:
        assert built == [100]
        assert _found(await send_call(client, "search_tools", {"query": "invoice"}))
