"""DiscoverySource: marked callables of a package's modules, as references, failures isolated."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_core.elements import ElementCollection, ElementKind, ElementRef, HandlerRef
from mcp_core.handlers import Invoker
from mcp_core.handlers.testing import RecordingGateway
from mcp_core.sources import ElementSource
from mcp_core.sources._discovery import DiscoverySource
from mcp_core.sources._trust import collection_targets

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture(autouse=True)
def fixture_packages(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """tests/fixtures on sys.path; its modules forgotten afterwards, so each test imports afresh."""
    monkeypatch.syspath_prepend(str(FIXTURES))
    yield
    for name in [n for n in sys.modules if n.split(".")[0].startswith("discovery_pkg")]:
        del sys.modules[name]


EXPECTED_REFS = (
    ElementRef.tool("add"),
    ElementRef.prompt("greet"),
    ElementRef.tool("multiply"),
    ElementRef.tool("negate"),
    ElementRef.tool("class_name"),
    ElementRef.tool("shared_helper"),
    ElementRef.resource("res://beta/info"),
    ElementRef.resource_template("res://items/{uri}"),
    ElementRef.tool("shout"),
    ElementRef.tool("hidden"),
)


class TestDiscoverySource:
    """Imports, collection, order, references and the failure rules."""

    async def test_collects_in_module_then_definition_order(self) -> None:
        """alpha, beta, sub.gamma, sub.hidden; broken modules skipped; imported names not repeated."""
        collection = await DiscoverySource("discovery_pkg").provide()
        assert collection.refs == EXPECTED_REFS

    async def test_handlers_are_references(self) -> None:
        """Every handler and provider is a HandlerRef: the collection round-trips through JSON."""
        collection = await DiscoverySource("discovery_pkg").provide()
        handlers = {element.ref.key: element.handler for element in collection}
        assert handlers["add"] == HandlerRef("discovery_pkg.alpha:add")
        assert handlers["multiply"] == HandlerRef("discovery_pkg.alpha:Calculator.multiply")
        assert handlers["shout"] == HandlerRef("discovery_pkg.sub.gamma:shout_text")
        greet = collection.get(ElementRef.prompt("greet"))
        assert greet is not None
        assert greet.completions == {"name": HandlerRef("discovery_pkg.alpha:names")}
        assert collection.is_serializable
        assert ElementCollection.from_json(collection.to_json()) == collection

    async def test_methods_are_derived_without_self(self) -> None:
        """Instance and class methods publish no ``self``/``cls``; explicit options win."""
        collection = await DiscoverySource("discovery_pkg").provide()
        multiply = collection.get(ElementRef.tool("multiply"))
        class_name = collection.get(ElementRef.tool("class_name"))
        shout = collection.get(ElementRef.tool("shout"))
        assert multiply is not None
        assert class_name is not None
        assert shout is not None
        assert list(multiply.definition.input_schema["properties"]) == ["a", "b"]  # type: ignore[union-attr]  # a tool
        assert list(class_name.definition.input_schema["properties"]) == []  # type: ignore[union-attr]  # a tool
        assert shout.definition.description == "Upper-case the text."

    async def test_elements_serve_calls_through_their_references(self) -> None:
        """References resolve lazily: functions, methods (one instance), templates, completions."""
        collection = ElementCollection.from_json(
            (await DiscoverySource("discovery_pkg").provide()).to_json()
        )
        invoker, gateway = Invoker(), RecordingGateway()

        async def call(name: str, arguments: dict[str, int]) -> object:
            element = collection.get(ElementRef.tool(name))
            assert element is not None
            return (await invoker.call_tool(element, arguments, gateway))["structuredContent"]

        assert await call("add", {"a": 2, "b": 3}) == {"result": 5}
        assert await call("multiply", {"a": 2, "b": 3}) == {"result": 6}
        assert await call("multiply", {"a": 4, "b": 3}) == {"result": 12}
        assert await call("negate", {"a": 2}) == {"result": -2}
        class_name = collection.get(ElementRef.tool("class_name"))
        assert class_name is not None
        assert (await invoker.call_tool(class_name, {}, gateway))["content"] == [
            {"type": "text", "text": "Calculator"}
        ]
        assert sys.modules["discovery_pkg.alpha"].Calculator.instances == 1
        template = collection.get(ElementRef.resource_template("res://items/{uri}"))
        assert template is not None
        read = await invoker.read_resource(template, "res://items/42", {"uri": "42"}, gateway)
        assert read["contents"][0]["text"] == "item 42 read as res://items/42"
        greet = collection.get(ElementRef.prompt("greet"))
        assert greet is not None
        assert (await invoker.complete(greet, "name", "A", {}, gateway))["values"] == [
            "Ada",
            "Alan",
        ]

    async def test_import_failures_cost_only_their_module(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """Broken modules are skipped and reported; a broken package's children are not tried."""
        source = DiscoverySource("discovery_pkg")
        with caplog.at_level(logging.DEBUG, logger="mcp_core.sources"):
            collection = await source.provide()
        assert len(collection) == len(EXPECTED_REFS)
        failures = source.import_failures()
        assert [f.module for f in failures] == ["discovery_pkg.broken", "discovery_pkg.brokenpkg"]
        assert failures[0].error == "RuntimeError: broken on purpose"
        assert "broken.py" in failures[0].traceback
        assert "ImportError: broken package on purpose" in failures[1].traceback
        diagnostics = source.diagnostics()
        assert [d.kind for d in diagnostics] == ["skipped", "skipped"]
        assert "'discovery_pkg.broken'" in diagnostics[0].message
        assert f"at {failures[0].location}" in diagnostics[0].message
        assert failures[0].location.endswith("broken.py:12")
        assert diagnostics[0].source == "DiscoverySource(['discovery_pkg'])"
        # The traceback is logged for debugging only; the diagnostic is the one-line report.
        logged = [r for r in caplog.records if "discovery_pkg.broken" in r.getMessage()]
        assert [r.levelno for r in logged] == [logging.DEBUG, logging.DEBUG]

    async def test_diagnostics_never_start_a_scan(self) -> None:
        """Before anything scanned, diagnostics() is empty and imports nothing (a warm cache's case)."""
        source = DiscoverySource("discovery_pkg")
        assert source.diagnostics() == ()
        assert "discovery_pkg.broken" not in sys.modules
        await source.provide()
        assert [d.kind for d in source.diagnostics()] == ["skipped", "skipped"]

    async def test_include_and_exclude(self) -> None:
        """Fnmatch patterns on module names select what is imported."""
        only_sub = DiscoverySource(
            "discovery_pkg", include=["discovery_pkg.sub*"], exclude=["*.hidden"]
        )
        assert (await only_sub.provide()).refs == (ElementRef.tool("shout"),)
        assert "discovery_pkg.alpha" not in sys.modules
        assert only_sub.import_failures() == ()
        no_broken = DiscoverySource("discovery_pkg", exclude=["discovery_pkg.broken*"])
        await no_broken.provide()
        assert no_broken.diagnostics() == ()

    def test_kinds_from_marks_without_deriving(self) -> None:
        """``kinds()`` imports and reads marks; nothing is derived."""
        source = DiscoverySource("discovery_pkg.sub")
        assert source.kinds() is ElementKind.TOOL
        assert source._collection is None
        everything = DiscoverySource("discovery_pkg")
        assert everything.kinds() == ElementKind.ALL

    async def test_provide_is_idempotent(self) -> None:
        """The same collection every time; modules are imported once."""
        source: ElementSource = DiscoverySource(["discovery_pkg.sub", "discovery_pkg.sub"])
        first = await source.provide()
        assert await source.provide() is first

    async def test_a_callable_marked_twice(self) -> None:
        """One function with two element marks is skipped, naming both marks; the rest stands."""
        source = DiscoverySource("discovery_pkg_twice")
        assert (await source.provide()).refs == (ElementRef.tool("fine"),)
        [diagnostic] = source.diagnostics()
        assert diagnostic.kind == "skipped"
        assert diagnostic.ref == ElementRef.prompt("both")
        assert diagnostic.message.startswith("discovery_pkg_twice.marked:both is marked twice")
        assert "@prompt() at" in diagnostic.message
        assert "@tool() at" in diagnostic.message
        assert diagnostic.message.count("marked.py:") == 2

    async def test_one_name_in_two_modules(self) -> None:
        """Two modules defining tool 'same': the first (module order) is kept, the second named."""
        source = DiscoverySource("discovery_pkg_dupes")
        collection = await source.provide()
        assert collection.refs == (ElementRef.tool("same"),)
        same = collection.get(ElementRef.tool("same"))
        assert same is not None
        assert str(same.handler) == "discovery_pkg_dupes.one:same"
        [diagnostic] = source.diagnostics()
        assert diagnostic.ref == ElementRef.tool("same")
        assert "discovery_pkg_dupes.one:same at " in diagnostic.message
        assert "discovery_pkg_dupes.two:other at " in diagnostic.message
        assert "the first is kept" in diagnostic.message

    async def test_each_broken_declaration_costs_only_itself(self) -> None:
        """Bad names, templates, bindings and annotations are skipped one by one; the rest serve."""
        source = DiscoverySource("discovery_pkg_mixed")
        collection = await source.provide()
        assert collection.refs == (
            ElementRef.tool("fine"),
            ElementRef.prompt("greet"),
            ElementRef.tool("also_fine"),
        )
        greet = collection.get(ElementRef.prompt("greet"))
        assert greet is not None
        assert greet.completions is not None
        assert set(greet.completions) == {"name"}
        skipped = {(str(d.ref), d.message.split(": ", 1)[0]) for d in source.diagnostics()}
        assert {ref for ref, _ in skipped} == {
            "tool 'bad name!'",
            "resource_template 'app://items/{id'",
            "resource_template 'app://users/{id}'",
            "tool 'unresolvable'",
            "prompt 'greet'",
            "None",
        }
        for diagnostic in source.diagnostics():
            assert diagnostic.kind == "skipped"
            assert "bad.py:" in diagnostic.message or "completions.py:" in diagnostic.message

    async def test_missing_package_is_a_failure_not_a_crash(self) -> None:
        """A package that does not exist is reported like a module that fails to import."""
        source = DiscoverySource(["discovery_pkg.sub", "discovery_pkg_missing"])
        assert (await source.provide()).refs == (
            ElementRef.tool("shout"),
            ElementRef.tool("hidden"),
        )
        assert [f.module for f in source.import_failures()] == ["discovery_pkg_missing"]

    def test_cache_inputs_cover_every_option(self) -> None:
        """Configurations differing only in ``exclude`` (or include, or packages) differ in inputs."""
        base = DiscoverySource("discovery_pkg")
        excluded = DiscoverySource("discovery_pkg", exclude=["*.hidden"])
        included = DiscoverySource("discovery_pkg", include=["discovery_pkg.sub*"])
        other = DiscoverySource("discovery_pkg.sub")
        inputs = [dict(s.cache_inputs()) for s in (base, excluded, included, other)]
        assert len({repr(sorted(i.items())) for i in inputs}) == 4
        assert inputs[1]["exclude"] == ["*.hidden"]
        assert set(inputs[0]) == {"packages", "include", "exclude", "pydantic"}

    def test_equivalent_configurations_share_inputs(self) -> None:
        """Order and repetition of packages and patterns do not matter."""
        one = DiscoverySource(["b", "a", "a"], exclude=["y", "x"])
        two = DiscoverySource(["a", "b"], exclude=["x", "y", "x"])
        assert one.cache_inputs() == two.cache_inputs()
        assert repr(one) == repr(two)

    def test_bad_configuration(self) -> None:
        """Empty package lists and empty patterns are refused at construction."""
        with pytest.raises(ValueError, match="package names"):
            DiscoverySource([])
        with pytest.raises(ValueError, match="fnmatch"):
            DiscoverySource("discovery_pkg", exclude=[""])


