"""inspect and dump on every kind of target: an App, an McpServer with a container, any registry."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from mcp_core.cli import main
from mcp_core.elements import Element, ElementCollection, HandlerRef, Tool
from mcp_core.handlers import Invoker
from mcp_core.handlers.testing import RecordingGateway
from mcp_core.registry import Priority, Registry
from mcp_core.sources import CollectionFileSource

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def write(folder: Path, name: str, source: str) -> Path:
    """A module file in ``folder``."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


CONTAINER_SERVER = """
    from mcp_core.elements import Element, ElementCollection, HandlerRef, Tool
    from mcp_core.handlers import Invoker
    from mcp_core.registry import Registry
    from mcp_core.server import McpServer
    from mcp_core.sources import StaticSource


    class Operations:
        async def execute(self, arguments, gateway):
            return gateway.element.ref.key


    class Container:
        def has(self, id):
            return id == "api.operations"

        def get(self, id):
            return Operations()


    def operation(name):
        definition = Tool(name=name, description=name, input_schema={"type": "object"})
        return Element(definition=definition, handler=HandlerRef("api.operations"))


    registry = Registry([(StaticSource(ElementCollection([operation("a"), operation("b")])), 0)])
    server = McpServer(registry, invoker=Invoker(container=Container()))
"""

THIRD_PARTY = """
    from mcp_core.elements import Element, HandlerRef, ResourceTemplate, Tool


    class TinyRegistry:
        '''A registry with the catalogue and resolver roles only: no elements(), no get().'''

        def __init__(self):
            self.tool = Element(
                definition=Tool(name="t", description="T.", input_schema={"type": "object"}),
                handler=HandlerRef("service.id"),
            )
            self.template = Element(
                definition=ResourceTemplate(uri_template="tiny://{s}", name="s"),
                handler=HandlerRef("string:capwords"),
            )

        async def tools(self):
            return [self.tool.definition]

        async def resources(self):
            return []

        async def resource_templates(self):
            return [self.template.definition]

        async def prompts(self):
            return []

        async def get_tool(self, name):
            return self.tool if name == "t" else None

        async def get_prompt(self, name):
            return None

        async def get_resource(self, uri):
            from mcp_core.registry import ResolvedResource

            variables = self.template.definition.template.match(uri)
            if variables is None:
                return None
            return ResolvedResource(element=self.template, variables=variables)

        async def load(self):
            pass

        async def reload(self):
            pass

        @property
        def loaded(self):
            return True

        def kinds(self):
            from mcp_core.elements import ElementKind

            return ElementKind.TOOL | ElementKind.RESOURCE_TEMPLATE


    registry = TinyRegistry()
"""


