"""The stdio prelude: what it answers before the SDK is imported is what the SDK would have answered.

``App.run()`` over stdio, in a process that has not imported the ``mcp`` SDK, answers the first
messages of a conversation itself and hands the rest over to the SDK's server.
``MCP_CORE_STDIO_PRELUDE=0`` turns it off. Every test here spawns the same app
(``tests/fixtures/prelude_app.py``, run as ``python prelude_app.py``) over real pipes with the
prelude on and off and compares what comes back on stdout, byte for byte: generated conversations
(ordinary and malformed), hostile lines, a ``tools/list`` walk across the hand-over and the
official client in both eras. Others check that the prelude does engage: the first
``tools/call`` runs before the SDK is imported, a later one after.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Final, TypeGuard

import anyio
import mcp_types as types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client, StdioServerParameters
from mcp.client.stdio import get_default_environment

from mcp_core.server._paging import CursorCodec
from mcp_core.server._requests import default_cursor_secret
from tests.clients import pages, send_call

ROOT: Final = Path(__file__).resolve().parents[2]
APP: Final = ROOT / "tests" / "fixtures" / "prelude_app.py"
SWITCH: Final = "MCP_CORE_STDIO_PRELUDE"
VARIANT: Final = "PRELUDE_APP"  # names another app of the fixture's (see its VARIANTS)
LAUNCHERS: Final = {
    "python": [sys.executable, str(APP)],  # App.run()
    "mcp-core run": [str(Path(sys.executable).with_name("mcp-core")), "run", str(APP)],
}
"""The two ways a user serves the app over stdio."""
WAIT: Final = 60.0  # seconds for any one answer: a bound for a loaded machine, never a timing
TOOLS: Final = [
    "add",
    "constant",
    "echo",
    "exits",
    "fails",
    "logs",
    "nan",
    "point",
    "prints",
    "reads",
    "record",
    "refuses",
    "rich",
    "roots",
    "sdk_loaded",
    "slow",
    "tags",
    "wait",
]
"""The fixture app's tools, in the order they are listed (pages of three)."""

_CODEC: Final = CursorCodec(default_cursor_secret("prelude"))
CURSORS: Final = [_CODEC.encode("tools", TOOLS[end]) for end in range(2, len(TOOLS) - 1, 3)]
"""The cursors the app issues: after each page but the last."""
PAST_THE_END: Final = _CODEC.encode("tools", TOOLS[-1])
"""A cursor the app would accept but never issue: after the last tool."""

ROOTS_ANSWER: Final = {"roots": [{"uri": "file:///client/root", "name": "r"}]}


# -- driving a conversation over real pipes ------------------------------------------------------


@dataclass
class Transcript:
    """What the server wrote on stdout, line by line, and how it ended."""

    steps: list[list[bytes]] = field(default_factory=list)
    """For each line sent, the lines read before the next one was sent."""
    tail: list[bytes] = field(default_factory=list)
    """The lines read after stdin was closed."""
    code: int | None = None
    """The exit code (None: it did not exit in time and was killed)."""
    stalled: str | None = None
    """What did not come in time (the conversation stopped there and the server was killed)."""
    ended: str | None = None
    """What did not come before the server closed stdout (the conversation stopped there)."""
    stderr: bytes = b""
    pipelined: set[int] = field(default_factory=set)
    """The steps that sent several requests at once (the server may answer them in any order)."""

    def compared(self) -> list[list[bytes]]:
        """The steps, a pipelined one's lines sorted: what two runs must agree on."""
        return [
            sorted(step) if index in self.pipelined else step
            for index, step in enumerate(self.steps)
        ]

    def lines(self) -> list[bytes]:
        """Every line written, in order."""
        return [line for step in self.steps for line in step] + self.tail

    def json(self) -> list[Any]:
        """Every line written, decoded."""
        return [json.loads(line) for line in self.lines()]


def _awaited(sent: bytes) -> tuple[list[types.RequestId], bytes]:
    r"""The ids of the responses ``sent`` must get now, and what is not read yet.

    The SDK splits what it reads into lines at ``\n``, ``\r\n`` or ``\r``, but reads them only
    once a ``\n`` follows (a ``\r`` may be the start of ``\r\n``): what follows the last ``\n`` is
    read with what comes next, or at the end of input. Requests are as the SDK reads them.
    """
    end = sent.rfind(b"\n") + 1
    ids: list[types.RequestId] = []
    for line in sent[:end].splitlines():
        try:
            message = types.jsonrpc_message_adapter.validate_json(
                line.decode("utf-8", "replace"), by_name=False
            )
        except ValueError:
            continue  # the SDK drops what it cannot read: nothing to wait for
        if isinstance(message, types.JSONRPCRequest):
            ids.append(message.id)
        elif _is_cancel(message):
            # A request cancelled in the same write is never answered (the tests cancel only
            # calls that are still running then).
            cancelled = (message.params or {}).get("requestId")
            ids = [one for one in ids if not _same_id(cancelled, one)]
    return ids, sent[end:]


def _is_cancel(message: object) -> TypeGuard[types.JSONRPCNotification]:
    return (
        isinstance(message, types.JSONRPCNotification)
        and message.method == "notifications/cancelled"
        and isinstance(message.params, dict)
        and "requestId" in message.params
    )


def _same_id(found: object, wanted: types.RequestId) -> bool:
    return type(found) is type(wanted) and found == wanted


def _answer(request: dict[str, Any]) -> bytes:
    """The test client's answer to a server-to-client request: roots, or method not found."""
    if request["method"] == "roots/list":
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"], "result": ROOTS_ANSWER}
    else:
        error = {"code": -32601, "message": "not supported by this test client"}
        reply = {"jsonrpc": "2.0", "id": request["id"], "error": error}
    return json.dumps(reply).encode() + b"\n"


def _environment(prelude: bool, app: str | None = None) -> dict[str, str]:
    """A plain environment, with the prelude on or off, serving ``app`` (or the default).

    Not this process's: a test before may have left settings in it (a deployment's worker
    variables that ``mcp-core run`` exports, an OpenTelemetry provider), each of which rightly
    makes the prelude step aside.
    """
    env = dict(get_default_environment())
    if not prelude:
        env[SWITCH] = "0"
    if app is not None:
        env[VARIANT] = app
    return env


