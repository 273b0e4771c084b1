"""Declarations moved over from the SDK's ``MCPServer``: SDK types where mcp-core takes its own.

The same functions are declared on an SDK ``MCPServer`` and on an ``App`` with the same SDK
values (``mcp.types.ToolAnnotations``, ``Icon``, content blocks, ``CallToolResult``, a
``typing.TypedDict`` return); the official client lists and calls both in memory and what each
publishes is compared. Schemas differ only in what mcp-core's derivation documents
(``docs/adopt.md``): no pydantic ``title`` keys, ``additionalProperties: false`` on the
arguments, and the wrapped-result marker. A value mcp-core cannot take fails at the decorator.
"""

from __future__ import annotations

import sys
import typing
from collections.abc import Callable
from typing import Any

import mcp_types as mt
import pytest
import typing_extensions
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.types import Image as SdkImage

from mcp_core import App
from mcp_core.handlers._functions import WRAPPED_MARKER

ANNOTATIONS = mt.ToolAnnotations(title="Adder", read_only_hint=True, idempotent_hint=True)
ICON = mt.Icon(src="https://example.org/add.png", mime_type="image/png", sizes=["48x48"])
PNG = b"\x89PNG\r\n\x1a\n"


class Point(typing.TypedDict):
    """A point on the plane."""

    x: int
    y: int


class Labelled(typing.TypedDict, total=False):
    """A point with an optional label."""

    label: str
    point: typing.Required[Point]


def declare(server: MCPServer[Any] | App) -> None:
    """The same functions, declared on ``server`` (an ``MCPServer`` or an ``App``)."""

    @server.tool(annotations=ANNOTATIONS, icons=[ICON])
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool()
    def point(x: int) -> Point:
        """A point."""
        return {"x": x, "y": 2}

    @server.tool()
    def labelled(x: int) -> Labelled:
        """A labelled point."""
        return {"point": {"x": x, "y": 0}, "label": "origin"}

    @server.tool()
    def texts() -> list[mt.TextContent]:
        """SDK text blocks."""
        return [mt.TextContent(type="text", text="one"), mt.TextContent(type="text", text="two")]

    @server.tool()
    def image() -> mt.ImageContent:
        """An SDK image block."""
        return mt.ImageContent(type="image", data="aGk=", mime_type="image/png")

    @server.tool()
    def helper_image() -> SdkImage:
        """The SDK's Image helper."""
        return SdkImage(data=PNG, format="png")

    @server.tool()
    def whole() -> mt.CallToolResult:
        """A whole SDK result."""
        return mt.CallToolResult(
            content=[mt.TextContent(type="text", text="r")], structured_content={"a": 1}
        )

    @server.prompt(icons=[ICON])
    def review(code: str) -> str:
        """Ask for a review."""
        return f"review {code}"

    @server.resource(
        "app://notes", mime_type="text/plain", annotations=mt.Annotations(priority=0.5)
    )
    def notes() -> str:
        """The notes."""
        return "n"


def _schema(schema: Any) -> Any:
    """A schema without what mcp-core's derivation documents as its own (see module docstring)."""
    if isinstance(schema, dict):
        return {
            key: _schema(value)
            for key, value in schema.items()
            if not (key == "title" and isinstance(value, str))
            and not (key == "additionalProperties" and value is False)
            and key != WRAPPED_MARKER
        }
    if isinstance(schema, list):
        return [_schema(item) for item in schema]
    return schema


