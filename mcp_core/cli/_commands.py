"""The ``mcp-core`` commands: run, inspect, dump."""

from __future__ import annotations

import argparse
import errno
import ipaddress
import json
import logging
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

import anyio

from mcp_core.cli._target import Target, load_target
from mcp_core.elements import Element, ElementCollection, ElementKind, HandlerRef
from mcp_core.errors import (
    DeploymentError,
    ElementNotFoundError,
    ListenError,
    NotSerializableError,
    TargetError,
)
from mcp_core.handlers._references import by_reference
from mcp_core.registry import ConfiguredSources, ElementOrigin, collect
from mcp_core.server import log_to_stderr
from mcp_core.server._environment import ENVIRONMENT, describes_deployment
from mcp_core.sources import DiagnosticsReport, ElementChecker, SourceDiagnostic

if TYPE_CHECKING:
    from mcp_core.app import App
    from mcp_core.server import Deployment, McpServer

__all__ = ["run_command"]

# Why a port cannot be listened on, when another port would do.
_PORT_ERRORS: Final = frozenset({errno.EADDRINUSE, errno.EACCES})
# --responses, as McpServer.streamable_http_app's json_response.
_RESPONSES: Final[dict[str, bool | None]] = {"auto": None, "json": True, "sse": False}
_KIND_TITLES: Final = (
    (ElementKind.TOOL, "Tools"),
    (ElementKind.RESOURCE, "Resources"),
    (ElementKind.RESOURCE_TEMPLATE, "Resource templates"),
    (ElementKind.PROMPT, "Prompts"),
)


def _say(stream: TextIO, text: str) -> None:
    stream.write(text + "\n")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-core",
        description="Run, inspect or dump an MCP server built with mcp-core.",
        epilog="TARGET is a file (path/to/server.py) or a module (pkg.mod), optionally followed by "
        ":name; without a name, the global `app`, `mcp`, `server`, `create_server` or "
        "`create_app` is used. It may be an App, an McpServer, the SDK's MCPServer or Server, a "
        "fastmcp server, or a function of no arguments returning one.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="serve TARGET over stdio or streamable HTTP")
    _target_arguments(run)
    run.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (the default: a client starts the server) or streamable HTTP",
    )
    run.add_argument(
        "--host", default="127.0.0.1", help="HTTP: interface to bind (default %(default)s)"
    )
    run.add_argument("--port", type=int, default=8000, help="HTTP: port (default %(default)s)")
    run.add_argument("--path", default="/mcp", help="HTTP: endpoint path (default %(default)s)")
    run.add_argument(
        "--responses",
        choices=("auto", "json", "sse"),
        default="auto",
        help="HTTP: how a request is answered: JSON unless it needs a stream (auto, the default), "
        "always JSON (no server-to-client requests during a call), or always SSE",
    )
    run.add_argument(
        "--trusted-proxy",
        metavar="ADDRESS",
        type=_ip_address,
        action="append",
        default=[],
        help="HTTP: a proxy address whose X-Forwarded-For names the client (e.g. the HAProxy "
        "in front, with `option forwardfor`); repeat for several. Clients are told apart by "
        "bearer token, else by address, for the per-client limits (default: none trusted)",
    )
    run.add_argument(
        "--max-sessions-per-client",
        type=_positive_int,
        metavar="N",
        help="HTTP: sessions one client may hold at once (default: the server's own, 100)",
    )
    run.add_argument(
        "--metrics-port",
        type=int,
        metavar="PORT",
        help="serve Prometheus metrics at http://127.0.0.1:PORT/metrics, for any transport "
        "(needs the [metrics] extra; 0 picks a free port, said on stderr)",
    )
    run.add_argument(
        "--metrics-path",
        metavar="PATH",
        help="HTTP: serve Prometheus metrics at PATH of the app too (e.g. /metrics)",
    )
    run.add_argument(
        "--status-path",
        metavar="PATH",
        help="HTTP: serve the HTML status page at PATH (e.g. /status; behind the endpoint's "
        "authentication when it has one)",
    )
    run.add_argument(
        "--drain-time",
        type=_seconds,
        metavar="SECONDS",
        help="HTTP: on SIGTERM or SIGINT, how long requests in flight may take to finish while "
        "the server, reporting itself not ready, takes nothing new (default 10)",
    )
    run.add_argument(
        "--drain-delay",
        type=_seconds,
        metavar="SECONDS",
        help="HTTP: on SIGTERM or SIGINT, how long the server, reporting itself not ready, "
        "still accepts requests before it drains: the time its load balancer takes to stop "
        "sending (default 0)",
    )
    run.add_argument(
        "--page-size",
        type=_positive_int,
        help="elements per list page (default: the server's own)",
    )
    run.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,  # "debug" as uvicorn spells it, or "DEBUG" as logging does
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help="server log level, in either case (default %(default)s); logs go to stderr",
    )
    worker = run.add_argument_group(
        "one worker of several (docs/deployment.md)",
        "Each flag sets the environment variable named, which Deployment.from_environment() "
        "(and so the target's own code) reads; all three are needed.",
    )
    worker.add_argument(
        "--worker-id",
        metavar="ID",
        help=f"this worker's id in the deployment ({ENVIRONMENT['worker']})",
    )
    worker.add_argument(
        "--redis", metavar="URL", help=f"the Redis every worker shares ({ENVIRONMENT['redis']})"
    )
    worker.add_argument(
        "--secret-file",
        metavar="PATH",
        help=f"file holding the secret every worker shares ({ENVIRONMENT['secret_file']})",
    )
    worker.add_argument(
        "--namespace",
        metavar="NAME",
        help=f"prefix of the deployment's Redis keys ({ENVIRONMENT['namespace']}; default mcp-core)",
    )

    inspect = commands.add_parser(
        "inspect", help="show TARGET's catalogue, capabilities and every diagnostic"
    )
    _target_arguments(inspect)
    inspect.add_argument("--json", action="store_true", help="print one JSON document")
    inspect.add_argument(
        "--strict",
        action="store_true",
        help="exit with status 1 when there is any diagnostic or problem",
    )

    dump = commands.add_parser(
        "dump",
        help="write TARGET's elements as a collection file (serve it with CollectionFileSource)",
    )
    dump.add_argument("target", metavar="TARGET")
    dump.add_argument("-o", "--output", required=True, help="file to write ('-' for stdout)")
    return parser