class TestHandlerTargets:
    """handler_targets(): exactly the references provide() can hand out, without deriving."""

    async def test_targets_are_what_provide_hands_out(self) -> None:
        """Every handler and completion reference of the provided collection, and nothing else."""
        source = DiscoverySource(["discovery_pkg"])
        targets = source.handler_targets()
        provided = collection_targets(await source.provide())
        assert targets == provided
        assert "discovery_pkg.alpha:names" in targets  # a completion provider
        # A name a module imports (alpha imports beta's shared_helper) is not a second target.
        assert "discovery_pkg.alpha:shared_helper" not in targets
        assert not any(target.endswith(":annotations") for target in targets)

    def test_targets_do_not_derive(self) -> None:
        """Answering scans the modules but derives no element."""
        source = DiscoverySource(["discovery_pkg"])
        source.handler_targets()
        assert source._collection is None


class TestDiscoveryFromPaths:
    """Folders and files on disk, named relative to a root, with path patterns."""

    def make(self, tmp_path: Path) -> Path:
        root = tmp_path / "pathproj"
        (root / "pathproj_tools").mkdir(parents=True)
        (root / "pathproj_tools" / "ok.py").write_text(
            "from mcp_core.handlers import tool\n\n@tool\ndef from_path() -> str:\n    return 'p'\n"
        )
        (root / "pathproj_tools" / "not-a-module.py").write_text("x = 1\n")
        return root

    async def test_files_are_modules_named_from_the_root(self, tmp_path: Path) -> None:
        """A file under a folder is the module its relative path names; bad names are reported."""
        root = self.make(tmp_path)
        source = DiscoverySource(paths=["pathproj_tools"], root=root)
        try:
            collection = await source.provide()
        finally:
            sys.path.remove(str(root.resolve()))
            sys.modules.pop("pathproj_tools.ok", None)
        assert [element.ref.key for element in collection] == ["from_path"]
        [diagnostic] = source.diagnostics()
        assert "not-a-module.py is not importable as a module name" in diagnostic.message
        assert source.cache_inputs()["root"] == str(root.resolve())
        assert repr(source) == "DiscoverySource([], paths=['pathproj_tools'])"

    def test_a_path_pattern_matches_folders_and_files(self, tmp_path: Path) -> None:
        """exclude=['pathproj_tools'] skips the folder; '*.py' patterns match files."""
        root = self.make(tmp_path)
        excluded = DiscoverySource(paths=["."], root=root, exclude=["pathproj_tools"])
        assert excluded.kinds() == ElementKind.NONE
        assert excluded.diagnostics() == ()

    def test_paths_or_packages_are_required(self) -> None:
        """Neither packages nor paths: refused, naming both."""
        with pytest.raises(ValueError, match="paths="):
            DiscoverySource()
