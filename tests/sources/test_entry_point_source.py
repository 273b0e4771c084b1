"""EntryPointSource: plugins from installed distributions' entry points, each failing alone."""

from __future__ import annotations

import importlib
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from mcp_core.elements import ElementKind, ElementRef
from mcp_core.registry import Registry
from mcp_core.server import McpServer
from mcp_core.sources import EntryPointSource
from tests.e2e._http import serve

GROUP = "testapp.plugins"

MODULES = {
    "plug_element": """
        from mcp_core.elements import Element, Tool

        def hello() -> str:
            return "hello"

        plugin = Element(definition=Tool(name="hello", input_schema={"type": "object"}), handler=hello)
    """,
    "plug_factory": """
        from mcp_core.elements import Element, Prompt

        CALLS = []

        class Greeter:
            async def get(self, arguments, gateway):
                return "hi"

        def make():
            CALLS.append(1)
            return [Element(definition=Prompt(name="greet"), handler=Greeter())]
    """,
    "plug_marked": """
        from mcp_core.handlers import tool

        @tool
        def add(a: int, b: int) -> int:
            '''Add two numbers.'''
            return a + b
    """,
    "plug_manager": """
        from mcp_core.elements import Element, Tool

        class Plugin:
            def __init__(self, name):
                self.name = name

            def element(self):
                return Element(definition=Tool(name=self.name, input_schema={"type": "object"}), handler=self)

            async def execute(self, arguments, gateway):
                return self.name

        def register_all():
            return [Plugin(name).element for name in ("first", "bad name", "last")]
    """,
    "plug_missing_dependency": """
        import a_library_nobody_installed
    """,
    "plug_not_a_plugin": """
        plugin = 42
    """,
    "plug_exits": """
        import sys

        sys.exit(3)
    """,
    "plug_odd_base": """
        class Escape(BaseException):
            pass

        raise Escape("not an Exception")
    """,
    "plug_blocks": """
        import threading

        RELEASE = threading.Event()  # the test sets it: the module is in sys.modules meanwhile
        RELEASE.wait(60)

        from plug_element import plugin
    """,
    "plug_clash": """
        from mcp_core.elements import Element, Tool

        def other() -> str:
            return "other"

        plugin = Element(definition=Tool(name="hello", input_schema={"type": "object"}), handler=other)
    """,
}