def _target_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("target", metavar="TARGET", nargs="?")
    command.add_argument(
        "--collection",
        metavar="FILE",
        help="instead of TARGET: a collection file written by `mcp-core dump`, served through "
        "CollectionFileSource (its handlers import as they did where it was dumped)",
    )


def _positive_int(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return number


def _seconds(text: str) -> float:
    try:
        number = float(text)
    except ValueError:
        number = -1.0
    if not (number >= 0 and math.isfinite(number)):
        raise argparse.ArgumentTypeError(f"expected a number of seconds from 0 up, got {text!r}")
    return number


def _ip_address(text: str) -> str:
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected the IP address the proxy connects from (e.g. 127.0.0.1), got {text!r}"
        ) from None


def run_command(argv: Sequence[str] | None) -> int:
    """Parse ``argv`` and run the command; the exit status (see :func:`mcp_core.cli.main`)."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command != "dump" and (args.target is None) == (args.collection is None):
        parser.error(
            f"{args.command} takes a TARGET or --collection FILE: "
            f"mcp-core {args.command} server.py, or mcp-core {args.command} --collection catalog.json"
        )
    try:
        deployment = _deployment(args)
    except DeploymentError as exc:
        _say(sys.stderr, f"mcp-core: {exc}")
        return 2
    try:
        if args.command != "dump" and args.collection is not None:
            target = _collection_target(args.collection, deployment)
        else:
            target = load_target(args.target, deployment=lambda: deployment)
    except TargetError as exc:
        if exc.details:
            sys.stderr.write(exc.details)
        _say(sys.stderr, f"mcp-core: {exc}")
        return 2
    if args.command == "run":
        return _run(target, args)
    # What the registry logs while loading is reported as diagnostics; keep stderr for failures.
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
    if args.command == "inspect":
        return anyio.run(_inspect, target, args.json, args.strict)
    try:
        return anyio.run(_dump, target, args.output)
    except OSError as exc:
        _say(sys.stderr, f"mcp-core: cannot write {args.output}: {exc.strerror or exc}")
        return 1


def _collection_target(path: str, deployment: Deployment | None) -> Target:
    """An App serving the collection file at ``path``, named after the file.

    The file's folder comes first on the import path, as for a server file: the handlers of a
    collection dumped from ``server.py`` are ``server:...`` references that import from there.
    """
    from mcp_core.app import App  # noqa: PLC0415 -- the serving stack, once the arguments are read
    from mcp_core.sources import CollectionFileSource  # noqa: PLC0415 -- likewise

    file = Path(path)
    if not file.is_file():
        raise TargetError(
            f"no such file: {path}; write one with `mcp-core dump server.py -o {path}`"
            if not file.exists()
            else f"{path} is not a file; name a collection file written by `mcp-core dump`"
        )
    sys.path.insert(0, str(file.resolve().parent))
    app = App(file.stem, deployment=deployment)
    app.add_source(CollectionFileSource(file))
    return Target(f"--collection {path}", app, lambda: app.server, app.invoker)


def _deployment(args: argparse.Namespace) -> Deployment | None:
    """The deployment ``mcp-core run`` serves in (flags, then the environment), or None.

    Read before the target is imported: its code may read the same settings. A plain start
    imports no deployment (nor the SDK, ADR 0115).
    """
    if args.command != "run":
        return None
    _export_worker_settings(args)
    if not describes_deployment():
        return None
    from mcp_core.server import Deployment  # noqa: PLC0415

    return Deployment.from_environment()


def _export_worker_settings(args: argparse.Namespace) -> None:
    """The worker flags, as the environment variables the target's code reads too."""
    for flag, variable in (
        (args.worker_id, ENVIRONMENT["worker"]),
        (args.redis, ENVIRONMENT["redis"]),
        (args.secret_file, ENVIRONMENT["secret_file"]),
        (args.namespace, ENVIRONMENT["namespace"]),
    ):
        if flag is not None:
            os.environ[variable] = flag


