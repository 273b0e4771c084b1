"""Laws of what a remote may make the gateway read: lines and events, however they are chunked.

``RemoteSource`` reads a stdio server's messages as lines and an HTTP server's streams as events,
each bounded by ``max_message_bytes``; the end-to-end findings (a 64 MiB answer, one that never
ends, a page too deep to parse) are in ``test_hostile_backend.py``. Here hypothesis draws the
streams and the chunks they arrive in, against a plain reference reading the whole stream.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.client.stdio import StdioServerParameters
from mcp.shared.message import SessionMessage

from mcp_core.bridges._metering import Meter, _Events, _Lines, _Pipes

LIMIT = 64


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` cut at the positions ``cuts`` (taken modulo its length)."""
    points = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


# -- lines (stdio) ---------------------------------------------------------------------------------

lines = st.lists(st.binary(max_size=3 * LIMIT).map(lambda b: b.replace(b"\n", b"")), max_size=8)


@given(lines=lines, tail=st.binary(max_size=3 * LIMIT), cuts=st.lists(st.integers(0, 10_000)))
def test_lines_are_cut_as_the_whole_stream_reads_and_none_held_past_the_limit(
    lines: list[bytes], tail: bytes, cuts: list[int]
) -> None:
    """Each line within the limit comes out whole, each one past it as one ``None`` (at once).

    Whatever the chunks, the framer never holds more than the limit, so a line that never ends
    costs nothing but the time to read it.
    """
    tail = tail.replace(b"\n", b"")
    data = b"".join(line + b"\n" for line in lines) + tail
    expected: list[bytes | None] = [line if len(line) <= LIMIT else None for line in lines]
    if len(tail) > LIMIT:
        expected.append(None)
    framer = _Lines(LIMIT)
    out: list[bytes | None] = []
    for chunk in chunked(data, cuts):
        out += framer.feed(chunk)
        assert framer._size <= LIMIT  # what it holds is the law
    assert out == expected


# -- events (HTTP) ---------------------------------------------------------------------------------

ENDS = (b"\n", b"\r\n", b"\r")


def event_stream(bodies: list[bytes], end: bytes) -> tuple[bytes, list[int]]:
    """An event stream of one event per body (``data:`` lines), and each event's size."""
    events = []
    for body in bodies:
        data = b"".join(b"data: " + line + end for line in body.split(b"\n"))
        events.append(data + end)
    return b"".join(events), [len(event) for event in events]


async def read(stream: _Events) -> list[bytes]:
    """The pieces ``stream`` passes on."""
    return [piece async for piece in stream]


