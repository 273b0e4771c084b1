"""App: decorators, sources and precedence, visibility, serving."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from starlette.applications import Starlette

from mcp_core.app import App
from mcp_core.elements import Element, ElementCollection, ElementKind, Prompt, Tool
from mcp_core.errors import HandlerKindError
from mcp_core.handlers import ClientGateway, Message, tool_from_function
from mcp_core.registry import Priority
from mcp_core.sources import StaticSource
from mcp_core.visibility import predicate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def make_app() -> App:
    """An app declaring one element of each kind with the decorators, bare and with options."""
    app = App("demo")

    @app.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @app.tool(name="shout", description="Upper-case the text.", tags=("loud",))
    def upper(text: str) -> str:
        return text.upper()

    @app.resource("demo://readme", mime_type="text/markdown")
    def readme() -> str:
        """The readme."""
        return "# demo"

    @app.resource_template("demo://items/{id}")
    def item(id: int) -> str:  # noqa: A002 -- the template variable
        """An item."""
        return f"item {id}"

    @app.prompt
    def greet(who: str) -> list[Message]:
        """Greet someone."""
        return [Message.user(f"hello {who}")]

    @app.completion(greet, "who")
    def who(value: str) -> list[str]:
        return [name for name in ("ann", "bob") if name.startswith(value)]

    return app


class _ToolObject:
    async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> str:
        return "from an object"


class TestDeclaring:
    """Decorators and add() declare elements into the registry."""

    async def test_decorators(self) -> None:
        """Each decorator, bare or with options, yields its element."""
        registry = make_app().registry
        assert [t.name for t in await registry.tools()] == ["add", "shout"]
        assert [r.uri for r in await registry.resources()] == ["demo://readme"]
        assert [t.uri_template for t in await registry.resource_templates()] == [
            "demo://items/{id}"
        ]
        assert [p.name for p in await registry.prompts()] == ["greet"]
        shout = await registry.get_tool("shout")
        assert shout is not None
        assert shout.tags == frozenset({"loud"})
        assert registry.kinds() == ElementKind.ALL

    async def test_decorated_function_stays_callable(self) -> None:
        """A decorated function is returned unchanged."""
        app = App()

        @app.tool
        def double(x: int) -> int:
            return 2 * x

        assert double(2) == 4

    async def test_add_definition_and_handler(self) -> None:
        """add() pairs a definition with a handler object."""
        app = App()
        app.add(
            Tool(name="obj", input_schema={"type": "object"}, description="An object tool."),
            _ToolObject(),
        )
        assert [t.name for t in await app.registry.tools()] == ["obj"]

    def test_add_rejects_wrong_kind_at_once(self) -> None:
        """A tool handler for a prompt is refused when added."""
        with pytest.raises(HandlerKindError):
            App().add(Prompt(name="p"), _ToolObject())

    async def test_registry_rejects_wrong_kind_from_sources(self) -> None:
        """A source's wrong-kind element is skipped with a diagnostic; the rest serves."""
        app = App()
        bad = Element(definition=Prompt(name="p"), handler=_ToolObject())
        good = tool_from_function(lambda: "ok", name="ok", description="Fine.")
        app.add_source(StaticSource(ElementCollection([bad, good])))
        assert [t.name for t in await app.registry.tools()] == ["ok"]
        assert list(await app.registry.prompts()) == []
        assert [d.kind for d in app.registry.diagnostics()] == ["skipped"]


class TestPrecedence:
    """What the app declares beats what it discovers."""

    async def test_manual_beats_discovered(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A decorated tool shadows a discovered tool of the same name."""
        monkeypatch.syspath_prepend(str(FIXTURES))
        app = App()

        @app.tool(description="The app's own add.")
        def add(a: int, b: int) -> int:
            return a + b

        app.discover("discovery_pkg", exclude=["discovery_pkg.broken*", "discovery_pkg.brokenpkg*"])
        registry = app.registry
        tools = {t.name: t for t in await registry.tools()}
        assert tools["add"].description == "The app's own add."
        assert len(tools) > 1  # the discovered tools other than add are served too
        assert [source for source, priority in registry.sources if priority == Priority.DISCOVERY]
        assert any(
            d.kind == "shadowed" and d.ref == tools["add"].ref for d in registry.diagnostics()
        )


class TestServing:
    """The app serves its registry with its visibility."""

    async def test_in_memory(self) -> None:
        """The official client lists and calls what the app declares."""
        app = make_app()
        async with Client(app.server.lowlevel, mode="legacy") as client:
            names = [t.name for t in (await client.list_tools()).tools]
            result = await client.call_tool("shout", {"text": "hi"})
            prompt = await client.get_prompt("greet", {"who": "ann"})
        assert names == ["add", "shout"]
        assert result.content[0].text == "HI"  # type: ignore[union-attr]  # text content
        assert prompt.messages[0].content.text == "hello ann"  # type: ignore[union-attr]  # same

    async def test_visibility_applies_to_a_built_server(self) -> None:
        """Setting visibility after the server was built still takes effect."""
        app = make_app()
        server = app.server
        app.visibility = predicate(lambda ref, _session: ref.key != "add")
        assert server.visibility is app.visibility
        async with Client(app.server.lowlevel, mode="legacy") as client:
            names = [t.name for t in (await client.list_tools()).tools]
        assert names == ["shout"]

    def test_asgi(self) -> None:
        """asgi() is the streamable HTTP app to mount."""
        assert isinstance(make_app().asgi(), Starlette)

    def test_run_refuses_unknown_transport(self) -> None:
        """Only stdio and http are transports."""
        with pytest.raises(ValueError, match="transport"):
            make_app().run("carrier-pigeon")  # type: ignore[arg-type]  # the point of the test
