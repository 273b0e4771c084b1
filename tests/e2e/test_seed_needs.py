"""What the seed consumers need of the core, each shown with the official client in both eras.

A plugin manager registering every plugin from one factory, handlers returning parts of their own
definitions, per-URI access checks, health probes on a lazy server, and handlers that ask the
client on 2026-07-28 (issue: the seed consumers, every need shown).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import httpx2
import pytest
from mcp import Client

from mcp_core import App, ClientGateway
from mcp_core.elements import Element, ElementKind, Icon, Tool, ToolAnnotations
from mcp_core.sources import IsolatedSource, LazySource, ValidatedSource
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