def inspect_json(spec: str, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    """``mcp-core inspect SPEC --json --strict``, which must exit 0; its report."""
    status = main(["inspect", spec, "--json", "--strict"])
    report: dict[str, object] = json.loads(capsys.readouterr().out)
    assert status == 0, report
    return report


class TestMcpServerWithContainer:
    """The server's own invoker (and its container) checks and serves container handlers."""

    def test_inspect_reports_no_false_problem(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Container ids resolve through the server's container: nothing to report."""
        report = inspect_json(str(write(tmp_path, "container_srv.py", CONTAINER_SERVER)), capsys)
        assert report["problems"] == []
        assert report["unchecked"] == []
        assert [t["name"] for t in report["elements"]["Tools"]] == ["a", "b"]  # type: ignore[index]  # JSON

    def test_dump_keeps_the_container_ids(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The dump holds the references as given."""
        output = tmp_path / "ops.json"
        spec = str(write(tmp_path, "container_srv2.py", CONTAINER_SERVER))
        assert main(["dump", spec, "-o", str(output)]) == 0
        dumped = ElementCollection.from_json(output.read_text(encoding="utf-8"))
        assert {e.handler for e in dumped} == {HandlerRef("api.operations")}
        capsys.readouterr()


class TestThirdPartyRegistry:
    """A registry with the catalogue and resolver roles alone."""

    def test_inspect_leaves_container_ids_unchecked(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """No container comes with a bare registry: its container ids are not called broken."""
        write(tmp_path, "tiny_registry.py", THIRD_PARTY)
        monkeypatch.syspath_prepend(str(tmp_path))
        report = inspect_json("tiny_registry:registry", capsys)
        assert report["problems"] == []
        assert report["unchecked"] == [
            {
                "ref": "tool 't'",
                "reason": "its handler is a container id; the registry alone brings no container",
            }
        ]

    def test_dump_from_the_catalogue_and_resolver(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without elements() or get(), every listed element is resolved by its key and dumped."""
        write(tmp_path, "tiny_registry2.py", THIRD_PARTY)
        monkeypatch.syspath_prepend(str(tmp_path))
        output = tmp_path / "tiny.json"
        assert main(["dump", "tiny_registry2:registry", "-o", str(output)]) == 0
        dumped = ElementCollection.from_json(output.read_text(encoding="utf-8"))
        assert [str(e.ref) for e in dumped] == ["tool 't'", "resource_template 'tiny://{s}'"]
        capsys.readouterr()

    def test_a_resolver_that_disagrees_is_named(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A listed tool that does not resolve makes dump fail, naming it and the law."""
        source = THIRD_PARTY.replace('return self.tool if name == "t" else None', "return None")
        write(tmp_path, "tiny_registry3.py", source)
        monkeypatch.syspath_prepend(str(tmp_path))
        assert main(["dump", "tiny_registry3:registry", "-o", str(tmp_path / "x.json")]) == 1
        error = capsys.readouterr().err
        assert "tool 't' is listed, but resolving it gives nothing" in error
        assert "registry.resolver-agrees" in error


class TestReadmeFlow:
    """The README's app, dumped as the README says, and served back from the file."""

    def test_dump_then_serve_from_the_collection_file(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """`mcp-core dump server.py -o catalog.json`; a CollectionFileSource serves it back.

        The snippet's plugin line is taken up, as its comment invites once there are plugins.
        """
        text = README.read_text(encoding="utf-8")
        start = text.index("```python\n# server.py") + len("```python\n")
        snippet = text[start : text.index("```", start)]
        assert '# app.discover("my_plugins")' in snippet
        write(
            tmp_path,
            "server.py",
            snippet.replace('# app.discover("my_plugins")', 'app.discover("my_plugins")'),
        )
        write(
            tmp_path,
            "my_plugins/weather.py",
            """
            from mcp_core.handlers import tool

            @tool
            def forecast(city: str) -> str:
                '''The forecast for a city.'''
                return f"sunny in {city}"
            """,
        )
        write(tmp_path, "my_plugins/__init__.py", "")
        monkeypatch.chdir(tmp_path)
        monkeypatch.syspath_prepend(str(tmp_path))
        assert main(["inspect", "server.py", "--strict"]) == 0
        assert main(["dump", "server.py", "-o", "catalog.json"]) == 0
        capsys.readouterr()
        dumped = ElementCollection.from_json((tmp_path / "catalog.json").read_bytes())
        assert {e.handler for e in dumped} == {
            HandlerRef("server:add"),
            HandlerRef("server:config"),
            HandlerRef("server:review"),
            HandlerRef("my_plugins.weather:forecast"),
        }
        results = anyio.run(_serve_back, tmp_path / "catalog.json")
        assert results == [{"result": 5}, "sunny in Oslo"]


async def _serve_back(path: Path) -> Sequence[object]:
    """Call add and forecast through a registry over the dumped file alone."""
    registry = Registry([(CollectionFileSource(path), Priority.DEFAULT)])
    invoker = Invoker()
    results: list[object] = []
    for name, arguments in (("add", {"a": 2, "b": 3}), ("forecast", {"city": "Oslo"})):
        element = await registry.get_tool(name)
        assert isinstance(element, Element)
        assert isinstance(element.definition, Tool)
        result = await invoker.call_tool(element, arguments, RecordingGateway())
        results.append(result.get("structuredContent") or result["content"][0]["text"])
    return results
