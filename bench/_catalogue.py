"""The catalogue every library serves: N tools, each a function taking one ``int`` and returning it.

The tools are real ``def`` statements in generated modules, declared with the library's own
decorator, so "declare N tools" costs what it costs in an application: importing modules that
execute N decorated function definitions. One source serves all three libraries, since each
spells it the same way::

    from bench_holder import app

    @app.tool(name="tool_000000")
    def tool_000000(x: int) -> int:
        '''Return x unchanged.'''
        return x

``bench_holder`` is a module the worker puts in ``sys.modules`` holding the library's server
object (an mcp-core ``App``, an ``MCPServer`` or a ``FastMCP``). The catalogue is a package of
modules of at most ``module_size`` tools each (a large application spreads its tools over
modules; ``module_size=0`` puts them all in one). Packages are written once per shape into a
cache folder and byte-compiled there, so no measured import compiles.

The warm-start package is the same catalogue marked with mcp-core's standalone ``@tool``: what
``mcp-core dump`` discovers and turns into ``HandlerRef`` handlers
(``"warm_N_byM.part_K:tool_..."``); serving the dump imports only the part a call needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, Literal

__all__ = [
    "HOLDER_MODULE",
    "Kind",
    "call_targets",
    "hidden",
    "package_name",
    "tool_name",
    "warm_target",
    "write_package",
]

HOLDER_MODULE: Final = "bench_holder"

Kind = Literal["cat", "warm"]

_CALL_TARGETS: Final = 20
_HIDE_EVERY: Final = 10


def tool_name(index: int) -> str:
    """The name of tool number ``index``."""
    return f"tool_{index:06d}"


def call_targets(size: int) -> list[str]:
    """Tools spread evenly over the catalogue (first, middle and last regions alike)."""
    count = min(size, _CALL_TARGETS)
    return [tool_name(i * size // count + (size // count) // 2) for i in range(count)]


def hidden(size: int) -> list[str]:
    """The tools a visibility rule hides in the filtered-list figure: every tenth one."""
    return [tool_name(i) for i in range(0, size, _HIDE_EVERY)]


def package_name(kind: Kind, size: int, module_size: int) -> str:
    """The import name of a generated catalogue package."""
    return f"{kind}_{size}_by{module_size if module_size > 0 else size}"


def _tool(index: int, decorator: str) -> str:
    name = tool_name(index)
    return (
        f'@{decorator}(name="{name}")\n'
        f"def {name}(x: int) -> int:\n"
        '    """Return x unchanged."""\n'
        "    return x\n\n\n"
    )


def _parts(size: int, module_size: int) -> list[range]:
    step = module_size if module_size > 0 else size
    return [range(start, min(start + step, size)) for start in range(0, size, step)]


def _sources(kind: Kind, size: int, module_size: int) -> dict[str, str]:
    """File name -> source of the package's ``__init__.py`` and parts."""
    parts = _parts(size, module_size)
    files: dict[str, str] = {}
    if kind == "cat":
        imports = "".join(f"from . import part_{k:04d}  # noqa: F401\n" for k in range(len(parts)))
        files["__init__.py"] = f'"""{size} tools for the benchmark (generated)."""\n\n{imports}'
        prelude, decorator = f"from {HOLDER_MODULE} import app\n\n\n", "app.tool"
    else:
        files["__init__.py"] = f'"""{size} tools for the warm-start benchmark (generated)."""\n'
        prelude, decorator = "from mcp_core.handlers import tool\n\n\n", "tool"
    for k, indices in enumerate(parts):
        body = "".join(_tool(i, decorator) for i in indices)
        files[f"part_{k:04d}.py"] = (
            f'"""Tools {indices.start}..{indices.stop - 1} (generated)."""\n\n{prelude}{body}'
        )
    return files


def write_package(folder: Path, kind: Kind, size: int, module_size: int) -> str:
    """Write the package under ``folder`` (files whose content changed only); return its name."""
    name = package_name(kind, size, module_size)
    package = folder / name
    package.mkdir(parents=True, exist_ok=True)
    for file, text in _sources(kind, size, module_size).items():
        path = package / file
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    return name


def warm_target(package: str) -> str:
    """The ``mcp-core dump`` target: an App discovering ``package``."""
    return (
        '"""The App dumped for the warm-start benchmark (generated)."""\n\n'
        "from mcp_core.app import App\n\n"
        'app = App("bench")\n'
        f"app.discover({package!r})\n"
    )
