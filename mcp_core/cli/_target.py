"""Finding what a command line names: ``path/to/file.py[:obj]`` or ``pkg.mod[:obj]``."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, final

from mcp_core.app import App
from mcp_core.handlers import Invoker
from mcp_core.server import ElementInvoker, McpServer, ServableRegistry

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
    """What a target resolved to: the object named, and its server, registry and invoker.

    ``invoker`` is the one that serves the target (an App's or McpServer's own, with its
    container); ``own_invoker`` is False for a bare registry, which the CLI serves with a plain
    ``Invoker()`` that knows no container.
    """

    spec: str
    obj: object
    server: McpServer
    invoker: ElementInvoker
    own_invoker: bool = True

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
        folder = str(path.resolve().parent)
        # The file's folder comes first on the path, as `python file.py` would have it.
        sys.path.insert(0, folder)
        loaded = sys.modules.get(path.stem)
        if _is_file(getattr(loaded, "__file__", None), path):
            return loaded  # imported before, under its own name (as any import would reuse it)
        if _importable_as(path.stem, path, folder):
            # Imported under its own name, its functions have import paths ("server:add") that
            # another process can resolve, so `dump` can write them as references.
            return importlib.import_module(path.stem)
        name = f"_mcp_core_target_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise TargetError(f"cannot import {module_part} as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(module_part)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module_part.startswith(exc.name):
            raise TargetError(f"no module named {module_part!r} (and no such file)") from exc
        raise


def _importable_as(name: str, path: Path, folder: str) -> bool:
    """Whether ``import name`` from ``folder`` finds ``path`` itself, and nothing has that name yet."""
    if not name.isidentifier() or name in sys.modules:
        return False
    found = importlib.machinery.PathFinder.find_spec(name, [folder])
    return _is_file(getattr(found, "origin", None), path)


def _is_file(origin: object, path: Path) -> bool:
    return isinstance(origin, str) and Path(origin).resolve() == path.resolve()


def _target(spec: str, obj: object) -> Target:
    if isinstance(obj, App):
        return Target(spec, obj, obj.server, obj.invoker)
    if isinstance(obj, McpServer):
        return Target(spec, obj, obj, obj.invoker)
    if all(callable(getattr(obj, method, None)) for method in _ROLE_METHODS):
        invoker = Invoker()
        server = McpServer(obj, invoker=invoker)  # type: ignore[arg-type]  # checked structurally above
        return Target(spec, obj, server, invoker, own_invoker=False)
    raise TargetError(
        f"{spec} is a {type(obj).__name__}, not an App, an McpServer or a registry "
        "(an object with the catalogue and resolver roles, load() and kinds())"
    )
