"""100,000 tools: a session lists three, finds one by asking in words, and calls it.

In both eras through the official client (in process). The hits are the brute-force
reference's (SQLite's ``bm25()`` over a table of the tools the session may see), here under a
rule that hides every other tool.
"""

from __future__ import annotations

import functools
import zlib
from typing import Any

import pytest

from bench.tool_catalogue import collection
from mcp_core.app import App
from mcp_core.elements import ElementCollection, ElementRef
from mcp_core.search import Disclosure
from mcp_core.sources import StaticSource
from mcp_core.visibility import SessionInfo, predicate
from tests.clients import Inbox, send_call, text, tool_names
from tests.search._reference import reference_ranking

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

SIZE = 100_000
QUERY = "send an email in slack"


@functools.cache
def _catalogue() -> ElementCollection:
    return collection(SIZE)


def _app() -> App:
    app = App("large", disclosure=Disclosure(pinned=["ping"]))

    @app.tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    app.add_source(StaticSource(_catalogue()))
    return app


@pytest.mark.parametrize("mode", ["legacy", "modern"])
async def test_a_session_finds_and_calls_one_of_100k_tools(mode: str) -> None:
    """Lists three tools; the natural query's first hit is the tool meant; the call answers."""
    app = _app()
    options: dict[str, Any] = {"mode": "legacy"} if mode == "legacy" else {}
    async with Inbox().client(app.server.lowlevel, **options) as client:
        assert await tool_names(client) == {"ping", "search_tools", "call_tool"}
        found = await send_call(client, "search_tools", {"query": QUERY})
        assert found.structured_content is not None
        names = [tool["name"] for tool in found.structured_content["tools"]]
        assert names[0] == "slack_send_email"
        called = await send_call(
            client, "call_tool", {"name": "slack_send_email", "arguments": {"email_id": "e7"}}
        )
        assert text(called) == "done: [('email_id', 'e7')]"


def _even(ref: ElementRef, session: SessionInfo) -> bool:
    return zlib.crc32(ref.key.encode()) % 2 == 0


async def test_100k_hits_are_the_reference_ranking_over_the_visible_tools() -> None:
    """Half the tools hidden: the hits are bm25() over a table of the other half alone."""
    app = _app()
    app.visibility = predicate(_even)
    disclosure = app.disclosure
    assert disclosure is not None
    session = SessionInfo(session_id="s")
    hits = await disclosure.index.search("email forecast slack", session, app.visibility, limit=50)
    visible = [e for e in _catalogue() if _even(e.ref, session)]
    expected = reference_ranking(visible, "email forecast slack")[:50]
    assert [h.tool.name for h in hits] == [name for name, _ in expected]
    for hit, (_, score) in zip(hits, expected, strict=True):
        assert hit.score == pytest.approx(score, rel=1e-9)
