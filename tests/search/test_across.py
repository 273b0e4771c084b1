"""Search across workers and across adopted servers.

- Each worker of a deployment keeps its own index; it rides the registry's change events, so a
  change one worker makes reaches the other's index through the change bus, as it reaches its
  lists.
- A gateway of adopted SDK servers (each prefixed) is searchable as one catalogue, and
  ``call_tool`` reaches the adopted tool through its bridge.
- A gateway of proxied servers (``RemoteSource``) too; a tool a proxied server adds reaches the
  gateway's index through its ``list_changed``, the gateway's reload and its change event.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer

from mcp_core.app import App
from mcp_core.bridges import MCPServerSource, RemoteSource
from mcp_core.elements import Element, Tool
from mcp_core.search import Disclosure, ToolIndex
from mcp_core.sources import PrefixedSource
from mcp_core.stores import MemoryChangeBus
from mcp_core.visibility import SessionInfo
from tests.clients import Inbox, send_call, text, tool_names
from tests.registry.test_propagation import until, workers

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

SESSION = SessionInfo(session_id="s")


async def test_a_change_on_one_worker_reaches_the_other_workers_index() -> None:
    """w1 reloads its source with a new tool; w2's index finds it, found by nothing else."""
    bus = MemoryChangeBus()
    async with workers(bus) as (first, second, backend):
        index = ToolIndex(second.registry)
        assert [h.tool.name for h in await index.search("changing", SESSION)] == ["changing_a"]
        backend.names.append("bravo")
        await first.registry.reload(first.changing)
        await until(lambda: second.propagation.applied_changes == 1)
        hits = await index.search("bravo", SESSION)
        index.close()
    assert [h.tool.name for h in hits] == ["changing_bravo"]


def _adopted(label: str, topic: str) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(label)

    @server.tool()
    def lookup(key: str) -> str:
        """Look a key up."""
        return f"{label}: {key}"

    @server.tool(name=f"{topic}_report")
    def report(period: str) -> str:
        """Build a report for a period."""
        return f"{label} {topic} report for {period}"

    return server


async def test_a_gateway_of_adopted_servers_is_searched_as_one() -> None:
    """Two SDK servers adopted behind prefixes: one search ranks both, call_tool calls through."""
    app = App("gateway", disclosure=Disclosure())
    app.add_source(PrefixedSource(MCPServerSource(_adopted("sales", "revenue")), "sales"))
    app.add_source(PrefixedSource(MCPServerSource(_adopted("ops", "uptime")), "ops"))
    async with Inbox().client(app.server.lowlevel, mode="legacy") as client:
        assert await tool_names(client) == {"search_tools", "call_tool"}
        found = await send_call(client, "search_tools", {"query": "uptime or revenue"})
        assert found.structured_content is not None
        names = [tool["name"] for tool in found.structured_content["tools"]]
        assert sorted(names) == ["ops_uptime_report", "sales_revenue_report"]
        called = await send_call(
            client, "call_tool", {"name": "ops_uptime_report", "arguments": {"period": "May"}}
        )
        assert text(called) == "ops uptime report for May"


def _backend(name: str, topic: str) -> App:
    backend = App(name)

    @backend.tool(name=f"{topic}_status")
    def status(region: str) -> str:
        """Report the status of a region."""
        return f"{name} {topic} status in {region}"

    return backend


async def test_a_gateway_of_proxied_servers_follows_their_changes() -> None:
    """Two servers proxied with RemoteSource: searched as one; a tool one adds is found next."""
    billing, network = _backend("billing", "invoice"), _backend("network", "latency")
    app = App("gateway", disclosure=Disclosure())
    app.add_source(PrefixedSource(RemoteSource(billing.server.lowlevel, mode="legacy"), "billing"))
    app.add_source(PrefixedSource(RemoteSource(network.server.lowlevel, mode="legacy"), "network"))
    async with Inbox().client(app.server.lowlevel, mode="legacy") as client:

        async def found(query: str) -> list[str]:
            result = await send_call(client, "search_tools", {"query": query})
            assert result.structured_content is not None
            return [tool["name"] for tool in result.structured_content["tools"]]

        assert await found("latency invoice") == [
            "billing_invoice_status",
            "network_latency_status",
        ]
        called = await send_call(
            client, "call_tool", {"name": "network_latency_status", "arguments": {"region": "eu"}}
        )
        assert text(called) == "network latency status in eu"
        refund = Tool(
            name="refund", description="Refund a payment.", input_schema={"type": "object"}
        )
        await billing.registry.register(Element(definition=refund, handler=lambda: "refunded"))

        async def refund_found() -> bool:
            return await found("refund a payment") == ["billing_refund"]

        await until(refund_found)
