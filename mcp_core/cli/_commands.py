"""The ``mcp-core`` commands: run, inspect, dump."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from typing import Any, Final, TextIO

import anyio

from mcp_core.cli._target import Target, TargetError, load_target
from mcp_core.elements import Element, ElementCollection, ElementKind
from mcp_core.errors import NotSerializableError
from mcp_core.sources import SourceDiagnostic

__all__ = ["main"]

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
        ":name; without a name, the global `app`, `mcp` or `server` is used.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="serve TARGET over stdio or streamable HTTP")
    run.add_argument("target", metavar="TARGET")
    run.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    run.add_argument(
        "--host", default="127.0.0.1", help="HTTP: interface to bind (default %(default)s)"
    )
    run.add_argument("--port", type=int, default=8000, help="HTTP: port (default %(default)s)")
    run.add_argument("--path", default="/mcp", help="HTTP: endpoint path (default %(default)s)")
    run.add_argument(
        "--page-size", type=int, help="elements per list page (default: the server's own)"
    )
    run.add_argument(
        "--log-level",
        default="WARNING",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help="server log level; logs go to stderr",
    )

    inspect = commands.add_parser(
        "inspect", help="show TARGET's catalogue, capabilities and every diagnostic"
    )
    inspect.add_argument("target", metavar="TARGET")
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


def main(argv: Sequence[str] | None = None) -> int:
    """The ``mcp-core`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        target = load_target(args.target)
    except TargetError as exc:
        _say(sys.stderr, f"mcp-core: {exc}")
        return 2
    if args.command == "run":
        return _run(target, args)
    # What the registry logs while loading is reported as diagnostics; keep stderr for failures.
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
    if args.command == "inspect":
        return anyio.run(_inspect, target, args.json, args.strict)
    return anyio.run(_dump, target, args.output)


def _run(target: Target, args: argparse.Namespace) -> int:
    # Logs go to stderr: on stdio, stdout is the protocol.
    logging.basicConfig(
        level=args.log_level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    server = target.server
    if args.page_size is not None:
        server.handlers.page_size = args.page_size
    if args.transport == "stdio":
        anyio.run(server.run_stdio)
        return 0
    _say(
        sys.stderr, f"mcp-core: serving {target.spec} at http://{args.host}:{args.port}{args.path}"
    )

    async def serve() -> None:
        await server.run_http(host=args.host, port=args.port, path=args.path)

    anyio.run(serve)
    return 0


async def _report(target: Target) -> dict[str, Any]:
    registry = target.registry
    elements = getattr(registry, "elements", None)
    collection: ElementCollection | None = await elements() if callable(elements) else None
    if collection is None:
        definitions: list[Any] = [
            *await registry.tools(),
            *await registry.resources(),
            *await registry.resource_templates(),
            *await registry.prompts(),
        ]
        catalogue = {
            label: [d.to_wire() for d in definitions if d.ref.kind is kind]
            for kind, label in _KIND_TITLES
        }
        problems: list[dict[str, str]] = []
    else:
        catalogue = {
            label: [e.definition.to_wire() for e in collection if e.kind is kind]
            for kind, label in _KIND_TITLES
        }
        problems = [
            {"ref": str(element.ref), "problem": problem}
            for element in collection
            for problem in _check(target, element)
        ]
    lowlevel = target.server.lowlevel
    diagnostics = getattr(registry, "diagnostics", None)
    found: Sequence[SourceDiagnostic] = diagnostics() if callable(diagnostics) else ()
    sources = getattr(registry, "sources", ())
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
            for d in found
        ],
        "problems": problems,
    }


def _check(target: Target, element: Element) -> list[str]:
    try:
        return target.invoker.check(element)
    except Exception as exc:  # noqa: BLE001 -- inspect reports a crashing check as the element's problem
        return [f"checking it raised {type(exc).__name__}: {exc}"]


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
            _say(out, f"  {key}" + (f" - {description[0]}" if description else ""))
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


def _health_line(health: dict[str, Any]) -> str:
    """``ok, 12 elements`` or ``down (3 failures): <last error>``, for the sources list."""
    state, elements = health["state"], health["elements"]
    served = f", {elements} elements" if elements is not None else ""
    if state in ("ok", "pending"):
        return f"{state}{served}"
    return f"{state}{served} ({health['failures']} failures): {health['lastError']}"


async def _dump(target: Target, output: str) -> int:
    elements = getattr(target.registry, "elements", None)
    if not callable(elements):
        _say(
            sys.stderr,
            f"mcp-core: {target.spec}'s registry cannot list its elements (it has no elements())",
        )
        return 2
    collection: ElementCollection = await elements()
    try:
        text = collection.to_json(indent=2)
    except NotSerializableError as exc:
        _say(sys.stderr, f"mcp-core: cannot dump {target.spec}: {exc}")
        return 1
    if output == "-":
        sys.stdout.write(text + "\n")
    else:
        await anyio.Path(output).write_text(text + "\n", encoding="utf-8")
        _say(sys.stderr, f"mcp-core: wrote {len(collection)} elements to {output}")
    return 0
