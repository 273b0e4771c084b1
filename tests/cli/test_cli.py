"""The mcp-core command line: targets, inspect, dump, run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcp_core.app import App
from mcp_core.cli import main
from mcp_core.cli._target import load_target
from mcp_core.elements import Element as _Element
from mcp_core.elements import ElementCollection, HandlerRef, Tool
from mcp_core.errors import TargetError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def write(tmp_path: Path, name: str, source: str) -> Path:
    """A module file in ``tmp_path``."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


SERVER = """
    from mcp_core.app import App

    app = App("tmp")
    other = App("other")

    @app.tool
    def hello() -> str:
        '''Say hello.'''
        return "hello"
"""

REFS = """
    from mcp_core.elements import Element, ElementCollection, HandlerRef, Tool
    from mcp_core.registry import Registry
    from mcp_core.sources import StaticSource

    tool = Tool(name="ref_tool", description="By reference.", input_schema={"type": "object"})
    element = Element(definition=tool, handler=HandlerRef("os:getcwd"))
    registry = Registry([(StaticSource(ElementCollection([element])), 0)])
    server = registry
"""


class TestTargets:
    """TARGET names a file or module, with or without an object."""

    def test_file_default_name(self, tmp_path: Path) -> None:
        """A file's global ``app`` is found without naming it."""
        target = load_target(str(write(tmp_path, "srv.py", SERVER)))
        assert isinstance(target.obj, App)
        assert target.obj.name == "tmp"

    def test_file_named_object(self, tmp_path: Path) -> None:
        """``file.py:name`` picks that object."""
        target = load_target(f"{write(tmp_path, 'srv2.py', SERVER)}:other")
        assert target.obj.name == "other"  # type: ignore[attr-defined]  # an App

    def test_module_and_registry(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A module path works, and a bare registry is served as is."""
        write(tmp_path, "refs_target.py", REFS)
        monkeypatch.syspath_prepend(str(tmp_path))
        target = load_target("refs_target:server")
        assert target.registry is target.obj

    @pytest.mark.parametrize(
        ("spec", "message"),
        [
            ("no/such/file.py", "no such file"),
            ("no_such_module_xyz", "no module named"),
            ("json", "defines none"),
        ],
    )
    def test_errors(self, spec: str, message: str) -> None:
        """Targets that cannot be served say why."""
        with pytest.raises(TargetError, match=message):
            load_target(spec)

    def test_each_mistake_names_what_to_run_instead(self, tmp_path: Path) -> None:
        """A missing file, a module without the default names, a wrong object name: the fix.

        The files have names of their own: imported here, they stay in ``sys.modules``.
        """
        write(tmp_path, "mistaken_server.py", SERVER)
        write(tmp_path, "mistaken_plain.py", "x = 1\n")
        write(
            tmp_path, "mistaken_two.py", "from mcp_core import App\n\na = App('a')\nb = App('b')\n"
        )
        server, plain, two = (
            f"{tmp_path}/mistaken_{name}.py" for name in ("server", "plain", "two")
        )
        defines_none = "defines none of app, mcp, server, create_server, create_app"
        expected = {
            f"{tmp_path}/mistaken_servr.py": f"no such file: {tmp_path}/mistaken_servr.py; did "
            f"you mean {server}",
            f"{tmp_path}/nowhere/server.py": f"no such file: {tmp_path}/nowhere/server.py; "
            f"{tmp_path}/nowhere is not a folder either",
            two: f"{two} {defines_none}; it has 2 servers at its top level: name one, {two}:a or "
            f"{two}:b",
            f"{server}:ap": f"{server} has no attribute 'ap'; it has 2 servers at its top level: "
            f"name one, {server}:app or {server}:other",
            plain: f"{plain} {defines_none}; it builds no server at its top level (an App, "
            "McpServer, SDK MCPServer, fastmcp server or registry); add one "
            f'(app = App("name")), or name the function of no arguments that returns it '
            f"({plain}:create_server)",
            "no_such_module_xyz": "no module named 'no_such_module_xyz' (and no such file); name "
            "a server file (path/to/server.py), or install the module where mcp-core runs "
            f"({sys.executable})",
            "json:decoder": "json:decoder is a module, not an App",
        }
        for spec, message in expected.items():
            with pytest.raises(TargetError) as raised:
                load_target(spec)
            assert str(raised.value).startswith(message), spec

    def test_not_servable(self) -> None:
        """An object that is not an App, server, factory or registry is refused."""
        with pytest.raises(TargetError, match="not an App"):
            load_target("json:JSONDecodeError")
        with pytest.raises(TargetError, match=r"needs arguments \(obj\)"):
            load_target("json:dumps")


class TestInspect:
    """inspect shows the catalogue, capabilities and every diagnostic."""

    def test_broken_demo(self, capsys: pytest.CaptureFixture[str]) -> None:
        """The broken demo's failing source and broken elements are shown while the rest serves."""
        assert main(["inspect", str(EXAMPLES / "broken_demo.py")]) == 0
        out = capsys.readouterr().out
        assert "Tools (3):" in out
        assert "  add - Add two numbers." in out
        assert "[unavailable] InventoryDatabase('postgres://inventory')" in out
        assert "[skipped]" in out
        assert "prompt 'summary'" in out
        assert "tool 'restock'" in out
        assert "inventory_plugin" in out

    def test_json_and_strict(self, capsys: pytest.CaptureFixture[str]) -> None:
        """--json prints one document; --strict fails when anything is diagnosed."""
        assert main(["inspect", str(EXAMPLES / "broken_demo.py"), "--json", "--strict"]) == 1
        report = json.loads(capsys.readouterr().out)
        assert [t["name"] for t in report["elements"]["Tools"]] == ["add", "echo", "restock"]
        assert {d["kind"] for d in report["diagnostics"]} == {"unavailable", "skipped"}
        assert report["problems"][0]["ref"] == "tool 'restock'"
        assert report["capabilities"]["tools"] == {"listChanged": True}

    def test_everything_is_clean(self, capsys: pytest.CaptureFixture[str]) -> None:
        """The everything example has no diagnostic and no problem."""
        assert main(["inspect", str(EXAMPLES / "everything.py"), "--strict"]) == 0
        out = capsys.readouterr().out
        assert "diagnostics (0):" in out
        assert "problems found ahead of time (0):" in out

    def test_bad_target_exits_2(self, capsys: pytest.CaptureFixture[str]) -> None:
        """An unloadable target is a usage error."""
        assert main(["inspect", "no/such/file.py"]) == 2
        assert "no such file" in capsys.readouterr().err


class TestDump:
    """dump writes a collection file, or explains why it cannot."""

    def test_live_handlers_without_an_import_path_refused(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A handler defined inside a function has no import path: dump names it and the fix."""
        source = """
            from mcp_core.app import App

            app = App("closures")

            def make():
                def inner() -> str:
                    return "x"
                return inner

            app.tool(name="inner")(make())
        """
        output = tmp_path / "out.json"
        assert main(["dump", str(write(tmp_path, "closures.py", source)), "-o", str(output)]) == 1
        error = capsys.readouterr().err
        assert "tool 'inner'" in error
        assert "define these handlers at module level" in error
        assert not output.exists()

    def test_references_dumped(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A registry of references dumps to a collection that loads back equal."""
        write(tmp_path, "refs_dump.py", REFS)
        monkeypatch.syspath_prepend(str(tmp_path))
        output = tmp_path / "collection.json"
        assert main(["dump", "refs_dump:server", "-o", str(output)]) == 0
        loaded = ElementCollection.from_json(output.read_text(encoding="utf-8"))
        tool = Tool(name="ref_tool", description="By reference.", input_schema={"type": "object"})
        assert loaded == ElementCollection(
            [_Element(definition=tool, handler=HandlerRef("os:getcwd"))]
        )


class TestRun:
    """run serves over stdio (the e2e tests cover HTTP and the protocol itself)."""

    def test_stdio_exits_on_eof(self, tmp_path: Path) -> None:
        """A stdio server ends cleanly when its client closes stdin."""
        path = write(tmp_path, "srv3.py", SERVER)
        process = subprocess.run(  # noqa: S603 -- our own console script
            [str(Path(sys.executable).with_name("mcp-core")), "run", str(path)],
            input=b"",
            capture_output=True,
            timeout=30,
            check=False,
            env=dict(os.environ),
        )
        assert process.returncode == 0, process.stderr.decode()
        assert process.stdout == b""
