"""What the seed consumers need of the core, each shown with the official client in both eras.

A plugin manager registering every plugin from one factory, handlers returning parts of their own
definitions, per-URI access checks, health probes on a lazy server, and handlers that ask the
client on 2026-07-28 (issue: the seed consumers, every need shown).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated

from mcp_core import App, ClientGateway
from mcp_core.elements import (
    Element,
    ElementKind,
    Icon,
    Resource,
    ResourceTemplate,
    Tool,
    ToolAnnotations,
)
from mcp_core.sources import IsolatedSource, LazySource, ValidatedSource
from mcp_core.visibility import SessionInfo, handler_access
from tests.clients import WAIT, Inbox
from tests.e2e._http import serve

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> str:
    """The official client's default mode (2026-07-28) and its legacy mode (2025-11-25)."""
    value: str = request.param
    return value


class EchoPlugin:
    """A plugin that is its own handler; its name comes from configuration (it may be invalid)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def element(self) -> Element:
        """The plugin as an element (raises for an invalid name, as Tool construction does)."""
        definition = Tool(name=self.name, input_schema={"type": "object"})
        return Element(definition=definition, handler=self)

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> str:
        """Say which plugin answered."""
        return f"{self.name} ran"


CONFIGURED = ("alpha", "bad name", "omega")
"""The plugin manager's configuration: one plugin has a name no client accepts."""


def plugin_builders() -> list[object]:
    """One factory registering every plugin: each plugin's builder, called by the source alone."""
    return [EchoPlugin(name).element for name in CONFIGURED]


def plugin_elements() -> Iterator[Element]:
    """The same factory written as a generator building each element itself."""
    for name in CONFIGURED:
        yield EchoPlugin(name).element()


@pytest.mark.parametrize(
    "wrap",
    [lambda s: s, ValidatedSource, IsolatedSource],
    ids=["bare", "validated", "isolated"],
)
async def test_one_bad_plugin_in_one_factory_costs_only_itself(mode: str, wrap: Any) -> None:
    """Each element the factory yields is admitted alone, whatever wrapper it comes through."""
    app = App("plugins")
    app.add_source(wrap(LazySource(plugin_builders, kinds=ElementKind.TOOL)))
    async with Client(app.server.lowlevel, mode=mode) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        result = await client.call_tool("omega", {})
    assert names == ["alpha", "omega"]
    assert not result.is_error
    [skipped] = [d for d in app.registry.diagnostics() if d.kind == "skipped"]
    assert "'bad name'" in skipped.message
    assert "item 1" in skipped.message


async def test_a_generator_factory_keeps_what_it_built_and_says_how_to_keep_the_rest(
    mode: str,
) -> None:
    """A generator that fails building an element keeps the earlier ones and names the fix."""
    app = App("plugins")
    app.add_source(ValidatedSource(LazySource(plugin_elements, kinds=ElementKind.TOOL)))
    async with Client(app.server.lowlevel, mode=mode) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
    assert names == ["alpha"]
    [skipped] = [d for d in app.registry.diagnostics() if d.kind == "skipped"]
    assert "yield each plugin's builder" in skipped.message


async def test_health_probes_never_load_a_lazy_server(mode: str) -> None:
    """``GET /healthz`` on a ``preload=False`` server: ready, unloaded, and nothing built."""
    built: list[str] = []

    def plugins() -> list[Element]:
        built.append("all")
        return [EchoPlugin("alpha").element()]

    app = App("lazy", preload=False)
    app.add_source(LazySource(plugins, kinds=ElementKind.TOOL))
    with serve(app.server.streamable_http_app()) as url:
        health = url.removesuffix("/mcp") + "/healthz"
        async with httpx2.AsyncClient() as http:
            probes = [await http.get(health) for _ in range(3)]
            assert built == []  # no probe started the load
            async with Client(url, mode=mode) as client:
                names = [tool.name for tool in (await client.list_tools()).tools]
            after = await http.get(health)
    assert {probe.status_code for probe in probes} == {200}
    first = probes[0].json()
    assert (first["status"], first["ready"], first["loaded"]) == ("unloaded", True, False)
    assert {source["state"] for source in first["sources"]} == {"pending"}
    assert names == ["alpha"]
    assert built == ["all"]
    assert (after.status_code, after.json()["status"], after.json()["loaded"]) == (200, "ok", True)


