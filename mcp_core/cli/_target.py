"""Finding what a command line names: ``path/to/file.py[:obj]`` or ``pkg.mod[:obj]``."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, final

from mcp.server.mcpserver import MCPServer

from mcp_core.app import App
from mcp_core.bridges import MCPServerSource
from mcp_core.handlers import Invoker
from mcp_core.server import McpServer, ServableRegistry

__all__ = ["Target", "TargetError", "load_target"]

_DEFAULT_NAMES: Final = ("app", "mcp", "server")
_ROLE_METHODS: Final = (
    *("tools", "resources", "resource_templates", "prompts"),
    *("get_tool", "get_prompt", "get_resource", "load", "kinds"),
)


class TargetError(Exception):
    """The target cannot be loaded or is not something mcp-core can serve; the message says why."""


@final
@dataclass(frozen=True, slots=True)
class Target:
    """What a target resolved to: the object named, and its server, registry and invoker."""

    spec: str
    obj: object
    server: McpServer
    invoker: Invoker

    @property
    def registry(self) -> ServableRegistry:
        """The registry the target serves."""
        return self.server.registry


def load_target(spec: str) -> Target:
    """Import ``spec`` and find the App, McpServer or registry it names.

    Without ``:obj``, the module's global ``app``, ``mcp`` or ``server`` is used (first found).
    """
    module_part, _, attribute = _split(spec)
    module = _import(module_part)
    if attribute:
        if not hasattr(module, attribute):
            raise TargetError(f"{module_part} has no attribute {attribute!r}")
        obj = getattr(module, attribute)
    else:
        found = [name for name in _DEFAULT_NAMES if hasattr(module, name)]
        if not found:
            raise TargetError(
                f"{module_part} defines none of {', '.join(_DEFAULT_NAMES)}; name the object: "
                f"{module_part}:my_app"
            )
        obj = getattr(module, found[0])
    return _target(spec, obj)


def _split(spec: str) -> tuple[str, str, str]:
    # "C:\\x.py" is a path, not module "C" and attribute "\\x.py": only split after the last
    # colon when what follows is an identifier.
    head, sep, tail = spec.rpartition(":")
    if sep and head and tail.isidentifier():
        return head, sep, tail
    return spec, "", ""


def _import(module_part: str) -> Any:
    path = Path(module_part)
    if module_part.endswith(".py") or path.exists():
        if not path.is_file():
            raise TargetError(f"no such file: {module_part}")
        name = f"_mcp_core_target_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise TargetError(f"cannot import {module_part} as a Python module")
        module = importlib.util.module_from_spec(spec)
        # The file's folder comes first on the path, as `python file.py` would have it.
        sys.path.insert(0, str(path.resolve().parent))
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(module_part)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module_part.startswith(exc.name):
            raise TargetError(f"no module named {module_part!r} (and no such file)") from exc
        raise


def _target(spec: str, obj: object) -> Target:
    if isinstance(obj, MCPServer):
        # An existing SDK server: served (and inspected) through mcp-core, its code unchanged.
        adopted = App(obj.name, version=obj.version, instructions=obj.instructions)
        adopted.add_source(MCPServerSource(obj))
        obj = adopted
    if isinstance(obj, App):
        return Target(spec, obj, obj.server, obj.invoker)
    if isinstance(obj, McpServer):
        invoker = Invoker()
        return Target(spec, obj, obj, invoker)
    if all(callable(getattr(obj, method, None)) for method in _ROLE_METHODS):
        invoker = Invoker()
        return Target(spec, obj, McpServer(obj, invoker=invoker), invoker)  # type: ignore[arg-type]  # checked structurally above
    raise TargetError(
        f"{spec} is a {type(obj).__name__}, not an App, an McpServer, an SDK MCPServer or a registry "
        "(an object with the catalogue and resolver roles, load() and kinds())"
    )