class Chunks(httpx2.AsyncByteStream):
    """A response body arriving in the given chunks."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


REQUEST = httpx2.Request("POST", "http://remote/mcp", json={"jsonrpc": "2.0", "id": 7})

bodies = st.lists(
    st.binary(max_size=2 * LIMIT).map(lambda b: re.sub(rb"[\r]", b"", b)), min_size=1, max_size=6
)


@given(bodies=bodies, end=st.sampled_from(ENDS), cuts=st.lists(st.integers(0, 10_000)))
def test_events_pass_whole_until_one_is_too_large(
    bodies: list[bytes], end: bytes, cuts: list[int]
) -> None:
    """Events within the limit pass on unchanged, each piece ending at an event's end.

    The first one past the limit is replaced by an error for the request, and the stream ends.
    """
    data, sizes = event_stream(bodies, end)
    meter = Meter(LIMIT)
    out = anyio.run(read, _Events(Chunks(chunked(data, cuts)), meter, REQUEST))
    kept = next((i for i, size in enumerate(sizes) if size > LIMIT), len(sizes))
    whole = data[: sum(sizes[:kept])]
    if kept == len(sizes):
        assert b"".join(out) == data
        assert not meter.refused
    else:
        *passed, error = out
        assert b"".join(passed) == whole
        assert meter.refused
        message = json.loads(error.removeprefix(b"event: message\ndata: "))
        assert message["id"] == 7
        assert "larger than max_message_bytes=64 bytes" in message["error"]["message"]
    events = {sum(sizes[:i]) for i in range(len(sizes) + 1)}
    ends = [len(b"".join(out[: i + 1])) for i in range(len(out) - meter.refused)]
    assert set(ends) <= events  # each piece passed on ends where an event does


@pytest.mark.parametrize(
    ("stream", "events"),
    [
        (b"data: a\r\n\r\ndata: b\r\n\r\n", [b"data: a\r\n\r\n", b"data: b\r\n\r\n"]),
        (b"data: a\n\ndata: b\n\n", [b"data: a\n\n", b"data: b\n\n"]),
        (b"data: a\r\rdata: b\r\r", [b"data: a\r\r", b"data: b\r\r"]),
        (b"data: a\r\nid: 1\r\n\r\n", [b"data: a\r\nid: 1\r\n\r\n"]),
    ],
)
def test_an_event_ends_at_a_blank_line_whichever_line_ends_it_uses(
    stream: bytes, events: list[bytes]
) -> None:
    """One byte at a time, the pieces passed on are the events."""
    out = anyio.run(read, _Events(Chunks([bytes([b]) for b in stream]), Meter(LIMIT), REQUEST))
    assert out == events


def deep_tool(depth: int) -> dict[str, object]:
    """A tool whose input schema nests ``depth`` objects."""
    schema: dict[str, object] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"x": schema}}
    return {"name": "deep", "inputSchema": schema}


@pytest.mark.parametrize("end", ENDS)
@given(cuts=st.lists(st.integers(0, 100_000), max_size=20))
def test_a_stream_of_a_remote_once_too_deep_is_read_mended(end: bytes, cuts: list[int]) -> None:
    """Once a page was too deep to parse, each event's list answer loses its too-deep elements.

    Other events (a notification, an answer that is not a list, an event with an id) pass
    unchanged, and the stream's framing with them.
    """
    page = {"jsonrpc": "2.0", "id": 3, "result": {"tools": [deep_tool(300), {"name": "ok"}]}}
    notice = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "hi"}}
    events = [
        b"event: message" + end + b"data: " + json.dumps(notice).encode() + end + end,
        b"id: 9"
        + end
        + b"event: message"
        + end
        + b"data: "
        + json.dumps(page).encode()
        + end
        + end,
    ]
    meter = Meter(1 << 20)
    meter.deep = True
    stream = _Events(Chunks(chunked(b"".join(events), cuts)), meter, REQUEST)
    out = b"".join(anyio.run(read, stream))
    assert out.startswith(events[0])
    mended = out.removeprefix(events[0])
    assert mended.startswith(b"id: 9\nevent: message\ndata: ")
    body = json.loads(mended.split(b"data: ", 1)[1])
    assert body == {"jsonrpc": "2.0", "id": 3, "result": {"tools": [{"name": "ok"}]}}
    assert meter.dropped == 1


# -- a stdio session's awaited requests ------------------------------------------------------------


@dataclass
class FakeProcess:
    """A server process as the stdio transport sees it: two pipes (memory streams here)."""

    stdin: Any
    stdout: Any
    returncode: int | None = None


def request(number: int) -> SessionMessage:
    """A ``ping`` request the session sends."""
    return SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=number, method="ping"))


def cancelled(number: int) -> SessionMessage:
    """The session giving up on request ``number``."""
    params = {"requestId": number, "reason": "timed out"}
    return SessionMessage(
        types.JSONRPCNotification(jsonrpc="2.0", method="notifications/cancelled", params=params)
    )


async def test_an_oversized_line_answers_the_awaited_requests_and_no_others(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Past the bound, the requests the session awaits fail; one it gave up on is not awaited.

    The line is skipped to its end and the session reads on: the next message arrives as sent.
    """
    to_server, written = anyio.create_memory_object_stream[bytes](100)
    from_server, stdout = anyio.create_memory_object_stream[bytes](100)
    server = StdioServerParameters(command="remote")
    pipes = _Pipes(server, FakeProcess(to_server, stdout), Meter(LIMIT))  # type: ignore[arg-type]  # two pipes suffice
    async with to_server, written, from_server, stdout, anyio.create_task_group() as tasks:
        tasks.start_soon(pipes.read)
        tasks.start_soon(pipes.write)
        await pipes.outgoing.send(request(1))
        await pipes.outgoing.send(cancelled(1))  # timed out, say: no answer awaited any more
        await pipes.outgoing.send(request(2))
        for _ in range(3):
            await written.receive()
        await from_server.send(b'{"jsonrpc":"2.0","id":2,"result":{"x":"' + b"y" * LIMIT)
        failed = (await pipes.incoming.receive()).message  # type: ignore[union-attr]  # a message
        await from_server.send(b'"}}\n{"jsonrpc":"2.0","method":"notifications/progress"}\n')
        after = (await pipes.incoming.receive()).message  # type: ignore[union-attr]  # a message
        await from_server.send(b'{"jsonrpc":"2.0","id":9,"result":{"x":"' + b"y" * LIMIT + b"\n")
        await pipes.outgoing.send(request(3))
        await written.receive()
        await from_server.send(b'{"jsonrpc":"2.0","id":3,"result":{}}\n')
        answered = (await pipes.incoming.receive()).message  # type: ignore[union-attr]  # a message
        tasks.cancel_scope.cancel()
    pipes.incoming.close()
    pipes.outgoing.close()
    assert isinstance(failed, types.JSONRPCError)
    assert failed.id == 2
    assert "larger than max_message_bytes=64 bytes" in failed.error.message
    assert isinstance(after, types.JSONRPCNotification)
    assert isinstance(answered, types.JSONRPCResponse)
    assert answered.id == 3
    assert "remote: the remote's answer is larger than max_message_bytes=64" in caplog.text