class DescribingPlugin:
    """A plugin whose ``execute`` returns parts of its own definition (frozen JSON values)."""

    definition = Tool(
        name="describe",
        input_schema={
            "type": "object",
            "properties": {"part": {"type": "string"}, "tags": {"type": "array"}},
        },
        meta={"vendor": {"id": 7, "features": ["a", {"b": None}]}},
        annotations=ToolAnnotations(read_only_hint=True),
        icons=[Icon(src="https://example.org/i.png", mime_type="image/png")],
    )

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> object:
        """The part of the definition asked for."""
        part = arguments["part"]
        if part == "all":
            return {"definition": self.definition}
        return {part: getattr(self.definition, part)}


async def test_what_a_definition_holds_serializes_back_out_unchanged(mode: str) -> None:
    """``meta``, the schema, annotations, icons and the definition itself come back as given."""
    plugin = DescribingPlugin()
    app = App("describing")
    app.add_source(LazySource(lambda: [Element(definition=plugin.definition, handler=plugin)]))
    wire = plugin.definition.to_wire()
    async with Client(app.server.lowlevel, mode=mode) as client:
        results = {
            part: await client.call_tool("describe", {"part": part})
            for part in ("meta", "input_schema", "annotations", "icons", "all")
        }
    for result in results.values():
        assert not result.is_error, result
    structured = {part: result.structured_content for part, result in results.items()}
    assert structured["meta"] == {"meta": wire["_meta"]}
    assert structured["input_schema"] == {"input_schema": wire["inputSchema"]}
    assert structured["annotations"] == {"annotations": {"readOnlyHint": True}}
    assert structured["icons"] == {"icons": wire["icons"]}
    assert structured["all"] == {"definition": wire}


class NodeProvider:
    """A resource template plugin with its own access check, asked with the concrete URI."""

    checked: list[str]

    def __init__(self) -> None:
        self.checked = []

    def check_access(self, uri: str, session: SessionInfo) -> bool:
        """A user reads only the node named after them."""
        self.checked.append(uri)
        return uri == f"node://{session.attributes.get('client_name')}"

    async def read(self, uri: str, variables: Mapping[str, str], gateway: ClientGateway) -> str:
        """The node."""
        return f"node {variables['id']}"

    def ids(self, value: str) -> list[str]:
        """Every node id (the ``id`` variable's completion)."""
        return ["ann", "bob"]


class ReportProvider:
    """A fixed resource plugin whose access check wants the URI too (administrators only)."""

    async def check_access(self, uri: str, session: SessionInfo) -> bool:
        """Only ann, and only this report."""
        return uri == "report://daily" and session.attributes.get("client_name") == "ann"

    async def read(self, uri: str, gateway: ClientGateway) -> str:
        """The report."""
        return "all is well"


def access_app(nodes: NodeProvider) -> App:
    """Nodes by id and a daily report, each checked by its plugin's check_access(uri, user)."""
    app = App("access")
    template = ResourceTemplate(uri_template="node://{id}", name="node", mime_type="text/plain")
    report = Resource(uri="report://daily", name="daily", mime_type="text/plain")
    app.add_source(
        LazySource(
            lambda: [
                Element(definition=template, handler=nodes, completions={"id": nodes.ids}),
                Element(definition=report, handler=ReportProvider()),
            ]
        )
    )
    app.visibility = handler_access(app.registry)
    return app


