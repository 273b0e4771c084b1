"""The floor: a bare server answering the same JSON-RPC as the libraries, from bytes built at start.

No MCP library, no validation, no per-request serialization: it parses the request line or body
with ``json.loads``, picks the prebuilt answer and writes it. Over stdio that is a loop on the
pipe; over HTTP a raw ASGI callable (no framework) under the same uvicorn the libraries use,
answering ``application/json``. What it costs is what the transport costs, so a library's
distance to it is the library's own overhead: for a full walk of ``tools/list``, writing the
bytes; for ``tools/call`` and ``ping``, one round trip.

Its catalogue is mcp-core's wire form of the benchmark's tools (``(x: int) -> int`` with a
docstring), paginated as mcp-core paginates by default (500 per page, the cursor being where the
next page starts), so its walk writes about the bytes mcp-core's walk writes.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, Final, final

from bench._catalogue import tool_name

__all__ = ["PAGE_SIZE", "Answers", "asgi", "serve_stdio"]

PAGE_SIZE: Final = 500
_JSON: Final = [(b"content-type", b"application/json")]


def _tool(index: int) -> dict[str, Any]:
    return {
        "name": tool_name(index),
        "inputSchema": {
            "additionalProperties": False,
            "properties": {"x": {"type": "integer"}},
            "type": "object",
            "required": ["x"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"],
        },
        "description": "Return x unchanged.",
    }


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Answers:
    """Every answer the floor gives, as bytes, keyed by method (and cursor for ``tools/list``)."""

    pages: dict[str | None, bytes]

    @classmethod
    def build(cls, size: int) -> Answers:
        """The pages of a ``size``-tool catalogue, serialized once."""
        pages: dict[str | None, bytes] = {}
        for start in range(0, max(size, 1), PAGE_SIZE):
            stop = min(start + PAGE_SIZE, size)
            result: dict[str, Any] = {"tools": [_tool(i) for i in range(start, stop)]}
            if stop < size:
                result["nextCursor"] = str(stop)
            pages[None if start == 0 else str(start)] = _dumps(result)
        return cls(pages=pages)

    def answer(self, body: bytes) -> tuple[str, bytes | None]:
        """The message's method, and the response to it (None for a notification)."""
        message = json.loads(body)
        method, params = str(message.get("method")), message.get("params") or {}
        if "id" not in message:
            return method, None
        result: bytes | None
        if method == "initialize":
            result = _dumps(
                {
                    "protocolVersion": params.get("protocolVersion"),
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "floor", "version": "0"},
                }
            )
        elif method == "tools/list":
            result = self.pages.get(params.get("cursor"))
        elif method == "tools/call":
            x = _dumps(params.get("arguments", {}).get("x"))
            result = (
                b'{"content":[{"text":"' + x + b'","type":"text"}],"structuredContent":{"result":'
            ) + (x + b"}}")
        elif method == "ping":
            result = b"{}"
        else:
            result = None
        head = b'{"jsonrpc":"2.0","id":' + _dumps(message["id"])
        if result is None:
            return method, head + b',"error":{"code":-32601,"message":"not in the floor"}}'
        return method, head + b',"result":' + result + b"}"


def serve_stdio(answers: Answers) -> None:
    """Answer lines on stdin until it closes."""
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        _, response = answers.answer(line)
        if response is not None:
            out.write(response + b"\n")
            out.flush()


Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def asgi(answers: Answers) -> Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]:
    """A raw ASGI app answering every POST with the floor's JSON (a session id on ``initialize``)."""

    async def app(scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        more = True
        while more:
            event = await receive()
            body += event.get("body", b"")
            more = event.get("more_body", False)
        method, response = answers.answer(body) if body else ("", None)
        if response is None:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        headers = [*_JSON, (b"content-length", str(len(response)).encode())]
        if method == "initialize":
            headers.append((b"mcp-session-id", uuid.uuid4().hex.encode()))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": response})

    return app