def install(root: Path, name: str, entry_points: dict[str, str]) -> None:
    """Write a distribution's metadata (as ``pip install`` would) declaring ``entry_points``."""
    info = root / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    lines = [f"[{GROUP}]", *(f"{key} = {value}" for key, value in entry_points.items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on sys.path holding the plugin modules; distributions are installed into it."""
    for module, code in MODULES.items():
        (tmp_path / f"{module}.py").write_text(textwrap.dedent(code))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    yield tmp_path
    for module in MODULES:
        sys.modules.pop(module, None)


async def test_every_kind_of_plugin_is_served(site: Path) -> None:
    """An element, a factory's list and a marked function each become elements, in name order."""
    install(
        site,
        "good_plugins",
        {
            "a_hello": "plug_element:plugin",
            "b_greet": "plug_factory:make",
            "c_add": "plug_marked:add",
        },
    )
    source = EntryPointSource(GROUP)
    collection = await source.provide()
    assert [element.ref.key for element in collection] == ["hello", "greet", "add"]
    assert source.diagnostics() == ()
    assert collection.get(ElementRef(ElementKind.TOOL, "add")) is not None


async def test_a_plugin_that_fails_to_load_costs_only_itself(site: Path) -> None:
    """A missing dependency or a non-plugin is skipped with a diagnostic naming it and the fix."""
    install(
        site,
        "mixed_plugins",
        {
            "broken": "plug_missing_dependency:plugin",
            "hello": "plug_element:plugin",
            "odd": "plug_not_a_plugin:plugin",
        },
    )
    source = EntryPointSource(GROUP, kinds=ElementKind.TOOL)
    collection = await source.provide()
    messages = [d.message for d in source.diagnostics()]
    assert [element.ref.key for element in collection] == ["hello"]
    assert {d.kind for d in source.diagnostics()} == {"skipped"}
    assert messages[0].startswith(
        "entry point 'broken' (plug_missing_dependency:plugin) of mixed_plugins failed to load: "
        "ModuleNotFoundError: No module named 'a_library_nobody_installed'; fix or uninstall"
    )
    assert "odd" in messages[1]
    assert "got int" in messages[1]
    # Through a registry, the diagnostics show and the rest is served.
    registry = Registry([(source, 0)])
    assert [tool.name for tool in await registry.tools()] == ["hello"]
    assert len(registry.diagnostics()) == 2


async def test_one_factory_registering_many_plugins_admits_each_alone(site: Path) -> None:
    """An entry point naming a plugin manager's factory: one builder failing costs only its plugin."""
    install(site, "manager", {"all": "plug_manager:register_all"})
    source = EntryPointSource(GROUP, kinds=ElementKind.TOOL)
    collection = await source.provide()
    assert [element.ref.key for element in collection] == ["first", "last"]
    [diagnostic] = source.diagnostics()
    assert diagnostic.kind == "skipped"
    assert "entry point 'all' (plug_manager:register_all) of manager, item 1" in diagnostic.message
    assert "'bad name'" in diagnostic.message


async def test_a_clash_between_plugins_skips_the_later_element(site: Path) -> None:
    """Two plugins providing one ref: the first in name order wins, the other is reported."""
    install(site, "clashing", {"a_first": "plug_element:plugin", "b_second": "plug_clash:plugin"})
    source = EntryPointSource(GROUP)
    collection = await source.provide()
    (diagnostic,) = source.diagnostics()
    assert len(collection) == 1
    assert diagnostic.ref == ElementRef(ElementKind.TOOL, "hello")
    assert "entry point 'b_second'" in diagnostic.message
    assert "which entry point 'a_first'" in diagnostic.message


async def test_loaded_once_failures_retried_new_plugins_found(site: Path) -> None:
    """A loaded plugin is kept (one factory call); a failed one is retried; an install is found."""
    install(site, "first", {"greet": "plug_factory:make", "broken": "plug_missing_dependency:x"})
    source = EntryPointSource(GROUP)
    first = await source.provide()
    (site / "a_library_nobody_installed.py").write_text("")
    (site / "plug_missing_dependency.py").write_text(
        "import a_library_nobody_installed\nfrom plug_element import plugin as x\n"
    )
    install(site, "second", {"added": "plug_marked:add"})
    importlib.invalidate_caches()
    second = await source.provide()
    calls: list[int] = sys.modules["plug_factory"].CALLS
    assert [e.ref.key for e in first] == ["greet"]
    assert [e.ref.key for e in second] == ["add", "hello", "greet"]
    assert second.get(ElementRef(ElementKind.PROMPT, "greet")) == first.get(
        ElementRef(ElementKind.PROMPT, "greet")
    )
    assert calls == [1]
    assert source.diagnostics() == ()
    sys.modules.pop("a_library_nobody_installed", None)


def test_kinds_never_load_anything(site: Path) -> None:
    """kinds() is the declared kinds, answered without importing a plugin."""
    install(site, "lazy", {"hello": "plug_element:plugin"})
    source = EntryPointSource(GROUP, kinds=ElementKind.TOOL)
    assert source.kinds() == ElementKind.TOOL
    assert "plug_element" not in sys.modules
    assert repr(source) == "EntryPointSource('testapp.plugins', kinds=tool)"


@pytest.mark.parametrize("group", ["", "   ", 3])
def test_a_group_name_is_required(group: object) -> None:
    """A blank or non-string group is refused, naming it."""
    make: Callable[..., object] = EntryPointSource
    with pytest.raises(ValueError, match="entry-point group name"):
        make(group)


class TestHostilePlugin:
    """Attacker: a hostile (or broken) plugin in the group; it costs only itself."""

    async def test_system_exit_in_one_plugin_costs_only_it(self, site: Path) -> None:
        """sys.exit() or another BaseException at import: that plugin is skipped, the group served.

        Before: SystemExit went through ``except Exception`` and the whole group was lost.
        """
        install(
            site,
            "exiting",
            {"a_exits": "plug_exits:x", "b_odd": "plug_odd_base:x", "hello": "plug_element:plugin"},
        )
        source = EntryPointSource(GROUP, kinds=ElementKind.TOOL)
        collection = await source.provide()
        messages = [d.message for d in source.diagnostics()]
        assert [element.ref.key for element in collection] == ["hello"]
        assert "entry point 'a_exits'" in messages[0]
        assert "SystemExit: 3" in messages[0]
        assert "Escape: not an Exception" in messages[1]

    async def test_a_blocking_import_is_skipped_and_served_once_done(self, site: Path) -> None:
        """A plugin whose import blocks is skipped after import_timeout; the server initializes.

        Before: the import ran on the event loop, and ``initialize`` waited for it (38.7 s in
        the attack pass). Now the server lists the other plugins' tools at once and reports
        the slow one; once its import finishes, the next load serves it, imported once.
        """
        install(site, "slow", {"hello": "plug_element:plugin", "slow": "plug_blocks:plugin"})
        source = EntryPointSource(GROUP, kinds=ElementKind.TOOL, import_timeout=0.5)
        registry = Registry([(source, 0)])
        server = McpServer(registry)
        with serve(server.streamable_http_app()) as url:
            async with Client(url, mode="legacy") as client:
                tools = await client.list_tools()
        assert [tool.name for tool in tools.tools] == ["hello"]
        (diagnostic,) = source.diagnostics()
        assert "entry point 'slow'" in diagnostic.message
        assert "did not finish importing within 0.5 s" in diagnostic.message
        release: threading.Event = sys.modules["plug_blocks"].RELEASE
        release.set()
        with anyio.fail_after(30):
            while not hasattr(sys.modules["plug_blocks"], "plugin"):  # noqa: ASYNC110 -- another thread's import, no event to await
                await anyio.sleep(0.05)
        again = await source.provide()
        assert [element.ref.key for element in again] == ["hello"]  # same tool: a clash
        assert "'slow' (plug_blocks:plugin) of slow also provides tool 'hello'" in (
            source.diagnostics()[0].message
        )

    def test_import_timeout_is_checked(self) -> None:
        """A timeout that is not a positive number of seconds is refused, naming it."""
        with pytest.raises(ValueError, match="import_timeout"):
            EntryPointSource(GROUP, import_timeout=0)