async def test_a_plugins_access_check_gets_the_concrete_uri(mode: str) -> None:
    """Reads, subscriptions and completions ask check_access(uri, user) with the URI asked for."""
    nodes = NodeProvider()
    app = access_app(nodes)
    bob = types.Implementation(name="bob", version="1")
    async with Client(app.server.lowlevel, mode=mode, client_info=bob) as client:
        templates = (await client.list_resource_templates()).resource_templates
        resources = (await client.list_resources()).resources
        mine = await client.read_resource("node://bob")
        with pytest.raises(MCPError) as theirs:
            await client.read_resource("node://ann")
        with pytest.raises(MCPError):
            await client.read_resource("report://daily")
        own = types.ResourceTemplateReference(uri="node://bob")
        completed = await client.complete(own, {"name": "id", "value": ""})
        with pytest.raises(MCPError) as other_completion:
            await client.complete(
                types.ResourceTemplateReference(uri="node://ann"), {"name": "id", "value": ""}
            )
        if mode == "legacy":
            await client.subscribe_resource("node://bob")
            with pytest.raises(MCPError) as subscription:
                await client.subscribe_resource("node://ann")
            assert subscription.value.error.code == -32002
    assert [t.uri_template for t in templates] == ["node://{id}"]
    assert resources == []  # the report's own check hides it from bob's list
    assert isinstance(mine.contents[0], types.TextResourceContents)
    assert mine.contents[0].text == "node bob"
    assert theirs.value.error.message == "Resource not found"
    assert completed.completion.values == ["ann", "bob"]
    assert other_completion.value.error.code == -32602
    # Every check saw a concrete URI, never the template.
    assert "node://{id}" not in nodes.checked
    assert {"node://bob", "node://ann"} <= set(nodes.checked)


class ExportPlugin:
    """A plugin that reports progress and logs around two questions to the client."""

    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> str:
        """Log, report, ask; twice; then finish."""
        await gateway.log("info", "starting the export")
        await gateway.progress(1, 3)
        name = await gateway.elicit("Your name?", {"type": "object", "properties": {}})
        await gateway.log("info", "got a name")
        await gateway.progress(2, 3)
        summary = await gateway.sample(
            [{"role": "user", "content": {"type": "text", "text": "summarize"}}], max_tokens=5
        )
        await gateway.progress(3, 3)
        await gateway.log("info", "done")
        return f"{name['action']} {summary['content']['text']}"


async def test_a_rerun_handler_sends_each_notification_once(mode: str) -> None:
    """2026-07-28 re-runs the handler per round; the client still hears each log/progress once."""
    definition = Tool(name="export", input_schema={"type": "object"})
    app = App("export")
    app.add_source(LazySource(lambda: [Element(definition=definition, handler=ExportPlugin())]))
    inbox = Inbox()
    reports: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(progress)

    async with inbox.client(app.server.lowlevel, mode=mode, log_level="debug") as client:
        result = await client.call_tool("export", {}, progress_callback=on_progress)
    assert not result.is_error, result
    assert inbox.logs == ["starting the export", "got a name", "done"]
    assert reports == [1, 2, 3]
    assert inbox.asked == ["Your name?"]
    assert inbox.sampled == ["summarize"]


async def test_updates_reach_only_those_a_plugin_lets_read_the_uri() -> None:
    """2026-07-28: bob listens to node://ann and node://bob; only his own node's update reaches him."""
    nodes = NodeProvider()
    app = access_app(nodes)

    @app.tool
    async def touch(uri: str) -> str:
        """Announce that ``uri`` changed."""
        await app.server.notify_resource_updated(uri)
        return uri

    bob = types.Implementation(name="bob", version="1")
    with serve(app.asgi()) as url:
        async with (
            Client(url, client_info=bob) as client,
            client.listen(resource_subscriptions=["node://ann", "node://bob"]) as events,
        ):
            await client.call_tool("touch", {"uri": "node://ann"})
            await client.call_tool("touch", {"uri": "node://bob"})
            with anyio.fail_after(WAIT):
                event = await anext(aiter(events))
    assert isinstance(event, ResourceUpdated)
    assert event.uri == "node://bob"
    assert "node://ann" in nodes.checked  # asked with the concrete URI, and refused
