"""mcp-core's stdio transport: written as the SDK writes, read as the SDK reads, over real pipes."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import mcp_types as types
from hypothesis import given
from hypothesis import strategies as st

from mcp_core.elements import Tool
from mcp_core.server._paging import Page, Snapshot
from mcp_core.server._stdio import encode_message

ROOT = Path(__file__).resolve().parents[2]
FUZZ_APP = ROOT / "tests" / "fixtures" / "fuzz_app.py"
MCP_CORE = Path(sys.executable).with_name("mcp-core")

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _sdk(message: types.JSONRPCMessage) -> bytes:
    """What the SDK's own stdio transport writes for ``message``."""
    return message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


@given(
    request_id=st.integers() | st.text(),
    result=st.dictionaries(st.text(), _json, max_size=5),
)
def test_a_response_is_written_byte_for_byte_as_the_sdk_writes_it(
    request_id: int | str, result: dict[str, Any]
) -> None:
    """A response's line is the SDK's own, for any id and any JSON result."""
    message = types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
    assert encode_message(message) == _sdk(message)


def test_other_messages_are_written_by_the_sdk_model() -> None:
    """Requests, notifications and errors go through the SDK's model, one line each."""
    messages: list[types.JSONRPCMessage] = [
        types.JSONRPCRequest(jsonrpc="2.0", id=7, method="ping"),
        types.JSONRPCNotification(jsonrpc="2.0", method="notifications/tools/list_changed"),
        types.JSONRPCError(
            jsonrpc="2.0", id="x", error=types.ErrorData(code=-32602, message="bad \u2603")
        ),
    ]
    for message in messages:
        assert encode_message(message) == _sdk(message)


async def test_a_pre_encoded_page_is_written_as_its_plain_items_would_be() -> None:
    """A list page of pre-encoded items writes the same bytes as the same page of plain dicts."""
    tools = [
        Tool(
            name=f"t{i}",
            description="d\u00e9j\u00e0 \U0001f600",
            input_schema={"type": "object"},
        )
        for i in range(5)
    ]
    page = await Page.read(Snapshot(tools), after="t0", size=3, visible=None)
    encoded = types.JSONRPCResponse(
        jsonrpc="2.0", id=1, result={"tools": page.items, "nextCursor": "c"}
    )
    plain = types.JSONRPCResponse(
        jsonrpc="2.0", id=1, result={"tools": list(page.items), "nextCursor": "c"}
    )
    assert [item["name"] for item in page.items] == ["t1", "t2", "t3"]
    assert encode_message(encoded) == _sdk(plain)
    assert encode_message(encoded) == _sdk(plain)  # the items' JSON kept: the same bytes again


def _answers(process: subprocess.Popen[bytes], ids: set[int]) -> dict[int, dict[str, Any]]:
    """The responses carrying ``ids``, read line by line from the server's stdout."""
    assert process.stdout is not None
    found: dict[int, dict[str, Any]] = {}
    timer = threading.Timer(60, process.kill)  # a hung server fails the test, it never hangs it
    timer.start()
    try:
        while not ids <= found.keys():
            line = process.stdout.readline()
            assert line, f"the server closed stdout before answering {sorted(ids - found.keys())}"
            message = json.loads(line)
            if message.get("id") in ids:
                found[message["id"]] = message
    finally:
        timer.cancel()
    return found


def test_lines_are_read_as_the_sdk_reads_them_over_real_pipes() -> None:
    """CRLF endings, a line longer than a read, bad UTF-8 and a non-JSON line: all as the SDK."""
    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    long_text = "x" * 300_000  # several of the transport's 64 KiB reads

    def call(request_id: int, text: str) -> bytes:
        params = {"name": "echo", "arguments": {"text": text}}
        return json.dumps(
            {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
        ).encode()

    process = subprocess.Popen(  # noqa: S603 -- our own console script
        [str(MCP_CORE), "run", str(FUZZ_APP)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None
    try:
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
        process.stdin.write(json.dumps(initialize).encode() + b"\r\n")
        process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\r\n')
        process.stdin.flush()
        assert _answers(process, {1})[1]["result"]["protocolVersion"] == "2025-11-25"
        process.stdin.write(call(2, long_text) + b"\n")
        process.stdin.write(b"this is not JSON\n")
        process.stdin.write(call(3, "a\udcffb").replace(b"\\udcff", b"\xff") + b"\n")
        process.stdin.write(b'{"jsonrpc":"2.0","id":4,"method":"ping"}\n')
        process.stdin.flush()
        answers = _answers(process, {2, 3, 4})
        assert answers[2]["result"]["content"][0]["text"] == long_text
        assert answers[3]["result"]["content"][0]["text"] == "a\ufffdb"  # replaced, as the SDK does
        assert answers[4]["result"] == {}
        process.stdin.close()  # end of input ends the serving
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None and not stream.closed:
                stream.close()