def _run(target: Target, args: argparse.Namespace) -> int:
    # Logs go to stderr: on stdio, stdout is the protocol.
    log_to_stderr(args.log_level)
    app = _prelude_app(target, args)
    if app is not None:
        stopped = app._serve_stdio()  # noqa: SLF001 -- the App's own start (ADR 0115)
        return 0 if stopped is None else 128 + stopped
    return _run_server(target, args)


def _run_server(target: Target, args: argparse.Namespace) -> int:
    server = target.server
    if args.page_size is not None:
        server.handlers.page_size = args.page_size
    options = _http_options(args)
    if options is None:
        _say(sys.stderr, "mcp-core: --metrics-path and --status-path need --transport http")
        return 2
    try:
        stop_metrics = _serve_metrics(server, args.metrics_port)
    except OSError as exc:
        _say(sys.stderr, f"mcp-core: cannot serve metrics on port {args.metrics_port}: {exc}")
        return 1
    try:
        stopped = server.run(
            args.transport, host=args.host, port=args.port, path=args.path, **options
        )
    except ListenError as exc:
        hint = " (--port 0 picks a free one)" if exc.errno in _PORT_ERRORS else ""
        _say(sys.stderr, f"mcp-core: {exc}{hint}")
        return 1
    except DeploymentError as exc:  # this worker does not fit its deployment (its secret, its id)
        _say(sys.stderr, f"mcp-core: {exc}")
        return 2
    finally:
        if stop_metrics is not None:
            stop_metrics()
    if stopped is None:
        return 0
    # An HTTP server stopped by a signal drained (ADR 0095): an orderly stop unless the drain
    # time cut requests short.
    drained = args.transport == "http" and server.lifecycle.draining and not server.lifecycle.cut
    return 0 if drained else 128 + stopped


def _prelude_app(target: Target, args: argparse.Namespace) -> App | None:
    """The App to serve over stdio with its prelude (ADR 0115), when nothing asks for its server."""
    from mcp_core.app import App  # noqa: PLC0415 -- the serving stack, once the arguments are read

    app = target.obj
    if (
        args.transport == "stdio"
        and isinstance(app, App)
        and args.page_size is None
        and args.metrics_port is None
        and _http_options(args) is not None
        and app._prelude_serves()  # noqa: SLF001 -- the App's own start
    ):
        return app
    return None


