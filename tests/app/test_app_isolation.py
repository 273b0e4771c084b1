"""App: a broken declaration costs only itself, and the app's limits and timeouts are settable."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_core.app import App
from mcp_core.elements import Tool
from mcp_core.handlers import ElementLimits
from mcp_core.handlers._decorators import CallSite
from mcp_core.registry import Backoff


def healthy_and_broken() -> App:
    """An app with two healthy tools and one broken declaration of each kind."""
    app = App("mixed")

    @app.tool
    def good(x: int) -> int:
        """Echo x."""
        return x

    @app.tool(name="bad name!")
    def bad() -> str:
        return "x"

    @app.resource_template("app://items/{id")
    def item(id: str) -> str:  # noqa: A002 -- the template variable
        return id

    @app.resource_template("app://users/{id}")
    def user(other: str) -> str:
        return other

    @app.tool
    def unresolvable(x: NoSuchType) -> str:  # type: ignore[name-defined]  # noqa: F821 -- broken on purpose
        return str(x)

    @app.tool(name="dup")
    def first() -> str:
        return "first"

    @app.tool(name="dup")
    def second() -> str:
        return "second"

    app.add(Tool(name="also_good", input_schema={"type": "object"}), lambda: "ok")
    app.add(Tool(name="also_good", input_schema={"type": "object"}), lambda: "again")
    return app


class TestDeclarationIsolation:
    """Each kind of broken declaration is skipped with a diagnostic; the rest serves."""

    async def test_healthy_tools_list_and_answer(self) -> None:
        """tools/list shows the healthy tools; calling them works; the broken ones are unknown."""
        app = healthy_and_broken()
        async with Client(app.server.lowlevel, mode="legacy") as client:
            names = [t.name for t in (await client.list_tools()).tools]
            good = await client.call_tool("good", {"x": 3})
            dup = await client.call_tool("dup", {})
            with pytest.raises(MCPError) as unknown:
                await client.call_tool("bad name!", {})
        assert names == ["also_good", "dup", "good"]
        assert good.structured_content == {"result": 3}
        assert dup.content[0].text == "first"  # type: ignore[union-attr]  # a text block
        assert unknown.value.code == -32602

    async def test_one_diagnostic_each_naming_source_ref_and_place(self) -> None:
        """Skipped diagnostics carry the app's source, the element and the declaring line."""
        app = healthy_and_broken()
        await app.registry.load()
        found = {(d.source, str(d.ref)): d.message for d in app.registry.diagnostics()}
        assert set(found) == {
            ("App('mixed').functions", "tool 'bad name!'"),
            ("App('mixed').functions", "resource_template 'app://items/{id'"),
            ("App('mixed').functions", "resource_template 'app://users/{id}'"),
            ("App('mixed').functions", "tool 'unresolvable'"),
            ("App('mixed').functions", "tool 'dup'"),
            ("App('mixed').add()", "tool 'also_good'"),
        }
        assert all(__file__ in message for message in found.values())
        assert found["App('mixed').add()", "tool 'also_good'"].startswith(
            f"declared twice, by app.add() at {__file__}:"
        )

    async def test_locations_are_worked_out_only_for_problems(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Healthy declarations never resolve their line (that lookup made 10k tools quadratic)."""
        resolved: list[object] = []
        original = CallSite.__str__

        def counting(self: CallSite) -> str:
            resolved.append(self)
            return original(self)

        monkeypatch.setattr(CallSite, "__str__", counting)
        app = App("many")
        for index in range(50):
            app.add(Tool(name=f"t{index}", input_schema={"type": "object"}), lambda: "ok")

            @app.tool(name=f"f{index}")
            def fn() -> str:
                return "ok"

        assert len(await app.registry.tools()) == 100
        assert resolved == []


class TestOptions:
    """App passes its limits and timeouts to its registry and invoker."""

    async def test_limits(self) -> None:
        """A tighter ElementLimits skips what the default would admit."""
        app = App("tight", limits=ElementLimits(max_bytes=100))
        app.add(Tool(name="t", input_schema={"type": "object"}, description="x" * 200), lambda: 1)
        assert await app.registry.tools() == ()

    async def test_handler_timeout(self) -> None:
        """handler_timeout bounds every handler."""
        app = App("slow", handler_timeout=0.01)

        @app.tool
        async def slow() -> str:
            await anyio.sleep_forever()
            return "never"

        async with Client(app.server.lowlevel, mode="legacy") as client:
            result = await client.call_tool("slow", {})
        assert result.is_error is True
        text = result.content[0].text  # type: ignore[union-attr]  # a text block
        assert text == "Error executing tool slow: it did not finish within 0.01 s"

    async def test_provide_timeout_and_retry(self) -> None:
        """provide_timeout and retry reach the registry."""

        class Slow:
            def kinds(self) -> Any:
                from mcp_core.elements import ElementKind

                return ElementKind.TOOL

            async def provide(self) -> Any:
                await anyio.sleep_forever()

        app = App("bounded", provide_timeout=0.01, retry=Backoff(initial=5))
        app.add_source(Slow())
        async with app.registry.background():
            assert await app.registry.tools() == ()
            [source] = [s for s in app.registry.health().sources if s.state == "down"]
        assert source.next_retry is not None