def _dump(model: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


async def _published(server: Any) -> dict[str, Any]:
    async with Client(server) as client:
        tools = sorted((await client.list_tools()).tools, key=lambda tool: tool.name)
        prompts = (await client.list_prompts()).prompts
        resources = (await client.list_resources()).resources
        calls = {}
        for tool in tools:
            arguments = {"a": 1, "b": 2} if tool.name == "add" else {}
            if tool.name in ("point", "labelled"):
                arguments = {"x": 1}
            result = _dump(await client.call_tool(tool.name, arguments))
            result.pop("_meta", None)  # serverInfo, whose version differs
            calls[tool.name] = result
    listed = []
    for tool in tools:
        wire = _dump(tool)
        for key in ("inputSchema", "outputSchema"):
            if key in wire:
                wire[key] = _schema(wire[key])
        listed.append(wire)
    return {
        "tools": listed,
        "prompts": [_dump(prompt) for prompt in prompts],
        "resources": [_dump(resource) for resource in resources],
        "calls": calls,
    }


@pytest.fixture(scope="module")
def both() -> tuple[dict[str, Any], dict[str, Any]]:
    """What the SDK's MCPServer and an App publish for the same declarations."""
    sdk = MCPServer("side-by-side")
    declare(sdk)
    app = App("side-by-side")
    declare(app)
    assert list(app.registry.diagnostics()) == []

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        return await _published(sdk), await _published(app.server.lowlevel)

    import anyio

    return anyio.run(run)


def test_tools_list_is_what_mcpserver_publishes(both: tuple[dict[str, Any], ...]) -> None:
    """Annotations, icons, input schemas and output schemas (TypedDict ones too) agree."""
    sdk, app = both
    # A TypedDict nested in a stdlib TypedDict: MCPServer publishes no output schema for it on
    # Python 3.11 (it logs that pydantic refused it); mcp-core rebuilds both and publishes one.
    nested = [tool for tool in app["tools"] if tool["name"] == "labelled"]
    assert [tool for tool in app["tools"] if tool["name"] != "labelled"] == [
        tool for tool in sdk["tools"] if tool["name"] != "labelled"
    ]
    assert nested[0]["outputSchema"]["required"] == ["point"]
    assert nested[0]["outputSchema"]["$defs"]["Point"]["required"] == ["x", "y"]
    published = {tool["name"]: tool for tool in app["tools"]}
    assert published["add"]["annotations"] == {
        "title": "Adder",
        "readOnlyHint": True,
        "idempotentHint": True,
    }
    assert published["point"]["outputSchema"]["required"] == ["x", "y"]
    assert "outputSchema" not in published["texts"]  # content, as for MCPServer


def test_prompts_and_resources_are_what_mcpserver_publishes(
    both: tuple[dict[str, Any], ...],
) -> None:
    """SDK icons on a prompt, SDK annotations on a resource."""
    sdk, app = both
    assert app["prompts"] == sdk["prompts"]
    assert app["resources"] == sdk["resources"]


def test_sdk_results_are_served_as_mcpserver_serves_them(
    both: tuple[dict[str, Any], ...],
) -> None:
    """SDK content blocks, helpers and a whole CallToolResult come back unchanged."""
    sdk, app = both
    for name in ("add", "texts", "image", "helper_image", "whole"):
        assert app["calls"][name] == sdk["calls"][name], name
    # Structured results agree; only the JSON text's indentation differs (MCPServer indents).
    assert app["calls"]["point"]["structuredContent"] == sdk["calls"]["point"]["structuredContent"]
    labelled = {"point": {"x": 1, "y": 0}, "label": "origin"}
    assert app["calls"]["labelled"]["structuredContent"] == labelled


@pytest.mark.parametrize(
    ("declare_bad", "message"),
    [
        (lambda app: app.tool(annotations=42), r"tool\(annotations=\.\.\.\) must be a"),
        (lambda app: app.tool(annotations={"readOnly": True}), r"tool\(annotations=\.\.\.\)"),
        (lambda app: app.tool(icons=[object()]), r"tool\(icons=\.\.\.\)\[0\] must be an? Icon"),
        (lambda app: app.tool(icons=ICON), r"tool\(icons=\.\.\.\) must be a list"),
        (lambda app: app.prompt(icons=[{"sizes": ["1x1"]}]), r"prompt\(icons=\.\.\.\)\[0\]"),
        (
            lambda app: app.resource(
                "app://x", annotations=mt.ToolAnnotations(read_only_hint=True)
            ),
            r"resource\(annotations=\.\.\.\)",
        ),
    ],
)
def test_what_cannot_be_taken_fails_at_the_decorator(
    declare_bad: Callable[[App], Any], message: str
) -> None:
    """Not a skipped element at load: a TypeError where the decorator is applied."""
    app = App("bad")
    with pytest.raises(TypeError, match=message):
        declare_bad(app)(lambda: "x")
    assert (
        not app.registry.sources
    )  # nothing declared: the app makes its source with its first element


def test_a_typing_typeddict_argument_is_accepted() -> None:
    """A stdlib TypedDict parameter is read as the typing_extensions one (pydantic needs it)."""
    app = App("args")

    @app.tool
    def norm(point: Point) -> int:
        """Taxicab norm."""
        return abs(point["x"]) + abs(point["y"])

    async def run() -> mt.CallToolResult:
        async with Client(app.server.lowlevel) as client:
            return await client.call_tool("norm", {"point": {"x": 3, "y": -4}})

    import anyio

    result = anyio.run(run)
    assert not result.is_error
    assert result.structured_content == {"result": 7}


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="the rebuild applies below 3.12 only")
def test_the_rebuilt_typeddict_keeps_its_name_and_keys() -> None:
    """Name, docstring, required and optional keys survive the rebuild."""
    from mcp_core.handlers._functions import pydantic_readable

    rebuilt = pydantic_readable(Labelled)
    assert typing_extensions.is_typeddict(rebuilt)
    assert rebuilt.__name__ == "Labelled"
    assert rebuilt.__doc__ == Labelled.__doc__
    assert rebuilt.__required_keys__ == frozenset({"point"})
    assert pydantic_readable(int) is int


def test_definitions_and_content_values_take_sdk_models() -> None:
    """``Tool(...)``, ``Resource(...)`` and content values read the SDK's models once."""
    from mcp_core.elements import Icon, Resource, Tool, ToolAnnotations
    from mcp_core.errors import InvalidElementError
    from mcp_core.handlers import Text

    tool = Tool(
        name="t",
        input_schema={"type": "object"},
        annotations=ANNOTATIONS,  # type: ignore[arg-type]  # the SDK's model, accepted at run time
        icons=[ICON],  # type: ignore[list-item]  # same
    )
    assert tool.annotations == ToolAnnotations(
        title="Adder", read_only_hint=True, idempotent_hint=True
    )
    assert tool.icons == (Icon(src=ICON.src, mime_type="image/png", sizes=("48x48",)),)
    resource = Resource(uri="app://r", name="r", annotations=mt.Annotations(priority=0.5))  # type: ignore[arg-type]  # same
    assert resource.to_wire()["annotations"] == {"priority": 0.5}
    text = Text("hi", annotations=mt.Annotations(audience=["user"]))  # type: ignore[arg-type]  # same
    assert text.to_wire()["annotations"] == {"audience": ["user"]}
    with pytest.raises(InvalidElementError, match="icons must be an Icon value"):
        Tool(name="t", input_schema={"type": "object"}, icons=[5])  # type: ignore[list-item]  # the misuse