def _http_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """The streamable HTTP app's options from ``args``; None when an HTTP-only flag is misplaced."""
    options: dict[str, Any] = {}
    pages = {"metrics_path": args.metrics_path, "status_path": args.status_path}
    if args.transport != "http":
        return None if any(value is not None for value in pages.values()) else options
    options["json_response"] = _RESPONSES[args.responses]
    options["trusted_proxies"] = args.trusted_proxy
    if args.max_sessions_per_client is not None:
        options["max_sessions_per_client"] = args.max_sessions_per_client
    if args.drain_time is not None:
        options["drain_time"] = args.drain_time
    if args.drain_delay is not None:
        options["drain_delay"] = args.drain_delay
    options.update((name, value) for name, value in pages.items() if value is not None)
    return options


def _serve_metrics(server: McpServer, port: int | None) -> Callable[[], None] | None:
    """With ``--metrics-port``: metrics served on that port (said on stderr), and how to stop."""
    if port is None:
        return None
    stop = server.metrics().serve_on(port)
    _say(sys.stderr, f"mcp-core: metrics at http://127.0.0.1:{stop.port}/metrics")
    return stop


async def _report(target: Target) -> dict[str, Any]:
    registry = target.registry
    problems: list[dict[str, str]] = []
    unchecked: list[dict[str, str]] = []
    try:
        collection: ElementCollection | None = await collect(registry, registry)
    except ElementNotFoundError as exc:
        collection = None
        problems.append({"ref": str(exc.ref), "problem": str(exc)})
    if collection is None:
        definitions: list[Any] = [
            *await registry.tools(),
            *await registry.resources(),
            *await registry.resource_templates(),
            *await registry.prompts(),
        ]
    else:
        definitions = [element.definition for element in collection]
        for element in collection:
            found, reason = _check(target, element)
            problems.extend({"ref": str(element.ref), "problem": problem} for problem in found)
            if reason is not None:
                unchecked.append({"ref": str(element.ref), "reason": reason})
    origins = registry if isinstance(registry, ElementOrigin) else None
    catalogue = {
        label: [
            _with_origin(d.to_wire(), origins.origin(d.ref) if origins is not None else None)
            for d in definitions
            if d.ref.kind is kind
        ]
        for kind, label in _KIND_TITLES
    }
    lowlevel = target.server.lowlevel
    found_diagnostics: Sequence[SourceDiagnostic] = (
        registry.diagnostics() if isinstance(registry, DiagnosticsReport) else ()
    )
    sources = registry.sources if isinstance(registry, ConfiguredSources) else ()
    return {
        "target": target.spec,
        "server": {"name": lowlevel.name, "version": lowlevel.version},
        "capabilities": target.server.capabilities(),
        "sources": [{"source": repr(source), "priority": priority} for source, priority in sources],
        "health": target.server.health().to_json(),
        "elements": catalogue,
        "diagnostics": [
            {
                "kind": d.kind,
                "source": d.source,
                "ref": str(d.ref) if d.ref else None,
                "message": d.message,
            }
            for d in found_diagnostics
        ],
        "problems": problems,
        "unchecked": unchecked,
    }


def _with_origin(wire: dict[str, Any], origin: str | None) -> dict[str, Any]:
    # Where an element comes from, for aggregated servers; kept out of the definition's own keys.
    if origin is not None:
        wire["x-mcp-core-source"] = origin
    return wire


def _check(target: Target, element: Element) -> tuple[list[str], str | None]:
    """The element's problems found ahead of time, and why it was not checked (None: it was).

    Checked with the invoker that serves the target (an App's or McpServer's own, with its
    container). A bare registry is served by a plain Invoker that knows no container, so a
    handler reference that is not an import path (a container id) is left unchecked rather
    than reported as unresolvable.
    """
    invoker = target.invoker
    if not isinstance(invoker, ElementChecker):
        return [], f"the server's invoker ({type(target.invoker).__qualname__}) has no check()"
    if not target.own_invoker and _needs_container(element):
        return [], "its handler is a container id; the registry alone brings no container"
    try:
        return list(invoker.check(element)), None
    except Exception as exc:  # noqa: BLE001 -- inspect reports a crashing check as the element's problem
        return [f"checking it raised {type(exc).__name__}: {exc}"], None