class _Spawned:
    """The app as a subprocess over pipes, its stdout read line by line on a thread."""

    def __init__(self, *, prelude: bool, app: str | None, launcher: str = "python") -> None:
        self.process = subprocess.Popen(  # noqa: S603 -- this interpreter and a fixture of ours
            LAUNCHERS[launcher],
            cwd=ROOT,
            env=_environment(prelude, app),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._read: queue.Queue[bytes] = queue.Queue()
        self._errors: list[bytes] = []
        self._threads = [
            threading.Thread(target=self._pump, daemon=True),
            threading.Thread(target=self._drain_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    @property
    def _stdin(self) -> IO[bytes]:
        assert self.process.stdin is not None
        return self.process.stdin

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for read in iter(self.process.stdout.readline, b""):
            self._read.put(read)
        self._read.put(b"")  # end of output

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        self._errors.append(self.process.stderr.read())

    def send(self, data: bytes) -> bool:
        """Write ``data`` to stdin; False if the server closed it."""
        try:
            self._stdin.write(data)
            self._stdin.flush()
        except BrokenPipeError:
            return False
        return True

    def close_stdin(self) -> None:
        """End the input."""
        with contextlib.suppress(BrokenPipeError):
            self._stdin.close()

    def until(self, wanted: Sequence[types.RequestId] | None, into: list[bytes]) -> str | None:
        """Read into ``into`` until the responses to ``wanted`` (None: end of output).

        Returns None once they came, else why not: ``"ended"`` (stdout ended first) or
        ``"timeout"`` (:data:`WAIT` passed). A server-to-client request read meanwhile is
        answered (:func:`_answer`).
        """
        missing = list(wanted or ())
        deadline = time.monotonic() + WAIT
        while wanted is None or missing:
            try:
                read = self._read.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return "timeout"
            if not read:
                return None if wanted is None else "ended"
            into.append(read)
            message = json.loads(read)
            if not isinstance(message, dict):
                continue
            if "method" in message and "id" in message:
                self.send(_answer(message))
            elif "method" not in message:
                answered = [_same_id(message.get("id"), one) for one in missing]
                if any(answered):  # one response answers one request, even of a repeated id
                    del missing[answered.index(True)]
        return None

    def end(self) -> tuple[int | None, bytes]:
        """The exit code (None if it did not exit in time: killed) and everything on stderr."""
        try:
            code: int | None = self.process.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            code = None
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for thread in self._threads:
            thread.join(timeout=WAIT)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None and not stream.closed:
                with contextlib.suppress(BrokenPipeError):
                    stream.close()
        return code, b"".join(self._errors)


def converse(
    lines: Sequence[bytes], *, prelude: bool, app: str | None = None, launcher: str = "python"
) -> Transcript:
    """Send ``lines`` one at a time to a fresh app; after a request, read until its response.

    After the last line stdin is closed and stdout read to its end. Every wait is bounded by
    :data:`WAIT`: a server that does not answer stalls the transcript (and is killed), it never
    hangs the test.
    """
    transcript = Transcript()
    server = _Spawned(prelude=prelude, app=app, launcher=launcher)
    unread = b""
    try:
        for sent in lines:
            step: list[bytes] = []
            transcript.steps.append(step)
            if not server.send(sent):
                transcript.ended = f"stdin closed before {_short(sent)} was written"
                break
            awaited, unread = _awaited(unread + sent)
            if len(awaited) > 1:
                transcript.pipelined.add(len(transcript.steps) - 1)
            stopped = server.until(awaited, step)
            if stopped == "ended":
                transcript.ended = f"stdout ended before the response to {_short(sent)}"
                break
            if stopped == "timeout":
                transcript.stalled = f"no response to {_short(sent)} within {WAIT} s"
                break
        else:
            server.close_stdin()
            if server.until(None, transcript.tail) is not None:
                transcript.stalled = f"stdout still open {WAIT} s after stdin was closed"
    finally:
        server.close_stdin()
        if transcript.stalled is not None:
            server.process.kill()
        transcript.code, transcript.stderr = server.end()
    return transcript


def both(
    lines: Sequence[bytes], app: str | None = None, launcher: str = "python"
) -> tuple[Transcript, Transcript]:
    """The same conversation with the prelude off (the SDK's answers) and on, run side by side."""
    with ThreadPoolExecutor(2) as pool:
        sdk = pool.submit(converse, lines, prelude=False, app=app, launcher=launcher)
        prelude = pool.submit(converse, lines, prelude=True, app=app, launcher=launcher)
        return sdk.result(), prelude.result()


def _short(line: bytes, limit: int = 300) -> str:
    shown = repr(line[:limit])
    return shown if len(line) <= limit else f"{shown}... ({len(line)} bytes)"


def _first_difference(sdk: list[bytes], prelude: list[bytes]) -> list[str]:
    """Where the first pair of differing lines differs, shown around that byte."""
    for ours, theirs in zip(sdk, prelude, strict=False):
        if ours != theirs:
            at = next(
                (i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b),
                min(len(ours), len(theirs)),
            )
            start = max(0, at - 60)
            return [
                f"     first difference at byte {at}:",
                f"       sdk     ...{ours[start : at + 100]!r}",
                f"       prelude ...{theirs[start : at + 100]!r}",
            ]
    return []


def _outcome(transcript: Transcript) -> tuple[object, ...]:
    """What two runs of a conversation must agree on."""
    return (
        transcript.compared(),
        transcript.tail,
        transcript.code,
        transcript.stalled,
        transcript.ended,
    )


def assert_same(
    lines: Sequence[bytes], app: str | None = None, launcher: str = "python"
) -> tuple[Transcript, Transcript]:
    """Run ``lines`` both ways: the prelude's stdout must be the SDK's, byte for byte.

    Line for line too, but for the answers to requests sent in one write (pipelined): the SDK
    serves requests concurrently and may answer them in any order, so those are compared as sets.
    """
    sdk, prelude = both(lines, app, launcher)
    assert sdk.stalled is None, f"the SDK itself stalled: {sdk.stalled}\n{sdk.stderr.decode()}"
    if _outcome(sdk) != _outcome(prelude):
        report = ["the prelude's stdout differs from the SDK's; the conversation:"]
        for index, line in enumerate(lines):
            sdk_step = sdk.compared()[index] if index < len(sdk.steps) else None
            prelude_step = prelude.compared()[index] if index < len(prelude.steps) else None
            mark = "  " if sdk_step == prelude_step else "!!"
            report.append(f"{mark} > {_short(line)}")
            if sdk_step != prelude_step:
                report.extend(f"     sdk     < {_short(out)}" for out in sdk_step or [])
                report.extend(f"     prelude < {_short(out)}" for out in prelude_step or [])
                report.extend(_first_difference(sdk_step or [], prelude_step or []))
        if sdk.tail != prelude.tail:
            report.append("!! after stdin was closed:")
            report.extend(f"     sdk     < {_short(out)}" for out in sdk.tail)
            report.extend(f"     prelude < {_short(out)}" for out in prelude.tail)
        report.append(f"exit codes: sdk {sdk.code}, prelude {prelude.code}")
        report.append(f"stopped early: sdk {sdk.ended}, prelude {prelude.ended or prelude.stalled}")
        report.append(f"prelude's stderr:\n{prelude.stderr.decode(errors='replace')[-3000:]}")
        pytest.fail("\n".join(report))
    return sdk, prelude


def line(message: object, *, end: bytes = b"\n") -> bytes:
    """``message`` as one compact JSON line."""
    return json.dumps(message, separators=(",", ":")).encode() + end


def request(request_id: types.RequestId, method: str, params: object = None) -> dict[str, Any]:
    """A JSON-RPC request (``params`` left out when None)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def hello(version: str = "2025-11-25", **capabilities: Any) -> dict[str, Any]:
    """A well-formed ``initialize`` request, id 0."""
    client = {"name": "prelude-tests", "version": "1.0"}
    params = {"protocolVersion": version, "capabilities": capabilities, "clientInfo": client}
    return request(0, "initialize", params)


INITIALIZED: Final = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(request_id: types.RequestId, name: str, arguments: object = None) -> dict[str, Any]:
    """A ``tools/call`` request (no ``arguments`` key when None)."""
    params: dict[str, Any] = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return request(request_id, "tools/call", params)


def response(transcript: Transcript, request_id: types.RequestId) -> dict[str, Any]:
    """The one response to ``request_id`` in the transcript."""
    found = [
        message
        for message in transcript.json()
        if "method" not in message and _same_id(message.get("id"), request_id)
    ]
    assert len(found) == 1, (request_id, transcript.lines(), transcript.stderr.decode())
    message: dict[str, Any] = found[0]
    return message


# -- generated conversations ---------------------------------------------------------------------

# Mostly the version the prelude answers in (it hands any other over at once).
_VERSIONS = st.sampled_from(
    ["2025-11-25"] * 4 + ["2025-06-18", "2025-03-26", "2024-11-05", "1999-01-01"]
)
_IDS = (
    st.integers(0, 6)  # small: they collide with earlier ones
    | st.sampled_from(["a", "", "\u00e9", "1", " 1"])
    | st.integers(-(2**63), 2**63)
)
_META = st.sampled_from([{"_meta": {"x": 1}}, {"_meta": {"progressToken": "p"}}, {"_meta": {}}])
_MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "prelude-tests", "version": "1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


@st.composite
def _capabilities(draw: st.DrawFn) -> dict[str, Any]:
    offered = {
        "roots": {"listChanged": True},
        "sampling": {},
        "elicitation": {"form": {}},
        "experimental": {"x": {}},
    }
    chosen = draw(st.lists(st.sampled_from(sorted(offered)), unique=True, max_size=3))
    return {name: offered[name] for name in chosen}


@st.composite
def _client_info(draw: st.DrawFn) -> dict[str, Any]:
    info: dict[str, Any] = {
        "name": draw(st.sampled_from(["c", "client \u00e9\U0001f600", ""])),
        "version": draw(st.sampled_from(["1.0", "0"])),
    }
    if draw(st.booleans()):
        info["title"] = "A client"
    return info


def _without(key: str) -> Callable[[dict[str, Any]], object]:
    return lambda params: {name: value for name, value in params.items() if name != key}


def _with(key: str, value: object) -> Callable[[dict[str, Any]], object]:
    return lambda params: {**params, key: value}


_FLAWS: Final[dict[str, Callable[[dict[str, Any]], object]]] = {
    "no clientInfo": _without("clientInfo"),
    "no capabilities": _without("capabilities"),
    "version a number": _with("protocolVersion", 20251125),
    "capabilities a list": _with("capabilities", []),
    "name a number": lambda params: {**params, "clientInfo": {**params["clientInfo"], "name": 7}},
    "extra key": _with("extra", {"a": 1}),
    "_meta": _with("_meta", {"x": 1}),
    "params a string": lambda params: "initialize",
    "params a list": lambda params: [params],
    "no params": lambda params: None,
}
"""Ways an ``initialize`` request's params go wrong."""


@st.composite
def initialize(draw: st.DrawFn, request_id: types.RequestId) -> dict[str, Any]:
    """An ``initialize`` request: mostly proper, sometimes malformed."""
    params: Any = {
        "protocolVersion": draw(_VERSIONS),
        "capabilities": draw(_capabilities()),
        "clientInfo": draw(_client_info()),
    }
    flaw = draw(st.sampled_from([None] * 6 + sorted(_FLAWS)))
    if flaw is not None:
        params = _FLAWS[flaw](params)
    return request(request_id, "initialize", params)


def _arguments(name: str) -> st.SearchStrategy[object]:
    good: dict[str, st.SearchStrategy[object]] = {
        "add": st.fixed_dictionaries(
            {"a": st.integers(-5, 5) | st.sampled_from([2**64, 1.0, -(2**63) - 1]), "b": st.just(1)}
        ),
        "echo": st.fixed_dictionaries(
            {"text": st.text(max_size=8)}, optional={"times": st.integers(0, 3)}
        ),
        "tags": st.fixed_dictionaries(
            {"names": st.lists(st.text(max_size=4), max_size=3)}, optional={"loud": st.booleans()}
        ),
    }
    bad = st.sampled_from(
        [
            {"a": "x", "b": 1},  # a wrong type
            {"a": 1},  # a missing argument
            {"zzz": 1},  # an unknown one
            [1, 2],  # not an object
            "args",
            7,
        ]
    )
    return good.get(name, st.just({})) | bad | st.none()


@st.composite
def tool_call(draw: st.DrawFn, request_id: types.RequestId) -> dict[str, Any]:
    """A ``tools/call`` of any tool but sdk_loaded (whose answer tells the runs apart)."""
    name = draw(st.sampled_from([t for t in TOOLS if t != "sdk_loaded"] + ["nope", ""]))
    message = call(request_id, name, draw(_arguments(name)))
    match draw(st.sampled_from(["plain"] * 5 + ["_meta", "name a number", "no name", "params"])):
        case "_meta":
            message["params"].update(draw(_META))
        case "name a number":
            message["params"]["name"] = 3
        case "no name":
            del message["params"]["name"]
        case "params":
            message["params"] = draw(st.sampled_from(["x", [name], None]))
        case _:
            pass
    if message.get("params", 0) is None:
        del message["params"]
    return message


@st.composite
def tools_list(draw: st.DrawFn, request_id: types.RequestId) -> dict[str, Any]:
    """A ``tools/list``: with or without a cursor (ours, bogus, not a string), extra params."""
    params = draw(
        st.sampled_from(
            [None, {}, {"cursor": "bogus"}, {"cursor": 5}, {"cursor": None}, {"extra": 1}, []]
        )
        | st.sampled_from([*CURSORS, PAST_THE_END]).map(lambda cursor: {"cursor": cursor})
        | _META
    )
    return request(request_id, "tools/list", params)


def _notification(method: str, params: object = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


_OTHERS: Final[dict[str, Callable[[types.RequestId], st.SearchStrategy[object]]]] = {
    "ping": lambda rid: st.just(request(rid, "ping")),
    "ping with params": lambda rid: st.sampled_from([{}, {"x": 1}, [1]]).map(
        lambda params: request(rid, "ping", params)
    ),
    "resources/list": lambda rid: st.just(request(rid, "resources/list")),
    "prompts/list": lambda rid: st.just(request(rid, "prompts/list")),
    "resources/read": lambda rid: st.just(request(rid, "resources/read", {"uri": "app://note"})),
    "prompts/get": lambda rid: st.just(
        request(rid, "prompts/get", {"name": "greet", "arguments": {"name": "n"}})
    ),
    "logging/setLevel": lambda rid: st.sampled_from(["debug", "error", "loud"]).map(
        lambda level: request(rid, "logging/setLevel", {"level": level})
    ),
    "unknown method": lambda rid: st.just(request(rid, "tools/frobnicate", {})),
    "unknown notification": lambda rid: st.just(_notification("notifications/whatever")),
    "cancelled": lambda rid: st.just(  # of no request in flight: which one is, is a race
        _notification("notifications/cancelled", {"requestId": "not in flight", "reason": "r"})
    ),
    "initialized": lambda rid: st.just(INITIALIZED),
    "initialize again": initialize,
    "server/discover": lambda rid: st.just(
        request(rid, "server/discover", {"_meta": _MODERN_META})
    ),
    "2026-07-28 tools/list": lambda rid: st.just(
        request(rid, "tools/list", {"_meta": _MODERN_META})
    ),
    "2026-07-28 tools/call": lambda rid: st.just(
        request(rid, "tools/call", {"name": "constant", "_meta": _MODERN_META})
    ),
    "garbage": lambda rid: st.just(b"this is not JSON"),
    "empty line": lambda rid: st.just(b""),
    "array": lambda rid: st.just([request(rid, "ping")]),
    "no jsonrpc": lambda rid: st.just({"id": rid, "method": "ping"}),
    "jsonrpc 1.0": lambda rid: st.just({"jsonrpc": "1.0", "id": rid, "method": "ping"}),
    "a response": lambda rid: st.just({"jsonrpc": "2.0", "id": rid, "result": {}}),
}
"""Anything else a client (or a broken one) may send, by the id it may use."""


@st.composite
def other(draw: st.DrawFn, request_id: types.RequestId) -> object:
    """One of :data:`_OTHERS`."""
    return draw(_OTHERS[draw(st.sampled_from(sorted(_OTHERS)))](request_id))


@st.composite
def encoded(draw: st.DrawFn, message: object) -> bytes:
    """``message`` as one line, in one of the ways a client may write JSON."""
    if isinstance(message, bytes):
        body = message
    else:
        if isinstance(message, dict) and draw(st.booleans()):
            message = dict(reversed(message.items()))  # "jsonrpc" last
        separators = draw(st.sampled_from([(",", ":"), (", ", ": ")]))
        ascii_only = draw(st.booleans())
        body = json.dumps(message, separators=separators, ensure_ascii=ascii_only).encode()
        if draw(st.integers(0, 9)) == 0:
            body = b" " + body + b"\t"
    return body + draw(st.sampled_from([b"\n"] * 4 + [b"\r\n"]))


@st.composite
def conversations(draw: st.DrawFn) -> list[bytes]:
    """An opening (initialize and notifications/initialized, or not) and a mix of messages.

    Each is written on its own, or (one conversation in four) some are written together.
    """
    ids = iter(draw(st.lists(_IDS, min_size=16, max_size=16)))
    messages: list[object] = []
    opening = draw(st.sampled_from(["proper"] * 6 + ["malformed", "none"]))
    if opening == "proper":
        params = {
            "protocolVersion": draw(_VERSIONS),
            "capabilities": draw(_capabilities()),
            "clientInfo": draw(_client_info()),
        }
        messages.append(request(next(ids), "initialize", params))
    elif opening == "malformed":
        messages.append(draw(initialize(next(ids))))
    messages.extend([INITIALIZED] * draw(st.sampled_from([1, 1, 1, 0, 2])))
    kinds = st.sampled_from(["call", "call", "list", "list", "other", "other"])
    for kind in draw(st.lists(kinds, min_size=1, max_size=10)):
        request_id = next(ids)
        if kind == "call":
            messages.append(draw(tool_call(request_id)))
        elif kind == "list":
            messages.append(draw(tools_list(request_id)))
        else:
            messages.append(draw(other(request_id)))
    lines = [draw(encoded(message)) for message in messages]
    if draw(st.integers(0, 3)) > 0:
        return lines
    # Some lines written together: what the prelude has read but not served goes to the SDK.
    joined = draw(st.lists(st.booleans(), min_size=len(lines), max_size=len(lines)))
    writes = [lines[0]]
    for one, join in zip(lines[1:], joined, strict=False):
        if join:
            writes[-1] += one
        else:
            writes.append(one)
    return writes


EXAMPLES: Final = int(os.environ.get("MCP_CORE_PRELUDE_EXAMPLES", "15"))
CONVERSATIONS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@CONVERSATIONS
@given(
    lines=conversations(),
    app=st.sampled_from([None] * 5 + ["plain", "dressed", "empty", "hidden", "slow source"]),
    launcher=st.sampled_from(sorted(LAUNCHERS)),
)
def test_a_generated_conversation_gets_the_sdks_bytes(
    lines: list[bytes], app: str | None, launcher: str
) -> None:
    """Whatever a client sends first, the prelude on and off write the same stdout and exit alike.

    Mostly to the default app (its tools are the ones called), sometimes to another; served by
    ``python app.py`` or ``mcp-core run app.py``.
    """
    assert_same(lines, app, launcher)


# -- the prelude engages, and hands over ---------------------------------------------------------


def _loaded(transcript: Transcript, request_id: int) -> bool:
    result = response(transcript, request_id)["result"]
    loaded = result["structuredContent"]["result"]
    assert isinstance(loaded, bool), result
    return loaded


@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_calls_run_before_the_sdk_is_imported_until_a_request_needs_it(launcher: str) -> None:
    """Lists, pings and calls leave ``mcp`` unimported; a request only the SDK serves hands over."""
    lines = [
        line(hello()),
        line(INITIALIZED),
        line(request(1, "ping")),
        line(request(2, "tools/list")),
        line(request(3, "tools/list", {"cursor": CURSORS[0]})),
        line(call(4, "sdk_loaded", {})),
        line(call(5, "sdk_loaded", {})),
        line(request(6, "logging/setLevel", {"level": "info"})),
        line(call(7, "sdk_loaded", {})),
    ]
    sdk, prelude = both(lines, launcher=launcher)
    assert [_loaded(sdk, n) for n in (4, 5, 7)] == [True, True, True]  # the SDK's path: at start
    assert [_loaded(prelude, n) for n in (4, 5, 7)] == [False, False, True]
    for request_id in (0, 1, 2, 3, 6):  # and the rest is the SDK's, byte for byte
        assert response(prelude, request_id) == response(sdk, request_id)


@pytest.mark.parametrize(
    "first",
    [
        pytest.param(request(1, "resources/list"), id="a method it does not serve"),
        pytest.param(call(1, "logs", {}), id="a tool taking the gateway"),
        pytest.param(request(1, "logging/setLevel", {"level": "info"}), id="logging/setLevel"),
        pytest.param(request(1, "tools/list", {"_meta": _MODERN_META}), id="a 2026-07-28 request"),
    ],
)
def test_what_the_prelude_does_not_serve_is_handed_over(first: dict[str, Any]) -> None:
    """The SDK answers from the first message the prelude does not serve on, imported by then."""
    lines = [line(hello()), line(INITIALIZED), line(first), line(call(2, "sdk_loaded", {}))]
    _, prelude = assert_same([*lines[:3], line(request(2, "ping"))])
    assert response(prelude, 1)  # answered, as the SDK answered it
    assert _loaded(converse(lines, prelude=True), 2) is True


def test_the_switch_turns_the_prelude_off() -> None:
    """With ``MCP_CORE_STDIO_PRELUDE=0`` the SDK is imported before the first message is read."""
    lines = [line(hello()), line(INITIALIZED), line(call(1, "sdk_loaded", {}))]
    assert _loaded(converse(lines, prelude=False), 1) is True


@pytest.mark.parametrize("middle", ["constant", "logs"])
def test_a_tools_list_walk_survives_the_hand_over(middle: str) -> None:
    """Page one from the prelude, a call, then page one's cursor: every tool once, as the SDK lists.

    The cursors sent are those the app issues (computed here: they are deterministic); each page's
    ``nextCursor`` must be the one sent next. ``constant`` is served by the prelude and hands over
    once answered; ``logs`` (it takes the gateway) is handed over unanswered.
    """
    lines = [line(hello()), line(INITIALIZED), line(request(1, "tools/list"))]
    lines.append(line(call(100, middle, {})))
    issued = CURSORS
    lines.extend(
        line(request(index + 2, "tools/list", {"cursor": cursor}))
        for index, cursor in enumerate(issued)
    )
    _, prelude = assert_same(lines)
    names: list[str] = []
    for index in range(len(issued) + 1):
        page = response(prelude, index + 1)["result"]
        names.extend(tool["name"] for tool in page["tools"])
        assert page.get("nextCursor") == (issued[index] if index < len(issued) else None), page
    assert names == TOOLS
    assert "isError" not in response(prelude, 100)["result"]


# -- other apps ----------------------------------------------------------------------------------


def _opening(first: str, version: str = "2025-11-25") -> list[bytes]:
    """A handshake, a list, a first call of ``first``, more calls, and the lists left to the SDK."""
    return [
        line(hello(version, roots={"listChanged": True})),
        line(INITIALIZED),
        line(request(1, "ping")),
        line(request(2, "tools/list")),
        line(call(3, first, {})),
        line(call(4, "constant", {})),
        line(call(5, "add", {"a": 1, "b": 2})),
        line(request(6, "tools/list")),
        line(request(7, "resources/templates/list")),
        line(request(8, "prompts/list")),
    ]


@pytest.mark.parametrize(
    ("app", "first"),
    [
        ("plain", "constant"),
        ("plain", "add"),  # arguments missing
        ("dressed", "constant"),
        ("empty", "constant"),  # no such tool
        ("hidden", "secret"),  # as missing as a missing one
        ("hidden", "constant"),
        ("slow start", "constant"),
        ("failed start", "constant"),
        ("timeout", "sleeps"),  # the server's own JSON-RPC error
        ("slow source", "late"),  # listed and called once provided
        ("slow source", "constant"),
        ("source down", "late"),  # a backend that is down: an unknown tool
        (None, "exits"),
        (None, "prints"),  # stdout is not the wire
        (None, "reads"),  # nor is stdin
        (None, "refuses"),
        (None, "fails"),
        (None, "nan"),
        (None, "rich"),
        (None, "roots"),  # asks the client: handed over
    ],
)
@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_other_apps_get_the_sdks_bytes(app: str | None, first: str, launcher: str) -> None:
    """Server info, element kinds, visibility, lifespans, timeouts and failing tools: as the SDK."""
    sdk, _ = assert_same(_opening(first), app, launcher)
    if app == "failed start":  # a lifespan that fails ends the process before any answer
        assert sdk.code != 0
        assert not sdk.lines()
    else:
        assert sdk.lines(), "the SDK answered nothing: the case tests nothing"


@pytest.mark.parametrize("app", ["plain", "dressed", "empty", None])
@pytest.mark.parametrize("version", ["2025-06-18", "1999-01-01"])
def test_another_version_is_handed_over_at_once(app: str | None, version: str) -> None:
    """An ``initialize`` of another version than the prelude's: the SDK serves it all."""
    assert_same(_opening("constant", version), app)


def test_a_running_call_cancelled_is_never_answered() -> None:
    """A call cancelled while it runs (the first, a later one): no answer; the session goes on."""

    def cancelled(request_id: int) -> bytes:
        cancel = {"requestId": request_id, "reason": "changed my mind"}
        return line(call(request_id, "slow", {})) + line(
            _notification("notifications/cancelled", cancel)
        )

    lines = [
        line(hello()),
        line(INITIALIZED),
        cancelled(3),
        line(request(4, "ping")),
        line(call(5, "slow", {})) + line(request(6, "tools/list")),  # answers in either order
        cancelled(7),
        line(call(8, "constant", {})),
        cancelled(9),
        line(request(10, "resources/list")),  # handed over: the SDK serves the rest
        cancelled(11),
        line(call(12, "constant", {})),
    ]
    _, prelude = assert_same(lines)
    answered = [message.get("id") for message in prelude.json()]
    assert answered in ([0, 4, 5, 6, 8, 10, 12], [0, 4, 6, 5, 8, 10, 12]), prelude.lines()


def test_messages_written_while_a_call_runs_are_served_beside_it() -> None:
    """Lines coming while a call runs are answered meanwhile, or handed over as it still runs."""
    lines = [
        line(hello()),
        line(INITIALIZED),
        line(call(1, "slow", {}))
        + line(request(2, "ping"))
        + line(request(3, "tools/list"))
        + line(call(4, "sdk_loaded", {}))
        + line(request(5, "logging/setLevel", {"level": "info"}))
        + line(call(6, "sdk_loaded", {})),
        line(call(7, "constant", {})),
    ]
    assert_same([*lines[:2], lines[2].replace(b"sdk_loaded", b"wait"), lines[3]])
    transcript = converse(lines, prelude=True)
    assert (_loaded(transcript, 4), _loaded(transcript, 6)) == (False, True)


# -- hostile lines -------------------------------------------------------------------------------

_HELLO_LINE: Final = line(hello())
_HOSTILE: Final[dict[str, list[bytes]]] = {
    "a 2 MB call first": [
        _HELLO_LINE,
        line(INITIALIZED),
        line(call(1, "echo", {"text": "\u00e9" * 1_000_000})),
        line(request(2, "ping")),
    ],
    "a 2 MB garbage line first": [b"x" * 2_000_000 + b"\n", _HELLO_LINE, line(request(1, "ping"))],
    "a 2 MB initialize": [
        line(
            request(
                0,
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"experimental": {"big": {"x": "y" * 2_000_000}}},
                    "clientInfo": {"name": "c", "version": "1"},
                },
            )
        ),
        line(INITIALIZED),
        line(call(1, "constant")),
    ],
    "invalid UTF-8 in a call's argument": [
        _HELLO_LINE,
        line(INITIALIZED),
        line(call(1, "echo", {"text": "a\udcffb"})).replace(b"\\udcff", b"\xff"),
        line(call(2, "echo", {"text": "ok"})),
    ],
    "invalid UTF-8 in a method name": [
        _HELLO_LINE,
        line(INITIALIZED),
        line(request(1, "tools/li\udcfest")).replace(b"\\udcfe", b"\xfe"),
        line(request(2, "tools/list")),
    ],
    "a line of invalid UTF-8 first": [b"\xff\xfe\xfd\x80\n", _HELLO_LINE, line(request(1, "ping"))],
    "CRLF throughout": [
        line(hello(), end=b"\r\n"),
        line(INITIALIZED, end=b"\r\n"),
        line(request(1, "tools/list"), end=b"\r\n"),
        line(call(2, "add", {"a": 1, "b": 2}), end=b"\r\n"),
        line(call(3, "add", {"a": 3, "b": 4}), end=b"\r\n"),
    ],
    "CR alone ends a line too": [
        line(hello(), end=b"\r") + line(INITIALIZED, end=b"\r"),
        line(request(1, "ping"), end=b"\r\n"),
        line(call(2, "constant"), end=b"\r") + line(request(3, "ping")),
    ],
    "two messages in one write": [
        _HELLO_LINE + line(INITIALIZED) + line(call(1, "constant")),
        line(call(2, "constant")),
    ],
    "a numeric protocolVersion": [
        line(request(0, "initialize", {**hello()["params"], "protocolVersion": 20251125})),
        line(INITIALIZED),
        line(call(1, "constant")),
        line(request(2, "tools/list")),
    ],
    "a float id and duplicated keys": [
        b'{"jsonrpc":"2.0","id":0.0,"method":"initialize","params":'
        + json.dumps(hello()["params"]).encode()
        + b"}\n",
        line(INITIALIZED),
        b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping","method":"tools/list"}\n',
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fails","name":"constant"}}\n',
    ],
    "a request before initialize": [line(call(1, "constant")), _HELLO_LINE, line(call(2, "add"))],
    "a lone surrogate in a call's argument": [
        _HELLO_LINE,
        line(INITIALIZED),
        (
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
            b'"arguments":{"text":"a\\ud800b"}}}\n'
        ),
        line(request(2, "ping")),
    ],
    "a lone surrogate in a client's name": [
        _HELLO_LINE.replace(b'"prelude-tests"', b'"\\udfff"'),
        line(INITIALIZED),
        line(call(1, "constant")),
    ],
    "NUL and controls in strings": [
        _HELLO_LINE,
        line(INITIALIZED),
        line(call(1, "echo", {"text": "\x00\x1f\x7f\u2028\ufeff"})),
        line(request("\x00", "ping")),
    ],
    "a byte order mark first": [b"\xef\xbb\xbf" + _HELLO_LINE, line(call(1, "constant"))],
    "ids at the edges": [
        line(request(2**64, "initialize", hello()["params"])),
        line(INITIALIZED),
        line(request(-(2**63), "tools/list")),
        line(call("\U0001f600", "constant")),
        b'{"jsonrpc":"2.0","id":true,"method":"ping"}\n',
        b'{"jsonrpc":"2.0","id":null,"method":"ping"}\n',
    ],
    "initialized with params, then before initialize": [
        line(_notification("notifications/initialized", {})),
        _HELLO_LINE,
        line(_notification("notifications/initialized", {"_meta": {}})),
        line(call(1, "constant")),
    ],
    "capabilities at the edge of what the prelude takes": [
        line(
            hello(
                roots={"listChanged": False},
                sampling={"context": {}, "tools": {}},
                elicitation={"form": {"x": 1}, "url": {}},
                experimental={"a": {"b": [1]}},
            )
        ),
        line(INITIALIZED),
        line(call(1, "constant")),
        line(call(2, "roots")),
    ],
    "capabilities just past it": [
        line(hello(roots={"listChanged": "yes"}, sampling={"other": {}})),
        line(INITIALIZED),
        line(call(1, "constant")),
        line(call(2, "roots")),
    ],
    "client info with every field": [
        line(
            request(
                0,
                "initialize",
                {
                    **hello()["params"],
                    "clientInfo": {
                        "name": "c",
                        "version": "1",
                        "title": "T",
                        "description": "d",
                        "websiteUrl": "https://example.org",
                    },
                },
            )
        ),
        line(INITIALIZED),
        line(call(1, "constant")),
    ],
}
"""Conversations that a prelude reading lines itself could get wrong."""


@pytest.mark.parametrize("lines", list(_HOSTILE.values()), ids=list(_HOSTILE))
def test_hostile_lines_get_the_sdks_bytes(lines: list[bytes]) -> None:
    """Long lines, bad UTF-8, CR/CRLF endings, odd JSON: the prelude writes what the SDK writes."""
    sdk, _ = assert_same(lines)
    assert sdk.lines(), "the SDK answered nothing: the case tests nothing"


_TRACE: Final = {
    "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "tracestate": "vendor=value",
}


def _traced(message: dict[str, Any], meta: object = _TRACE) -> dict[str, Any]:
    """``message`` with ``meta`` as its params' ``_meta``, as a client that traces sends it."""
    traced: dict[str, Any] = json.loads(json.dumps(message))
    traced.setdefault("params", {})["_meta"] = meta
    return traced


@pytest.mark.parametrize(
    "meta",
    [_TRACE, {"traceparent": 7}, {**_TRACE, "progressToken": "p"}, "not an object"],
    ids=["a trace context", "a traceparent not a string", "a progress token", "not an object"],
)
def test_a_trace_context_in_meta_gets_the_sdks_bytes(meta: object) -> None:
    """A client with tracing sends ``_meta.traceparent`` on every message: the same answers."""
    lines = [
        line(_traced(hello(), meta)),
        line(_traced(INITIALIZED, meta)),
        line(_traced(request(1, "ping"), meta)),
        line(_traced(request(2, "tools/list"), meta)),
        line(_traced(call(3, "constant", {}), meta)),
    ]
    sdk, _ = assert_same(lines)
    assert sdk.lines(), "the SDK answered nothing: the case tests nothing"
    if meta is _TRACE:  # a trace context alone is served by the prelude: no SDK imported
        lines[-1] = line(_traced(call(3, "sdk_loaded", {}), meta))
        assert _loaded(converse(lines, prelude=True), 3) is False


@pytest.mark.parametrize(
    "last",
    [call(1, "constant"), request(1, "ping"), request(1, "tools/list")],
    ids=["tools/call", "ping", "tools/list"],
)
def test_a_request_the_end_of_input_cuts_short(last: dict[str, Any]) -> None:
    """The last request, with no newline: read at the end of input, it gets what the SDK gives."""
    assert_same([_HELLO_LINE, line(INITIALIZED), line(last)[:-1]])


# -- ends -----------------------------------------------------------------------------------------


def _first_lines() -> list[bytes]:
    """A session's first four lines: the handshake, a list, a call."""
    return [
        line(hello()),
        line(INITIALIZED),
        line(request(1, "tools/list")),
        line(call(2, "constant", {})),
    ]


_OPENING: Final = _first_lines()


def _signalled(signum: signal.Signals, opening: Sequence[bytes], *, prelude: bool) -> Transcript:
    """``opening`` (each request answered), then ``signum``: what was written and the exit code."""
    transcript = Transcript()
    server = _Spawned(prelude=prelude, app=None)
    try:
        for sent in opening:
            step: list[bytes] = []
            transcript.steps.append(step)
            server.send(sent)
            assert server.until(_awaited(sent)[0], step) is None, step
        server.process.send_signal(signum)
        if server.until(None, transcript.tail) is not None:
            transcript.stalled = f"stdout still open {WAIT} s after {signum.name}"
    finally:
        if transcript.stalled is not None:
            server.process.kill()
        transcript.code, transcript.stderr = server.end()
    return transcript


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
@pytest.mark.parametrize("served", [1, 3, 4], ids=["initialize", "a list", "a call"])
def test_a_signal_ends_the_process_as_it_ends_the_sdks(signum: signal.Signals, served: int) -> None:
    """SIGTERM or SIGINT while the prelude serves, or after it handed over: the same end."""
    opening = _OPENING[:served]
    with ThreadPoolExecutor(2) as pool:
        sdk = pool.submit(_signalled, signum, opening, prelude=False)
        prelude = pool.submit(_signalled, signum, opening, prelude=True)
    sdk_end, prelude_end = sdk.result(), prelude.result()
    assert sdk_end.stalled is None, sdk_end.stderr.decode()
    assert _outcome(prelude_end) == _outcome(sdk_end), (
        prelude_end,
        sdk_end,
        prelude_end.stderr.decode()[-2000:],
    )
    last = prelude_end.stderr.decode().strip().splitlines()[-1:]
    assert last == sdk_end.stderr.decode().strip().splitlines()[-1:]  # "stopped serving ..."


def _client_gone(*, prelude: bool, first: Sequence[bytes]) -> int | None:
    """The exit code once the client closed its end of stdout after ``first`` was answered."""
    process = subprocess.Popen(  # noqa: S603 -- this interpreter and a fixture of ours
        [sys.executable, str(APP)],
        cwd=ROOT,
        env=_environment(prelude),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    timer = threading.Timer(WAIT, process.kill)  # a hung server fails the test, never hangs it
    timer.start()
    try:
        for sent in first:
            process.stdin.write(sent)
            process.stdin.flush()
            if _awaited(sent)[0]:
                assert process.stdout.readline()
        process.stdout.close()  # the client is gone
        with contextlib.suppress(BrokenPipeError):
            for request_id in range(10, 20):  # answers that cannot be written any more
                process.stdin.write(line(request(request_id, "ping")))
                process.stdin.flush()
        return process.wait(timeout=WAIT)
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()
        with contextlib.suppress(BrokenPipeError):
            process.stdin.close()


@pytest.mark.parametrize("served", [1, 4], ids=["initialize", "a call"])
def test_a_client_that_closes_stdout_ends_the_process_as_the_sdks(served: int) -> None:
    """The client closes its end of stdout: the server ends without waiting for stdin."""
    first = _OPENING[:served]
    with ThreadPoolExecutor(2) as pool:
        sdk = pool.submit(_client_gone, prelude=False, first=first)
        prelude = pool.submit(_client_gone, prelude=True, first=first)
    assert prelude.result() == sdk.result()


# -- the official client -------------------------------------------------------------------------


async def _client_session(mode: str, launcher: str, *, prelude: bool, captured: Path) -> list[Any]:
    """Every result of listing all tools and calling three, with stdout captured on the way."""
    server = StdioServerParameters(
        command="sh",
        args=[
            "-c",
            'out="$1"; shift; "$@" | tee "$out"',
            "sh",
            str(captured),
            *LAUNCHERS[launcher],
        ],
        cwd=ROOT,
        env=_environment(prelude),
    )
    async with Client(server, mode=mode) as client:
        listed = await pages(
            lambda cursor: client.list_tools(cursor=cursor, cache_mode="bypass"), "tools"
        )
        first = await client.call_tool("constant", {})
        second = await client.call_tool("add", {"a": 2, "b": 3})
        third = await client.call_tool("rich", {})
    return [
        [tool.model_dump(mode="json") for tool in listed],
        *(result.model_dump(mode="json") for result in (first, second, third)),
    ]


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_official_client_gets_the_same_answers(
    mode: str, launcher: str, tmp_path: Path
) -> None:
    """``mcp.Client`` in both eras: the same results and the same stdout, prelude on or off."""
    sdk_out, prelude_out = tmp_path / "sdk.out", tmp_path / "prelude.out"
    with anyio.fail_after(2 * WAIT):
        sdk = await _client_session(mode, launcher, prelude=False, captured=sdk_out)
        prelude = await _client_session(mode, launcher, prelude=True, captured=prelude_out)
    assert [tool["name"] for tool in sdk[0]] == TOOLS
    assert sdk[1]["content"][0]["text"] == "c\u00e9 \U0001f600"
    assert sdk[2]["structured_content"] == {"result": 5}
    assert sdk[3]["structured_content"]["z"] == [None, {"b": 1, "a": 0}]
    assert prelude == sdk
    written = sdk_out.read_bytes().splitlines()
    assert len(written) >= 8, written  # an answer to each request (and the walk's pages)
    assert prelude_out.read_bytes().splitlines() == written


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
@pytest.mark.parametrize(("mode", "first"), [("legacy", False), ("auto", True)])
async def test_the_official_client_is_served_by_the_prelude_in_the_handshake_era(
    mode: str, first: bool, launcher: str
) -> None:
    """Legacy mode's calls run before the SDK is imported; 2026-07-28 is handed over."""
    command, *args = LAUNCHERS[launcher]
    server = StdioServerParameters(
        command=command, args=args, cwd=ROOT, env=_environment(prelude=True)
    )
    with anyio.fail_after(WAIT):
        async with Client(server, mode=mode) as client:
            loaded = [
                (await send_call(client, "sdk_loaded", {})).structured_content for _ in range(2)
            ]
    assert loaded == [{"result": first}, {"result": first}]


def test_a_change_the_first_call_makes_is_announced() -> None:
    """The first call (served by the prelude) adds a tool: ``list_changed`` follows, once.

    Prelude on only: with the SDK serving from the first byte the announcement of this change
    is itself a race with the first load of the catalogue (sent in some runs, not in others).
    """
    growing_cursor = CursorCodec(default_cursor_secret("growing")).encode("tools", "from_file")
    lines = [
        line(hello()),
        line(INITIALIZED),
        line(request(1, "tools/list")),
        line(call(2, "grow", {})),
        line(request(3, "tools/list")),
        line(request(4, "tools/list", {"cursor": growing_cursor})),
    ]
    transcript = converse(lines, prelude=True, app="growing")
    written = transcript.json()
    changed = [m for m in written if m.get("method") == "notifications/tools/list_changed"]
    assert len(changed) == 1, transcript.lines()
    assert written.index(changed[0]) > written.index(response(transcript, 2))
    listed = [
        tool["name"]
        for request_id in (3, 4)
        for tool in response(transcript, request_id)["result"]["tools"]
    ]
    assert listed == ["constant", "from_file", "grow", "grown"]


_CLOSED: Final = b'{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Connection closed"}}'
"""What the server answers a request still running when the session ends."""


def _to_the_end(data: bytes, *, prelude: bool) -> tuple[int | None, list[bytes]]:
    """Write ``data`` to a fresh app and close its stdin at once: exit code and stdout lines."""
    process = subprocess.Popen(  # noqa: S603 -- this interpreter and a fixture of ours
        LAUNCHERS["python"],
        cwd=ROOT,
        env=_environment(prelude),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = process.communicate(data, timeout=WAIT)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"still serving {WAIT} s after the end of input; stderr: {err[-2000:]!r}")
    assert b"Traceback" not in err, err.decode(errors="replace")
    return process.returncode, out.splitlines()


# A call that outlasts any hand-over, however loaded the machine: still running at the end.
_SLOW_CALL: Final = [line(hello()), line(INITIALIZED), line(call(2, "slow", {"seconds": 3600}))]


@pytest.mark.parametrize(
    ("then", "answered"),
    [
        ([], True),
        ([line(request(3, "resources/list"))], True),  # handed over with the call running
        ([line(_notification("notifications/cancelled", {"requestId": 2}))], False),
    ],
    ids=["the end", "a hand-over, then the end", "withdrawn, then the end"],
)
def test_a_call_running_at_the_end_of_input_is_answered_as_the_sdk_answers_it(
    then: list[bytes], answered: bool
) -> None:
    """The session's end cuts a running call short: ``Connection closed``, unless withdrawn.

    The prelude once ended such a call unanswered; the SDK's server tells its client.
    """
    data = b"".join([*_SLOW_CALL, *then])
    for prelude in (False, True):
        code, lines = _to_the_end(data, prelude=prelude)
        assert code == 0
        assert (_CLOSED in lines) is answered, (prelude, lines)
        assert not [one for one in lines if b'"id":2,' in one and one != _CLOSED], lines


_STDIN_CONVERSATION: Final = b"".join(
    [
        line(hello()),
        line(INITIALIZED),
        line(call(2, "add", {"a": 1, "b": 2})),
        line(request(3, "tools/list")),
        line(request(4, "ping")),
    ]
)


@contextlib.contextmanager
def _stdin_of_kind(kind: str, tmp_path: Path) -> Iterator[tuple[int, Callable[[], None]]]:
    """A file descriptor of ``kind`` to serve as stdin, and what to do once the server started.

    Each holds the same conversation, then its end (``/dev/null`` holds nothing at all).
    """
    if kind == "/dev/null":
        fd = os.open(os.devnull, os.O_RDONLY)
    elif kind == "a regular file":
        tmp_path.mkdir()
        held = tmp_path / "conversation.jsonl"
        held.write_bytes(_STDIN_CONVERSATION)
        fd = os.open(held, os.O_RDONLY)
    else:  # a socket, as an inetd-style launcher or a supervisor hands one over
        ours, theirs = socket.socketpair()
        fd = theirs.detach()

        def feed() -> None:
            ours.sendall(_STDIN_CONVERSATION)
            ours.shutdown(socket.SHUT_WR)

        try:
            yield fd, feed
        finally:
            ours.close()
            os.close(fd)
        return
    try:
        yield fd, lambda: None
    finally:
        os.close(fd)


def _served_from(kind: str, tmp_path: Path, *, prelude: bool, launcher: str) -> tuple[Any, ...]:
    """Serve the app with stdin of ``kind`` to its end: exit code and the answers it wrote."""
    with _stdin_of_kind(kind, tmp_path) as (fd, feed):
        process = subprocess.Popen(  # noqa: S603 -- this interpreter and a fixture of ours
            LAUNCHERS[launcher],
            cwd=ROOT,
            env=_environment(prelude),
            stdin=fd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        feed()
        try:
            out, err = process.communicate(timeout=WAIT)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
            pytest.fail(
                f"stdin {kind}: still serving {WAIT} s after its end; stderr: {err[-2000:]!r}"
            )
    assert b"Traceback" not in err, err.decode(errors="replace")
    return process.returncode, [json.loads(one) for one in out.splitlines()]


@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
@pytest.mark.parametrize("kind", ["/dev/null", "a regular file", "a socket"])
def test_any_kind_of_stdin_is_served_to_its_end_as_the_sdk_serves_it(
    kind: str, launcher: str, tmp_path: Path
) -> None:
    """A stdin that is not a pipe (a service's ``/dev/null``, a file, a socket): served, then ended.

    The whole conversation is there at once, then its end: requests still running then are
    answered or not as the end meets them (the SDK's server drops some), so what both must agree
    on is that the session ends at once, cleanly, with ``initialize`` answered and no request
    answered twice or wrongly. ``/dev/null`` once hung the prelude: the event loop cannot watch it, so its end was never
    seen and the process served nothing forever.
    """
    expected = {
        0: "result",
        2: {"content": [{"type": "text", "text": "3"}], "structuredContent": {"result": 3}},
        3: "result",
        4: {},
    }
    for prelude in (False, True):
        code, answers = _served_from(
            kind, tmp_path / str(prelude), prelude=prelude, launcher=launcher
        )
        assert code == 0, (prelude, answers)
        if kind == "/dev/null":
            assert answers == []
            continue
        ids = [answer.get("id") for answer in answers]
        assert ids[0] == 0, answers  # initialize, answered first
        assert len(ids) == len(set(ids)), answers
        for answer in answers:
            wanted = expected[answer["id"]]
            if answer.get("error") is not None:
                assert answer["error"] == {"code": -32000, "message": "Connection closed"}
            elif wanted == "result":
                assert "result" in answer
            else:
                assert answer["result"] == wanted, answer


_TOOLS_DIR: Final = ROOT / ".tools"
_TS_SDK: Final = _TOOLS_DIR / "node_modules" / "@modelcontextprotocol" / "sdk"
_TS_CLIENT: Final = ROOT / "tests" / "fixtures" / "ts_stdio_client.mjs"


def _node() -> str:
    """Node with the TypeScript SDK installed beside it (CI installs both: scripts/install)."""
    for node in (_TOOLS_DIR / "node_modules" / ".bin" / "node", Path("/usr/bin/node")):
        if node.is_file() and (_TS_SDK / "package.json").is_file():
            return str(node)
    message = (
        "Node and @modelcontextprotocol/sdk in .tools/: run bash scripts/install --with-services"
    )
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_the_typescript_client_gets_the_same_session(launcher: str) -> None:
    """The official TypeScript SDK's client over stdio sees the same server, prelude on or off.

    Lists across pages, a plain call, a failing one, one taking the gateway (a hand-over: it
    logs to the client), a ping: the same, but that the prelude served the first call before the
    Python SDK was imported.
    """
    node = _node()
    seen = {}
    for prelude in (False, True):
        done = subprocess.run(  # noqa: S603 -- Node and a fixture of ours
            [node, str(_TS_CLIENT), str(_TS_SDK), *LAUNCHERS[launcher]],
            cwd=ROOT,
            env=_environment(prelude),
            capture_output=True,
            timeout=WAIT,
            check=False,
        )
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        seen[prelude] = json.loads(done.stdout)
    assert seen[True].pop("loadedFirst") == {"result": False}
    assert seen[False].pop("loadedFirst") == {"result": True}
    assert seen[True] == seen[False]
    assert seen[True]["tools"] == TOOLS
    assert seen[True]["logged"] == ["x"]
    assert seen[True]["loadedLast"] == {"result": True}
