"""examples/discovery end to end: discovery, overrides of every kind, a SQLite scan cache.

Over stdio (``mcp-core run``) and streamable HTTP, with the official client in both eras. What the
server declares beats what is discovered, and what is discovered beats the product's built-in
defaults, for tools, resources, resource templates and prompts alike.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AbstractContextManager, asynccontextmanager
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client

from tests.clients import call, stdio, text
from tests.examples.conftest import EXAMPLES

SERVER = EXAMPLES / "discovery" / "helpdesk_server.py"
DISCOVERED = {"open_ticket", "search_articles"}
TRANSPORTS = ("stdio", "http")

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

ServeHttp = Callable[..., AbstractContextManager[str]]


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    """Each test runs over stdio and over streamable HTTP."""
    value: str = request.param
    return value


Helpdesk = Callable[[Path], AbstractAsyncContextManager[Client]]


@pytest.fixture
def helpdesk(transport: str, mode: str, serve_http: ServeHttp) -> Helpdesk:
    """Start the helpdesk over ``transport`` with its own cache folder (a fresh process per use)."""

    @asynccontextmanager
    async def started(cache: Path) -> AsyncIterator[Client]:
        env = {"HELPDESK_CACHE_DIR": str(cache), "HELPDESK_CACHE_SECRET": ""}  # its key file
        if transport == "stdio":
            async with Client(stdio(SERVER, env=env), mode=mode) as client:
                yield client
            return
        with serve_http(SERVER, env={**os.environ, **env}) as url:
            async with Client(url, mode=mode) as client:
                yield client

    return started


async def test_a_restart_skips_the_scan_and_imports_only_what_is_called(
    helpdesk: Helpdesk, tmp_path: Path
) -> None:
    """Cold: the scan imports every module (one is broken, and skipped). Warm: nothing until called."""
    async with helpdesk(tmp_path) as cold:
        cold_tools = {tool.name for tool in (await cold.list_tools()).tools}
        cold_status = await call(cold, "helpdesk_status")
        closed = await cold.call_tool("close_ticket", {"number": 101, "resolution": "new toner"})
    async with helpdesk(tmp_path) as warm:
        warm_tools = {tool.name for tool in (await warm.list_tools()).tools}
        listed = await call(warm, "helpdesk_status")
        found = await warm.call_tool("search_articles", {"query": "printer"})
        called = await call(warm, "helpdesk_status")
        # Overrides hold from the cache too: the server's template, the package's completion.
        ticket = text(await warm.read_resource("helpdesk://tickets/102"))
        numbers = await warm.complete(
            types.ResourceTemplateReference(uri="helpdesk://tickets/{number}"),
            {"name": "number", "value": "10"},
        )
    assert cold_tools == warm_tools == DISCOVERED | {"close_ticket", "helpdesk_status"}
    assert set(cold_status["imported"]) >= {"helpdesk_tools.tickets", "helpdesk_tools.search"}
    diagnostics = cold_status["diagnostics"]
    skipped = [line for line in diagnostics if line.startswith("[skipped]")]
    assert len(skipped) == 1
    assert "module 'helpdesk_tools.reports' was skipped" in skipped[0]
    assert "No module named 'acme_pdf'" in skipped[0]
    assert any(
        "tool 'close_ticket': shadowed by App('helpdesk').functions" in d for d in diagnostics
    )
    assert text(closed) == "ticket 101 closed: new toner"  # the server's own, not the package's
    assert listed["imported"] == []
    assert found.structured_content == {"result": ["Turn it off and on again."]}
    assert called["imported"] == ["helpdesk_tools.search"]
    assert ticket == "#102 Password reset (closed)"
    assert numbers.completion.values == ["101", "102"]


async def test_resources_discovered_override_and_are_overridden(
    helpdesk: Helpdesk, tmp_path: Path
) -> None:
    """By URI: the server's contact beats the package's; the package's hours beat the product's."""
    async with helpdesk(tmp_path) as client:
        listed = {str(r.uri): r.description for r in (await client.list_resources()).resources}
        contact = text(await client.read_resource("helpdesk://contact"))
        hours = text(await client.read_resource("helpdesk://hours"))
        privacy = text(await client.read_resource("helpdesk://privacy"))
        status = await call(client, "helpdesk_status")
    assert set(listed) == {"helpdesk://contact", "helpdesk://hours", "helpdesk://privacy"}
    assert contact == "call the on-duty agent at extension 200"  # manual over discovered
    assert hours == "Monday to Saturday, 8:00 to 20:00"  # discovered over built-in
    assert privacy == "Tickets are kept for one year."  # built-in, replaced by nobody
    assert shadowed(status, "resource 'helpdesk://contact'") == "App('helpdesk').functions"
    assert shadowed(status, "resource 'helpdesk://hours'").startswith("CachedSource(")


async def test_resource_templates_discovered_override_and_are_overridden(
    helpdesk: Helpdesk, tmp_path: Path
) -> None:
    """By URI template: the server's ticket view (with the package's completion); the package's articles."""
    tickets = types.ResourceTemplateReference(uri="helpdesk://tickets/{number}")
    async with helpdesk(tmp_path) as client:
        listed = {
            t.uri_template: t.mime_type
            for t in (await client.list_resource_templates()).resource_templates
        }
        ticket = text(await client.read_resource("helpdesk://tickets/101"))
        numbers = await client.complete(tickets, {"name": "number", "value": "1"})
        article = text(await client.read_resource("helpdesk://articles/printer"))
        status = await call(client, "helpdesk_status")
    assert listed == {
        "helpdesk://tickets/{number}": "text/plain",  # the server's, not the package's JSON
        "helpdesk://articles/{topic}": "text/plain",
    }
    assert ticket == "#101 Printer on fire (open)"
    assert numbers.completion.values == ["101", "102"]  # the discovered provider follows
    assert article == "Turn it off and on again."  # the package's, not the product's placeholder
    assert shadowed(status, "resource_template 'helpdesk://tickets/{number}'") == (
        "App('helpdesk').functions"
    )
    assert shadowed(status, "resource_template 'helpdesk://articles/{topic}'").startswith(
        "CachedSource("
    )


