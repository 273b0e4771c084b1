"""Hidden is missing, byte for byte: a server with hidden elements against one built without them.

Two servers are generated from one file: ``full`` declares extra elements tagged ``hidden`` and
hides them from every session; ``bare`` never declares them. The official ``mcp`` client runs
one script of requests against each, over stdio (``mcp-core run``) and streamable HTTP (uvicorn
on 127.0.0.1), in both
protocol eras, and every byte the server sends is recorded (a tee around the stdio subprocess, a
tee transport under the HTTP client). The two recordings must be identical: every list, call,
read, subscription and completion answers as if the hidden elements did not exist, including a
hidden exact resource and a hidden specific template that a visible generic template also
matches.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import textwrap
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.e2e._http import parse_sse, serve

MCP_CORE = Path(sys.executable).with_name("mcp-core")

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

SERVER = '''
"""Twins: the same server with (full) and without (bare) elements hidden from everyone."""

from mcp_core.app import App
from mcp_core.visibility import by_tag

BARE = {bare}

app = App("twins", version="1", page_size=2)
app.visibility = by_tag(app.registry, hide=["hidden"])


@app.tool
def a_tool(x: int) -> str:
    """Visible."""
    return f"a {{x}}"


@app.tool
def c_tool(x: int) -> str:
    """Visible."""
    return f"c {{x}}"


@app.tool
def d_tool() -> str:
    """Visible."""
    return "d"


@app.prompt
def a_prompt(arg: str) -> str:
    """Visible."""
    return f"prompt {{arg}}"


@app.completion(a_prompt, "arg")
def complete_arg(value: str) -> list[str]:
    """Visible completions."""
    return ["one", "two"]


@app.resource("files://public", mime_type="text/plain")
def public() -> str:
    """Visible."""
    return "public"


@app.resource_template("files://{{+path}}", mime_type="text/plain")
def any_file(path: str) -> str:
    """The visible generic template: it also matches what the hidden elements would answer."""
    return f"file {{path}}"


@app.completion(any_file, "path")
def complete_path(value: str) -> list[str]:
    """Visible completions."""
    return ["docs", "src"]


if not BARE:

    @app.tool(tags=["hidden"])
    def b_secret(x: int) -> str:
        """Hidden, and between visible tools in key order (pages and cursors must not change)."""
        return "SECRET TOOL"

    @app.prompt(tags=["hidden"])
    def b_secret_prompt(arg: str) -> str:
        """Hidden."""
        return "SECRET PROMPT"

    @app.completion(b_secret_prompt, "arg")
    def complete_secret_arg(value: str) -> list[str]:
        """Hidden completions."""
        return ["SECRET"]

    @app.resource("files://readme", mime_type="text/plain", tags=["hidden"])
    def readme() -> str:
        """A hidden exact resource the generic template also matches."""
        return "SECRET README"

    @app.resource_template("files://{{name}}/secret", mime_type="text/plain", tags=["hidden"])
    def secret_file(name: str) -> str:
        """A hidden template, more specific than the generic one."""
        return "SECRET FILE"

    @app.completion(secret_file, "name")
    def complete_name(value: str) -> list[str]:
        """Hidden completions."""
        return ["SECRET"]
'''


def write_twin(directory: Path, *, bare: bool) -> Path:
    """Write the full or the bare twin; return its path."""
    path = directory / ("bare.py" if bare else "full.py")
    path.write_text(textwrap.dedent(SERVER.format(bare=bare)), encoding="utf-8")
    return path


TEE = """
import subprocess, sys
record = open(sys.argv[1], "ab")
child = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE)
for line in child.stdout:
    record.write(line)
    record.flush()
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
sys.exit(child.wait())
"""


class TeeTransport(httpx2.AsyncBaseTransport):
    """An HTTP transport that records every response body it passes on."""

    def __init__(self) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.bodies: list[bytearray] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Forward the request; record the response body while the client reads it."""
        response = await self.inner.handle_async_request(request)
        body = bytearray()
        self.bodies.append(body)
        raw = response.stream
        assert isinstance(raw, httpx2.AsyncByteStream)
        stream: httpx2.AsyncByteStream = raw

        class Recorded(httpx2.AsyncByteStream):
            async def __aiter__(self) -> AsyncIterator[bytes]:
                async for chunk in stream:
                    body.extend(chunk)
                    yield chunk

            async def aclose(self) -> None:
                await stream.aclose()

        return httpx2.Response(
            response.status_code,
            headers=response.headers,
            stream=Recorded(),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        """Close the wrapped transport."""
        await self.inner.aclose()

    def messages(self) -> list[str]:
        """Every JSON-RPC message received, in order: SSE data payloads and JSON bodies."""
        found: list[str] = []
        for body in self.bodies:
            text = body.decode()
            if text.startswith("{"):
                found.append(text)
            else:
                found.extend(event.data for event in parse_sse(text) if event.data)
        return found


Script = Callable[[Client, bool], Awaitable[None]]


async def attempt(work: Awaitable[Any]) -> None:
    """Run one request; an error answer is as much an answer as a result."""
    with contextlib.suppress(MCPError):
        await work


async def script(client: Client, legacy: bool) -> None:
    """Every request the hidden elements would change the answer to, and their neighbours."""
    cursor: str | None = None
    for _ in range(5):
        page = await client.list_tools(cursor=cursor)
        cursor = page.next_cursor
        if cursor is None:
            break
    await client.list_prompts()
    await client.list_resources()
    await client.list_resource_templates()
    for name, arguments in (("b_secret", {"x": 1}), ("a_tool", {"x": 1}), ("zz", {})):
        await attempt(client.call_tool(name, arguments))
    for name in ("b_secret_prompt", "a_prompt"):
        await attempt(client.get_prompt(name, {"arg": "v"}))
    for uri in ("files://readme", "files://abc/secret", "files://public", "nope://x"):
        await attempt(client.read_resource(uri))
    if not legacy:
        uris = ["files://readme", "files://abc/secret", "files://public"]
        async with client.listen(resource_subscriptions=uris, tools_list_changed=True):
            pass  # the acknowledgement is the answer
    if legacy:
        for uri in ("files://readme", "files://abc/secret", "nope://x"):
            await attempt(client.subscribe_resource(uri))
            await attempt(client.unsubscribe_resource(uri))
        await client.set_logging_level("debug")
    completions: list[tuple[Any, dict[str, str]]] = [
        (
            types.ResourceTemplateReference(uri="files://{name}/secret"),
            {"name": "name", "value": ""},
        ),
        (types.ResourceTemplateReference(uri="files://abc/secret"), {"name": "name", "value": ""}),
        (types.ResourceTemplateReference(uri="files://abc/secret"), {"name": "path", "value": ""}),
        (types.ResourceTemplateReference(uri="files://readme"), {"name": "path", "value": "r"}),
        (types.PromptReference(name="b_secret_prompt"), {"name": "arg", "value": ""}),
        (types.PromptReference(name="a_prompt"), {"name": "arg", "value": ""}),
    ]
    for ref, argument in completions:
        await attempt(client.complete(ref, argument))


async def record_stdio(path: Path, record: Path, mode: str) -> list[str]:
    """Run the script against ``mcp-core run path`` over stdio; the server's lines, in order."""
    tee = path.parent / "tee.py"
    tee.write_text(TEE, encoding="utf-8")
    target = StdioServerParameters(
        command=sys.executable,
        args=[str(tee), str(record), str(MCP_CORE), "run", str(path)],
        env=dict(os.environ),
    )
    options: dict[str, Any] = {"mode": "legacy"} if mode == "legacy" else {}
    async with Client(target, **options) as client:
        await script(client, mode == "legacy")
    return (await anyio.Path(record).read_text(encoding="utf-8")).splitlines()


async def record_http(path: Path, mode: str) -> list[str]:
    """Run the script against ``mcp-core run path --transport http``; the JSON-RPC it received."""
    from mcp_core.cli._target import load_target

    app = load_target(str(path)).obj
    tee = TeeTransport()
    with serve(app.asgi()) as url:  # type: ignore[attr-defined]  # an App
        async with httpx2.AsyncClient(transport=tee, timeout=30) as http:
            options: dict[str, Any] = {"mode": "legacy"} if mode == "legacy" else {}
            async with Client(streamable_http_client(url, http_client=http), **options) as client:
                await script(client, mode == "legacy")
    return tee.messages()


@pytest.mark.parametrize("mode", ["legacy", "modern"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_byte_for_byte(tmp_path: Path, transport: str, mode: str) -> None:
    """Every answer of the full server equals the bare server's, byte for byte."""
    recordings: list[list[str]] = []
    for bare in (False, True):
        directory = tmp_path / ("bare" if bare else "full")
        directory.mkdir()
        path = write_twin(directory, bare=bare)
        if transport == "stdio":
            recordings.append(await record_stdio(path, directory / "record.jsonl", mode))
        else:
            recordings.append(await record_http(path, mode))
    # The client numbers its listen requests process-wide ("listen-1", then "listen-2"), and the
    # server echoes that id: the one byte the client, not the server, chose differently.
    full, bare_ = ([re.sub(r'"listen-\d+"', '"listen-N"', m) for m in r] for r in recordings)
    assert len(full) > 20
    assert not any("SECRET" in message for message in full)
    differing = [
        (json.loads(mine), json.loads(theirs))
        for mine, theirs in zip(full, bare_, strict=True)
        if mine != theirs
    ]
    assert differing == []