def _needs_container(element: Element) -> bool:
    handlers = [element.handler, *(element.completions or {}).values()]
    return any(isinstance(h, HandlerRef) and not h.is_import_path for h in handlers)


async def _inspect(target: Target, as_json: bool, strict: bool) -> int:
    report = await _report(target)
    if as_json:
        _say(sys.stdout, json.dumps(report, indent=2, ensure_ascii=False))
    else:
        _print_report(report, sys.stdout)
    return 1 if strict and (report["diagnostics"] or report["problems"]) else 0


def _print_report(report: dict[str, Any], out: TextIO) -> None:
    server = report["server"]
    version = f" {server['version']}" if server["version"] else ""
    _say(out, f"{report['target']}: server {server['name']!r}{version}")
    capabilities = report["capabilities"]
    shown = []
    for name, options in capabilities.items():
        if name in ("experimental", "extensions") and not options:
            continue
        flags = [key for key, value in (options or {}).items() if value is True]
        shown.append(f"{name}({', '.join(flags)})" if flags else name)
    _say(out, f"capabilities: {', '.join(shown) or 'none'}")
    _say(out, f"sources ({len(report['sources'])}):")
    states = {h["source"]: h for h in report["health"]["sources"]}
    for source in report["sources"]:
        health = states.get(source["source"])
        state = f" - {_health_line(health)}" if health is not None else ""
        _say(out, f"  [{source['priority']:>4}] {source['source']}{state}")
    for _, label in _KIND_TITLES:
        items = report["elements"][label]
        _say(out, f"{label} ({len(items)}):")
        for item in items:
            key = (
                item.get("name")
                if label in ("Tools", "Prompts")
                else item.get("uri") or item.get("uriTemplate")
            )
            description = (item.get("description") or "").strip().splitlines()
            source = item.get("x-mcp-core-source")
            line = f"  {key}" + (f" - {description[0]}" if description else "")
            _say(out, line + (f"  [{source}]" if source else ""))
    diagnostics = report["diagnostics"]
    _say(out, f"diagnostics ({len(diagnostics)}):")
    for d in diagnostics:
        about = f" {d['ref']}:" if d["ref"] else ""
        _say(out, f"  [{d['kind']}] {d['source']}:{about} {d['message']}")
    problems = report["problems"]
    _say(out, f"problems found ahead of time ({len(problems)}):")
    for p in problems:
        head = f"{p['ref']}: "
        text = p["problem"].removeprefix(head)
        _say(out, f"  {head}{text}")
    unchecked = report["unchecked"]
    if unchecked:
        _say(out, f"not checked ahead of time ({len(unchecked)}):")
        for u in unchecked:
            _say(out, f"  {u['ref']}: {u['reason']}")


def _health_line(health: dict[str, Any]) -> str:
    """``ok, 12 elements`` or ``down (3 failures): <last error>``, for the sources list."""
    state, elements = health["state"], health["elements"]
    served = f", {elements} elements" if elements is not None else ""
    if state in ("ok", "pending"):
        return f"{state}{served}"
    return f"{state}{served} ({health['failures']} failures): {health['lastError']}"


async def _dump(target: Target, output: str) -> int:
    try:
        found = await collect(target.registry, target.registry)
    except ElementNotFoundError as exc:
        _say(sys.stderr, f"mcp-core: cannot dump {target.spec}: {exc}")
        return 1
    # Module-level functions and classes are written as their import paths, so the file loads
    # back (CollectionFileSource) wherever those modules import.
    collection = ElementCollection(by_reference(element) for element in found)
    try:
        text = collection.to_json(indent=2)
    except NotSerializableError as exc:
        _say(
            sys.stderr,
            f"mcp-core: cannot dump {target.spec}: {exc} Only module-level functions and classes "
            "can be written as references (pkg.mod:name); define these handlers at module level, "
            "or declare them as HandlerRef",
        )
        return 1
    if output == "-":
        sys.stdout.write(text + "\n")
    else:
        await anyio.Path(output).write_text(text + "\n", encoding="utf-8")
        _say(sys.stderr, f"mcp-core: wrote {len(collection)} elements to {output}")
    return 0