async def test_prompts_discovered_override_and_are_overridden(
    helpdesk: Helpdesk, tmp_path: Path
) -> None:
    """By name: the server's polite_reply beats the package's; the package's escalation_note the product's."""
    async with helpdesk(tmp_path) as client:
        names = {prompt.name for prompt in (await client.list_prompts()).prompts}
        reply = text(await client.get_prompt("polite_reply", {"issue": "late refund"}))
        note = text(await client.get_prompt("escalation_note", {"issue": "no sound"}))
        status = await call(client, "helpdesk_status")
    assert names == {"polite_reply", "escalation_note"}
    assert reply == "Write a short, polite reply signed 'The Helpdesk' about: late refund"
    assert note == "Escalate to the second line, with the steps tried so far: no sound"
    assert shadowed(status, "prompt 'polite_reply'") == "App('helpdesk').functions"
    assert shadowed(status, "prompt 'escalation_note'").startswith("CachedSource(")


def shadowed(status: dict[str, list[str]], element: str) -> str:
    """Who shadows ``element`` ("resource 'helpdesk://hours'"), as the diagnostics say."""
    found = [
        line.split(f"{element}: shadowed by ", 1)[1].rsplit(" (priority", 1)[0]
        for line in status["diagnostics"]
        if line.startswith("[shadowed]") and f"{element}: shadowed by " in line
    ]
    assert len(found) == 1, status["diagnostics"]
    return found[0]


async def test_a_corrupted_cache_is_refused_and_rebuilt(helpdesk: Helpdesk, tmp_path: Path) -> None:
    """Entries altered on disk fail authentication: a miss with a diagnostic, a fresh scan."""
    async with helpdesk(tmp_path) as first:
        await first.list_tools()
    with sqlite3.connect(tmp_path / "discovery.db") as db:
        db.execute(
            "UPDATE mcp_core_cache SET value = CAST(REPLACE(value, 'open_ticket', 'hack_ticket') AS BLOB)"
        )
    async with helpdesk(tmp_path) as second:
        tools = {tool.name for tool in (await second.list_tools()).tools}
        status = await call(second, "helpdesk_status")
    assert tools >= DISCOVERED
    assert "hack_ticket" not in tools
    assert any("[skipped]" in line and "secret" in line for line in status["diagnostics"])
    assert "helpdesk_tools.tickets" in status["imported"]  # rescanned
