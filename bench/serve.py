"""A benchmark server process: one library's app with N tools, served as a user would serve it.

Started by ``bench/probe.py`` (the raw client), which times it from the outside::

    python bench/serve.py mcp-core --size 1000 --cache /tmp/mcp-core-bench            # stdio
    python bench/serve.py mcpserver --size 1000 --cache /tmp/mcp-core-bench --http 3  # HTTP

This file plays the user's application: import the library, create its server object, import
the generated catalogue (N ``def``s under the library's own ``@app.tool`` decorator), then serve
with the library's own entry point: ``App.run()``, ``MCPServer.run()`` and ``FastMCP.run()`` over
stdio. Over streamable HTTP every library's own ASGI app (``App.asgi()``,
``MCPServer.streamable_http_app()``, ``FastMCP.run_http_async``) runs under uvicorn on a
listening socket the client bound on 127.0.0.1 and handed down as file descriptor ``--http FD``
(so the client can connect before the server is up, as it writes into the stdio pipe before the
server reads, and no port can be taken in between). ``floor`` is no library: a bare server
answering the same JSON from bytes built at start (``bench/_floor.py``).

Imports stay inside the branches: the process pays only for the library it serves.
"""

from __future__ import annotations

import argparse
import importlib
import socket
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from bench import _catalogue  # noqa: E402 -- after the path is set; a few stdlib imports only

LIBS = ("mcp-core", "mcpserver", "fastmcp", "floor")


def command(args: argparse.Namespace) -> list[str]:
    """The command line running this script for a client's parsed ``args``.

    ``args`` has ``lib``, ``size``, ``cache``, ``module_size``, ``dump`` and ``json_response``;
    add ``--http FD`` to serve streamable HTTP.
    """
    line = [sys.executable, str(Path(__file__).resolve()), args.lib, "--size", str(args.size)]
    if args.cache is not None:
        line += ["--cache", str(args.cache), "--module-size", str(args.module_size)]
    if args.dump is not None:
        line += ["--dump", str(args.dump)]
    if args.json_response:
        line.append("--json-response")
    return line


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="One benchmark server (started by bench/probe.py)."
    )
    parser.add_argument("lib", choices=LIBS)
    parser.add_argument("--size", type=int, required=True, help="tools in the catalogue")
    parser.add_argument("--cache", type=Path, help="folder of the generated catalogues")
    parser.add_argument("--module-size", type=int, default=1000, help="tools per generated module")
    parser.add_argument(
        "--http", type=int, metavar="FD", help="serve streamable HTTP on this listening socket"
    )
    parser.add_argument(
        "--json-response",
        action="store_true",
        help="HTTP: answer requests with one JSON body instead of an SSE stream",
    )
    parser.add_argument(
        "--dump", type=Path, help="mcp-core only: serve this dumped collection (warm start)"
    )
    parser.add_argument(
        "--uvicorn",
        metavar="HTTP/LOOP",
        help="HTTP: uvicorn's protocol and event loop, e.g. httptools/uvloop (default: auto/auto)",
    )
    return parser


def _declare(app: Any, size: int, cache: Path, module_size: int) -> None:
    """Import the generated catalogue: N decorated ``def`` statements on ``app``."""
    holder = ModuleType(_catalogue.HOLDER_MODULE)
    holder.app = app  # type: ignore[attr-defined]  # the generated modules import it
    sys.modules[_catalogue.HOLDER_MODULE] = holder
    sys.path.insert(0, str(cache))
    importlib.import_module(_catalogue.package_name("cat", size, module_size))


_UVICORN: list[str] = ["auto", "auto"]
"""uvicorn's HTTP protocol and event loop (``--uvicorn``)."""


def _uvicorn(asgi: Any, fd: int) -> None:
    """Serve ``asgi`` on the inherited socket, configured as the libraries' own runners do."""
    import uvicorn  # noqa: PLC0415 -- HTTP only

    http, loop = _UVICORN
    config = uvicorn.Config(asgi, log_level="warning", lifespan="on", http=http, loop=loop)
    uvicorn.Server(config).run(sockets=[socket.socket(fileno=fd)])


def _mcp_core(args: argparse.Namespace) -> None:
    from mcp_core.app import App  # noqa: PLC0415

    app = App("bench")
    if args.dump is not None:
        from mcp_core.elements import ElementKind  # noqa: PLC0415
        from mcp_core.sources import CollectionFileSource  # noqa: PLC0415

        # The dump's handlers are import paths into the warm catalogue package.
        sys.path.insert(0, str(args.dump.parent))
        app.add_source(CollectionFileSource(args.dump, kinds=ElementKind.TOOL))
    else:
        _declare(app, args.size, args.cache, args.module_size)
    if args.http is None:
        app.run()
    else:
        # Without the flag, mcp-core's default: JSON unless a request needs a stream (ADR 0053).
        # Loading at startup, as mcp-core's own HTTP runner (`run("http")`) does.
        asgi = app.asgi(json_response=True if args.json_response else None, preload=True)
        _uvicorn(asgi, args.http)


def _mcpserver(args: argparse.Namespace) -> None:
    from mcp.server.mcpserver import MCPServer  # noqa: PLC0415

    app = MCPServer("bench", log_level="WARNING")
    _declare(app, args.size, args.cache, args.module_size)
    if args.http is None:
        app.run()
    else:
        _uvicorn(app.streamable_http_app(json_response=args.json_response), args.http)


def _fastmcp(args: argparse.Namespace) -> None:
    fastmcp: Any = importlib.import_module("fastmcp")  # optional: the bench extra

    app = fastmcp.FastMCP("bench")
    _declare(app, args.size, args.cache, args.module_size)
    if args.http is None:
        app.run(show_banner=False)
    else:
        import anyio  # noqa: PLC0415

        async def serve() -> None:
            await app.run_http_async(
                show_banner=False,
                log_level="WARNING",
                json_response=args.json_response,
                sockets=[socket.socket(fileno=args.http)],
            )

        anyio.run(serve)


def _floor(args: argparse.Namespace) -> None:
    from bench import _floor  # noqa: PLC0415

    answers = _floor.Answers.build(args.size)
    if args.http is None:
        _floor.serve_stdio(answers)
    else:
        _uvicorn(_floor.asgi(answers), args.http)


def main(argv: list[str] | None = None) -> int:
    """Serve until the client hangs up (stdio: end of input; HTTP: SIGINT or SIGTERM)."""
    args = _parser().parse_args(argv)
    if args.uvicorn:
        _UVICORN[:] = args.uvicorn.split("/", 1)
    if args.lib != "floor" and args.dump is None and args.cache is None:
        raise SystemExit(f"{args.lib} needs --cache (the generated catalogues)")
    if args.dump is not None and args.lib != "mcp-core":
        raise SystemExit("--dump is mcp-core's warm start")
    {"mcp-core": _mcp_core, "mcpserver": _mcpserver, "fastmcp": _fastmcp, "floor": _floor}[
        args.lib
    ](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
