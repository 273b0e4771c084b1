"""A hostile MCP backend: the SDK's low-level server, sending whatever its plan says.

Run as ``python hostile_backend.py PORT PLAN`` (``PLAN`` a JSON file, read once at start) and
served over streamable HTTP on 127.0.0.1, or as ``python hostile_backend.py --stdio PLAN`` and
served over stdio (it then writes its pid to ``PLAN + ".pid"``, so that a test can end it and
the gateway that started it starts it again with the plan of the moment). The plan (every key
optional):

- ``pages`` (1) and ``per_page`` (10): how many tool-list pages, and tools on each; with
  ``endless`` the last page points at another page forever;
- ``name_length`` (0): pad each tool's name to that many characters (0: short names);
- ``schema``: ``"plain"``, ``"cycle"`` (``{"type": "object", "$ref": "#"}``), ``"loop"`` (two ``$defs`` that
  refer to each other), ``"remote"`` (a ``$ref`` to an http URL) or ``"deep"`` (an object
  nested ``depth`` levels);
- ``depth`` (300): for ``"deep"``;
- ``description_bytes`` (0): a description of that many bytes on every tool;
- ``storm`` (0): ``tools/list_changed`` notifications sent while answering each list (so the
  gateway lists again, and is told again: a storm that never ends);
- ``churn`` (false): every listing names its tools afresh, so each one is a change the gateway
  passes on to its clients;
- ``raw_depth`` (0): the first tool's schema nests that many objects, written into the answer
  after the SDK serialised it (the SDK's own serialiser stops at about 100), so the page
  is deeper than the official client's JSON parser reads (about 200 levels);
- ``list_delay`` (0): seconds each list answer waits before it is sent (a slow backend);
- ``call`` (``"answer"``): what a ``tools/call`` gets: ``"answer"`` at once, ``"slow"`` after
  1.5 s, ``"hang"``, never an answer, ``"flood"``, an answer whose text is ``flood_bytes``
  (64 MiB) long, or ``"endless"``: over stdio a message that never ends (written to standard
  output without a line's end until the process is ended), over HTTP a flood;
- ``freeze_after``: seconds after its first answered list when the whole process stops itself
  (SIGSTOP): connections stay open and nothing answers, as a backend that froze (whoever stops
  it must send SIGCONT, as ``tests/e2e/conftest.py``'s ``stop`` does);
- ``prompts``: ``"refuse"`` declares prompts and answers every ``prompts/list`` with an error.

Every list request appends ``listed`` to ``PLAN + ".listed"``, and ``answered`` once its page is
made, so a test can tell where the gateway is.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
import uvicorn
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError


def schema_of(plan: dict[str, Any]) -> dict[str, Any]:
    """The input schema every tool gets."""
    kind = plan.get("schema", "plain")
    if kind == "cycle":
        return {"type": "object", "$ref": "#"}
    if kind == "loop":
        return {
            "type": "object",
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
            "$ref": "#/$defs/a",
        }
    if kind == "remote":
        return {"type": "object", "$ref": "http://127.0.0.1:9/never-fetched.json"}
    if kind == "deep":
        inner: dict[str, Any] = {"type": "string"}
        for _ in range(int(plan.get("depth", 300))):
            inner = {"type": "object", "properties": {"x": inner}}
        return inner
    return {"type": "object", "properties": {"x": {"type": "string"}}}


def build(plan: dict[str, Any], listed: Path) -> Server[Any]:
    """The low-level server carrying out ``plan``."""
    pages = max(1, int(plan.get("pages", 1)))
    per_page = int(plan.get("per_page", 10))
    endless = bool(plan.get("endless", False))
    length = int(plan.get("name_length", 0))
    storm = int(plan.get("storm", 0))
    description = "d" * int(plan.get("description_bytes", 0)) or None
    schema = schema_of(plan)
    churn = bool(plan.get("churn", False))
    built: dict[int, types.ListToolsResult] = {}
    listings = [0]

    raw_depth = int(plan.get("raw_depth", 0))
    list_delay = float(plan.get("list_delay", 0))
    on_call = str(plan.get("call", "answer"))
    freeze_after = plan.get("freeze_after")
    freezing: list[threading.Timer] = []

    def page(number: int) -> types.ListToolsResult:
        found = None if churn else built.get(number)
        if found is None:
            tools = []
            for index in range(per_page):
                name = f"t{number}_{index}" + (f"_{listings[0]}" if churn else "")
                deep = raw_depth and index == 0
                tools.append(
                    types.Tool(
                        name=name + "x" * max(0, length - len(name)),
                        description=description,
                        input_schema={"type": "object", "properties": {"x": MARKER}}
                        if deep
                        else schema,
                    )
                )
            last = number + 1 >= pages and not endless
            found = types.ListToolsResult(
                tools=tools, next_cursor=None if last else str(number + 1)
            )
            built[number % 4] = found  # a few pages kept: an endless list costs no more
        return found

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> Any:
        with listed.open("a") as log:
            log.write("listed\n")
        listings[0] += 1
        for _ in range(storm):
            await ctx.session.send_tool_list_changed()
        cursor = params.cursor if params is not None else None
        made = page(int(cursor) if cursor else 0)
        await anyio.sleep(list_delay)
        with listed.open("a") as log:
            log.write("answered\n")
        if freeze_after is not None and not freezing:
            freezing.append(threading.Timer(float(freeze_after), freeze))
            freezing[0].start()
        return made

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
        return await answer_call(on_call, int(plan.get("flood_bytes", 64 << 20)))

    async def refuse_prompts(ctx: Any, params: types.PaginatedRequestParams | None) -> Any:
        raise MCPError(types.METHOD_NOT_FOUND, "prompts are not listed here")

    if plan.get("prompts") == "refuse":
        return Server(
            "hostile",
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_list_prompts=refuse_prompts,
        )
    return Server("hostile", on_list_tools=list_tools, on_call_tool=call_tool)


async def answer_call(how: str, flood_bytes: int) -> types.CallToolResult:
    """A tool call's answer, as the plan's ``call`` says."""
    if how == "hang":
        await anyio.sleep_forever()
    if how == "slow":
        await anyio.sleep(1.5)
    if how == "endless" and WIRE:
        await anyio.to_thread.run_sync(write_forever)
    text = "x" * flood_bytes if how in {"flood", "endless"} else "hostile"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def freeze() -> None:
    """Stop this whole process, as a backend that froze (SIGCONT resumes it)."""
    os.kill(os.getpid(), signal.SIGSTOP)


WIRE: list[int] = []  # over stdio: standard output, duplicated


def write_forever() -> None:
    """Write the start of an answer to the wire, then its text forever (no line's end)."""
    os.write(WIRE[0], b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"')
    chunk = b"x" * (1 << 20)
    while True:
        os.write(WIRE[0], chunk)


MARKER = {"title": "__deep__"}  # a valid schema, so the SDK's server sends it in either era


class Deepen:
    """ASGI middleware writing a ``depth``-level schema where the SDK wrote :data:`MARKER`."""

    def __init__(self, app: Any, depth: int) -> None:
        self.app = app
        opening = b'{"type":"object","properties":{"x":'
        self.deep = opening * depth + b'{"type":"string"}' + b"}}" * depth
        self.marker = json.dumps(MARKER, separators=(",", ":")).encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Serve ``app``, its bodies rewritten (and sent without a length, which changes)."""

        async def rewritten(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message["headers"] if k.lower() != b"content-length"]
                message = {**message, "headers": headers}
            elif message["type"] == "http.response.body" and self.marker in message["body"]:
                message = {**message, "body": message["body"].replace(self.marker, self.deep)}
            await send(message)

        await self.app(scope, receive, rewritten if scope["type"] == "http" else send)


class Wire:
    """The SDK's stdio server's standard output, written with :class:`Deepen`'s rewrite."""

    def __init__(self, depth: int) -> None:
        self.file = os.fdopen(WIRE[0], "w", encoding="utf-8", closefd=False)
        self.deep = Deepen(None, depth).deep.decode() if depth else ""
        self.marker = json.dumps(MARKER, separators=(",", ":"))

    async def write(self, text: str) -> None:
        """Write one message (blocking: this server does nothing else meanwhile)."""
        if self.deep and self.marker in text:
            text = text.replace(self.marker, self.deep)
        self.file.write(text)

    async def flush(self) -> None:
        """Flush what was written."""
        self.file.flush()


async def serve_stdio(server: Server[Any], depth: int) -> None:
    """Serve ``server`` over this process's stdin and stdout."""
    async with stdio_server(stdout=Wire(depth)) as (read, write):  # type: ignore[arg-type]  # it writes
        await server.run(read, write, server.create_initialization_options())


def main() -> None:
    """Serve the plan given on the command line."""
    stdio = sys.argv[1] == "--stdio"
    plan_path = Path(sys.argv[2])
    plan = json.loads(plan_path.read_text())
    server = build(plan, plan_path.with_name(plan_path.name + ".listed"))
    if stdio:
        plan_path.with_name(plan_path.name + ".pid").write_text(str(os.getpid()))
        WIRE.append(os.dup(1))
        anyio.run(serve_stdio, server, int(plan.get("raw_depth", 0)))
        return
    port = int(sys.argv[1])
    app: Any = server.streamable_http_app()
    if plan.get("raw_depth"):
        app = Deepen(app, int(plan["raw_depth"]))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error")


if __name__ == "__main__":
    main()
