"""examples/discovery end to end over stdio: discovery, a manual override, a SQLite scan cache."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client

from tests.clients import call, stdio, text
from tests.examples.conftest import EXAMPLES

SERVER = EXAMPLES / "discovery" / "helpdesk_server.py"
DISCOVERED = {"open_ticket", "search_articles"}

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


@asynccontextmanager
async def helpdesk(cache: Path, mode: str) -> AsyncIterator[Client]:
    """``mcp-core run examples/discovery/helpdesk_server.py`` over stdio, with its own cache."""
    env = {"HELPDESK_CACHE_DIR": str(cache), "HELPDESK_CACHE_SECRET": ""}  # its key file
    async with Client(stdio(SERVER, env=env), mode=mode) as client:
        yield client


async def test_a_restart_skips_the_scan_and_imports_only_what_is_called(
    tmp_path: Path, mode: str
) -> None:
    """Cold: the scan imports every module (one is broken, and skipped). Warm: nothing until called."""
    async with helpdesk(tmp_path, mode) as cold:
        cold_tools = {tool.name for tool in (await cold.list_tools()).tools}
        cold_status = await call(cold, "helpdesk_status")
        closed = await cold.call_tool("close_ticket", {"number": 101, "resolution": "new toner"})
    async with helpdesk(tmp_path, mode) as warm:
        warm_tools = {tool.name for tool in (await warm.list_tools()).tools}
        listed = await call(warm, "helpdesk_status")
        found = await warm.call_tool("search_articles", {"query": "printer"})
        called = await call(warm, "helpdesk_status")
    assert cold_tools == warm_tools == DISCOVERED | {"close_ticket", "helpdesk_status"}
    assert set(cold_status["imported"]) >= {"helpdesk_tools.tickets", "helpdesk_tools.search"}
    skipped, shadowed = cold_status["diagnostics"]
    assert "module 'helpdesk_tools.reports' was skipped" in skipped
    assert "No module named 'acme_pdf'" in skipped
    assert "tool 'close_ticket': shadowed by App('helpdesk').functions" in shadowed
    assert text(closed) == "ticket 101 closed: new toner"  # the server's own, not the package's
    assert listed["imported"] == []
    assert found.structured_content == {"result": ["Turn it off and on again."]}
    assert called["imported"] == ["helpdesk_tools.search"]


async def test_a_corrupted_cache_is_refused_and_rebuilt(tmp_path: Path, mode: str) -> None:
    """Entries altered on disk fail authentication: a miss with a diagnostic, a fresh scan."""
    async with helpdesk(tmp_path, mode) as first:
        await first.list_tools()
    with sqlite3.connect(tmp_path / "discovery.db") as db:
        db.execute(
            "UPDATE mcp_core_cache SET value = CAST(REPLACE(value, 'open_ticket', 'hack_ticket') AS BLOB)"
        )
    async with helpdesk(tmp_path, mode) as second:
        tools = {tool.name for tool in (await second.list_tools()).tools}
        status = await call(second, "helpdesk_status")
    assert tools >= DISCOVERED
    assert "hack_ticket" not in tools
    assert any("[skipped]" in line and "secret" in line for line in status["diagnostics"])
    assert "helpdesk_tools.tickets" in status["imported"]  # rescanned
