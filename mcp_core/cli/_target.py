"""Finding what a command line names: ``path/to/file.py[:obj]`` or ``pkg.mod[:obj]``.

The object named may be an ``App``, an ``McpServer``, a registry, the official SDK's ``MCPServer``
or low-level ``Server``, a ``fastmcp.FastMCP`` server, or a function taking no arguments (sync or
async) that returns one of them; servers that are not mcp-core's own are adopted into an ``App``
(see ``docs/adopt.md``).
"""

from __future__ import annotations

import asyncio
import difflib
import importlib
import importlib.machinery
import importlib.util
import inspect
import os
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, cast, final

import anyio

from mcp_core.app import App
from mcp_core.errors import TargetError
from mcp_core.handlers import Invoker
from mcp_core.server import ElementInvoker

if TYPE_CHECKING:
    from mcp_core.server import Deployment, McpServer, ServableRegistry

__all__ = ["Target", "TargetError", "load_target"]

_DEFAULT_NAMES: Final = ("app", "mcp", "server", "create_server", "create_app")
# mcp-core's own files and importlib's: left out of the traceback of a target that fails to import.
_PACKAGE_DIR: Final = str(Path(__file__).resolve().parents[1]) + os.sep
_IMPORTLIB_DIR: Final = str(Path(importlib.__file__).resolve().parent) + os.sep
# What a file that builds a server says: the one to suggest when a folder is named.
_SERVER_MARKS: Final = ("App(", "McpServer(", "MCPServer(", "FastMCP(", "Registry(")
_USUAL_NAMES: Final = ("server.py", "app.py", "main.py")


@final
@dataclass(frozen=True, slots=True)
class Target:
    """What a target resolved to: the object named, and its server, registry and invoker.

    ``invoker`` is the one that serves the target (an App's or McpServer's own, with its
    container); ``own_invoker`` is False for a bare registry, which the CLI serves with a plain
    ``Invoker()`` that knows no container. ``served`` gives the server (an App's is built, and
    the SDK imported, when first asked for: ADR 0115).
    """

    spec: str
    obj: object
    served: Callable[[], McpServer]
    invoker: ElementInvoker
    own_invoker: bool = True

    @property
    def server(self) -> McpServer:
        """The server serving the target."""
        return self.served()

    @property
    def registry(self) -> ServableRegistry:
        """The registry the target serves."""
        return self.server.registry


def load_target(spec: str, *, deployment: Callable[[], Deployment | None] | None = None) -> Target:
    """Import ``spec`` and find the App, McpServer or registry it names.

    Without ``:obj``, the module's global ``app``, ``mcp``, ``server``, ``create_server`` or
    ``create_app`` is used (the first found). A function taking no arguments is called (an async
    one run to completion) and what it returns is served.
    ``deployment`` is asked, after the import, for the deployment to serve in when the target
    brings none of its own (``mcp-core run`` reads it from the environment).
    """
    module_part, _, attribute = _split(spec)
    module = _import(module_part)
    if attribute:
        if not hasattr(module, attribute):
            raise TargetError(
                f"{module_part} has no attribute {attribute!r}; {_what_to_name(module_part, module)}"
            )
        obj = getattr(module, attribute)
    else:
        found = [name for name in _DEFAULT_NAMES if hasattr(module, name)]
        if not found:
            raise TargetError(
                f"{module_part} defines none of {', '.join(_DEFAULT_NAMES)}; "
                f"{_what_to_name(module_part, module)}"
            )
        obj = getattr(module, found[0])
    return _target(spec, _built(spec, obj), deployment)


def _what_to_name(module_part: str, module: object) -> str:
    """The next step when a module was named without a server it has: the servers it does have."""
    servers = [
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and (_is_server(value) or _is_registry(value))
    ]
    if servers:
        if len(servers) == 1:
            return f"it has a server at its top level: name it, {module_part}:{servers[0]}"
        named = _either([f"{module_part}:{name}" for name in servers[:3]])
        return f"it has {len(servers)} servers at its top level: name one, {named}"
    return (
        "it builds no server at its top level (an App, McpServer, SDK MCPServer, fastmcp server or "
        'registry); add one (app = App("name")), or name the function of no arguments that '
        f"returns it ({module_part}:create_server)"
    )


def _either(names: list[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


def _is_server(obj: object) -> bool:
    return isinstance(obj, App) or _is_sdk_bound(obj) or _is_fastmcp(obj)


# Classes of servers bound to the SDK: an instance exists only once its module is imported, so
# they are checked without importing the SDK (a plain App's start does not, ADR 0115).
_SDK_BOUND: Final = (
    ("mcp_core.server._binding", "McpServer"),
    ("mcp.server.mcpserver", "MCPServer"),
    ("mcp.server.lowlevel.server", "Server"),
)


def _is_sdk_bound(obj: object) -> bool:
    return any(isinstance(obj, cls) for cls in _loaded_classes(_SDK_BOUND))


def _loaded_classes(names: tuple[tuple[str, str], ...]) -> list[type]:
    """The classes named, of the modules among ``names`` that are imported already."""
    found = []
    for module_name, class_name in names:
        cls = vars(sys.modules[module_name]).get(class_name) if module_name in sys.modules else None
        if isinstance(cls, type):
            found.append(cls)
    return found


def _is_registry(obj: object) -> bool:
    from mcp_core.server import ServableRegistry  # noqa: PLC0415 -- not for an App (ADR 0115)

    return isinstance(obj, ServableRegistry)


def _is_fastmcp(obj: object) -> bool:
    # Checked by class without importing fastmcp: only a fastmcp object can be one.
    fastmcp = sys.modules.get("fastmcp")
    server_type = getattr(fastmcp, "FastMCP", None)
    return isinstance(server_type, type) and isinstance(obj, server_type)


def _built(spec: str, obj: object) -> object:
    """``obj``, or what it returns when it is a factory: a function called with no arguments."""
    if _is_server(obj) or isinstance(obj, type) or not callable(obj):
        return obj
    if _is_registry(obj):
        return obj  # a registry that happens to be callable
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return obj
    required = [
        name
        for name, parameter in signature.parameters.items()
        if parameter.default is inspect.Parameter.empty
        and parameter.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    if required:
        raise TargetError(
            f"{spec} is a function that needs arguments ({', '.join(required)}); name a function "
            "that takes none and returns the server, or the server itself"
        )
    try:
        built = obj()
        if inspect.isawaitable(built):
            built = _run_to_completion(built)
    except TargetError:
        raise
    except Exception as exc:
        raise TargetError(
            f"{spec}: the factory raised {type(exc).__name__}: {exc}; fix it and run again",
            details="".join(traceback.format_exception(exc)),
        ) from exc
    if not _is_server(built) and not _is_registry(built):
        raise TargetError(
            f"{spec} returned {_a(type(built).__name__)}, not an App, an McpServer, an SDK "
            "MCPServer or Server, a fastmcp server or a registry"
        )
    return built


def _a(noun: str) -> str:
    """``noun`` with its indefinite article: a dict, an int."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def _run_to_completion(awaitable: Any) -> object:
    """The result of an async factory, run to completion on an event loop of its own.

    The server it returns is then served on another loop: a factory must not leave it holding
    loop-bound resources (connections belong in the server's lifespan, entered when it serves).
    """

    async def wait() -> object:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return anyio.run(wait)
    # Loaded from inside a running loop (a test, an embedding host): run it on a thread's loop.
    box: dict[str, object] = {}

    def in_thread() -> None:
        try:
            box["value"] = anyio.run(wait)
        except BaseException as exc:  # noqa: BLE001 -- re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=in_thread, name="mcp-core-factory")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]  # a BaseException, stored above
    return box["value"]


def _app_like(server: Any) -> App:
    """An empty ``App`` that introduces itself as ``server`` does (its serverInfo, instructions)."""
    version = getattr(server, "version", None)
    return App(
        server.name,
        version=version if isinstance(version, str) else None,
        title=getattr(server, "title", None),
        description=getattr(server, "description", None),
        instructions=getattr(server, "instructions", None),
        website_url=getattr(server, "website_url", None),
        icons=getattr(server, "icons", None) or None,
    )


def _adopted(obj: object) -> App | None:
    """An ``App`` serving a server that is not mcp-core's own, or None for one that is."""
    if isinstance(obj, App) or not (_is_sdk_bound(obj) or _is_fastmcp(obj)):
        return None
    # Only an SDK-bound server gets here: the SDK is imported already.
    from mcp.server.lowlevel.server import Server as LowLevelServer  # noqa: PLC0415
    from mcp.server.mcpserver import MCPServer  # noqa: PLC0415

    from mcp_core.bridges import FastMCPSource, MCPServerSource, RemoteSource  # noqa: PLC0415

    if isinstance(obj, MCPServer):
        # An existing SDK server: served (and inspected) through mcp-core, its code unchanged.
        adopted = _app_like(obj)
        adopted.add_source(MCPServerSource(obj))
        return adopted
    if _is_fastmcp(obj):
        fastmcp_server: Any = obj
        adopted = _app_like(fastmcp_server)
        adopted.add_source(FastMCPSource(fastmcp_server))
        return adopted
    if isinstance(obj, LowLevelServer):
        adopted = _app_like(obj)
        adopted.add_source(RemoteSource(obj, name=obj.name, mode="legacy"))
        return adopted
    return None


def _deploy_app(spec: str, app: App, deployment: Deployment | None) -> None:
    if deployment is None:
        return
    try:
        app.deploy(deployment)
    except RuntimeError:
        raise TargetError(
            f"{spec} built its server before mcp-core could make it a worker; give the app "
            "App(..., deployment=Deployment.from_environment()) instead"
        ) from None


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
        return _import_file(module_part, path)
    try:
        return importlib.import_module(module_part)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (
            module_part == exc.name or module_part.startswith(f"{exc.name}.")
        ):
            raise TargetError(
                f"no module named {module_part!r} (and no such file); name a server file "
                f"(path/to/server.py), or install the module where mcp-core runs ({sys.executable})"
            ) from exc
        raise _import_failed(module_part, exc) from exc
    except Exception as exc:
        raise _import_failed(module_part, exc) from exc


def _import_file(module_part: str, path: Path) -> Any:
    if path.is_dir():
        raise TargetError(f"{module_part} is a folder; {_in_folder(path)}")
    if not path.is_file():
        raise TargetError(f"no such file: {module_part}; {_near(path)}")
    if path.suffix != ".py":
        collection = (
            f"; a collection written by `mcp-core dump` is served with "
            f"`mcp-core run --collection {module_part}` (CollectionFileSource in code)"
            if path.suffix == ".json"
            else ""
        )
        raise TargetError(
            f"{module_part} is not a Python file; name a server file (path/to/server.py) or a "
            f"module (pkg.mod){collection}"
        )
    folder = str(path.resolve().parent)
    # The file's folder comes first on the path, as `python file.py` would have it.
    sys.path.insert(0, folder)
    loaded = sys.modules.get(path.stem)
    if _is_file(getattr(loaded, "__file__", None), path):
        return loaded  # imported before, under its own name (as any import would reuse it)
    if _importable_as(path.stem, path, folder):
        # Imported under its own name, its functions have import paths ("server:add") that
        # another process can resolve, so `dump` can write them as references.
        try:
            return importlib.import_module(path.stem)
        except Exception as exc:
            raise _import_failed(module_part, exc) from exc
    name = f"_mcp_core_target_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TargetError(f"cannot import {module_part} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise _import_failed(module_part, exc) from exc
    return module


def _in_folder(folder: Path) -> str:
    """What to name instead of ``folder``: a Python file in it that builds a server, if any."""
    files = sorted(
        (p for p in folder.glob("*.py") if not p.name.startswith("_")),
        key=lambda p: (p.name not in _USUAL_NAMES, p.name),
    )
    servers = [p for p in files if any(m in _text(p) for m in _SERVER_MARKS)]
    if servers or files:
        return f"name a Python file in it, such as {(servers or files)[0]}, or a module (pkg.mod)"
    return "it holds no Python file; name a server file (path/to/server.py) or a module (pkg.mod)"


def _near(path: Path) -> str:
    """What to name instead of a missing ``path``: the Python files closest to its name."""
    folder = path.parent
    if not folder.is_dir():
        return f"{folder} is not a folder either; name a server file (path/to/server.py)"
    files = [p.name for p in folder.glob("*.py") if not p.name.startswith("_")]
    close = difflib.get_close_matches(path.name, files, n=3, cutoff=0.5) or sorted(files)[:3]
    if not close:
        return f"{folder.resolve()} holds no Python file; name a server file (path/to/server.py)"
    return f"did you mean {_either([str(folder / name) for name in close])}?"


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _import_failed(module_part: str, exc: Exception) -> TargetError:
    """The error for a target whose code raised: its own frames, and one line naming the spot."""
    # The traceback starts at _import's frame; past it are importlib's frames and the user's
    # code, which calls into libraries (mcp-core among them: a decorator refusing bad input).
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)[1:]
        if not frame.filename.startswith(("<frozen importlib", _PACKAGE_DIR, _IMPORTLIB_DIR))
    ]
    details = "".join(
        [
            *(
                ["Traceback (most recent call last):\n", *traceback.format_list(frames)]
                if frames
                else []
            ),
            *traceback.format_exception_only(exc),
        ]
    )
    if isinstance(exc, SyntaxError) and exc.filename:
        spot = f" at {Path(exc.filename).name}, line {exc.lineno}"
    elif frames:
        spot = f" at {Path(frames[-1].filename).name}, line {frames[-1].lineno}"
    else:
        spot = ""
    message = str(exc.msg if isinstance(exc, SyntaxError) else exc) or "(no message)"
    fix = "fix it and run again"
    if isinstance(exc, ModuleNotFoundError):
        fix = f"install it where mcp-core runs ({sys.executable}), or fix the import"
    return TargetError(
        f"cannot import {module_part}: {type(exc).__name__}{spot}: {message}; {fix}",
        details=details,
    )


def _importable_as(name: str, path: Path, folder: str) -> bool:
    """Whether ``import name`` from ``folder`` finds ``path`` itself, and nothing has that name yet."""
    if not name.isidentifier() or name in sys.modules:
        return False
    found = importlib.machinery.PathFinder.find_spec(name, [folder])
    return _is_file(getattr(found, "origin", None), path)


def _is_file(origin: object, path: Path) -> bool:
    return isinstance(origin, str) and Path(origin).resolve() == path.resolve()


def _target(spec: str, obj: object, deployment: Callable[[], Deployment | None] | None) -> Target:
    try:
        adopted = _adopted(obj)
    except ValueError as exc:  # a server that cannot be adopted as it is (the message says why)
        raise TargetError(f"{spec}: {exc}") from exc
    if adopted is not None:
        obj = adopted
    if isinstance(obj, App):
        if deployment is not None and obj.deployment is None:
            _deploy_app(spec, obj, deployment())
        app = obj
        return Target(spec, app, lambda: app.server, app.invoker)
    from mcp_core.server import McpServer  # noqa: PLC0415 -- an App needs none (ADR 0115)

    if isinstance(obj, McpServer):
        if deployment is not None and obj.deployment is None and deployment() is not None:
            raise TargetError(
                f"{spec} is an McpServer built without a deployment, so it cannot serve as a "
                "worker: build it with McpServer(..., deployment=Deployment.from_environment())"
            )
        server = obj
        return Target(spec, server, lambda: server, server.invoker)
    if _is_registry(obj):
        invoker = Invoker()
        worker = deployment() if deployment is not None else None
        built = McpServer(cast("ServableRegistry", obj), invoker=invoker, deployment=worker)
        return Target(spec, obj, lambda: built, invoker, own_invoker=False)
    raise TargetError(
        f"{spec} is {_a(type(obj).__name__)}, not an App, an McpServer, an SDK MCPServer or Server, "
        "a fastmcp server, a function of no arguments returning one, or a registry (an object "
        "with the catalogue and resolver roles, load() and kinds())"
    )
