"""Wire fuzzing: generated JSON-RPC messages and element definitions against a real server.

``tests/fixtures/fuzz_app.py`` is served with ``mcp-core run`` over stdio and streamable HTTP.
Hypothesis generates messages (known methods with hostile params, unknown methods,
notifications, malformed envelopes, lone surrogates, deep nesting, both protocol eras) and
element definitions (the kit's valid ones, and hostile mutations of them, read through a
collection file). The oracle, for every message:

- the server stays up (the stdio process lives, the HTTP server answers every request);
- every message the SDK's own parser accepts as a JSON-RPC request gets exactly one
  well-formed response with its id (``subscriptions/listen`` is a stream, not generated);
- no response carries a traceback, a Python exception name the client did not send, or the
  SDK's catch-all error code 0 (which carries an exception's text).

``MCP_CORE_FUZZ_EXAMPLES`` scales the number of examples (CI runs the default, small numbers);
run with ``-s`` to see the figures (messages tried, answered, crashes, unanswered).
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import httpx2
import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.shared.inbound import encode_header_value
from mcp_types import JSONRPCRequest, jsonrpc_message_adapter

from mcp_conformance.strategies import definitions
from tests.e2e.conftest import run_http, stop

ROOT = Path(__file__).resolve().parents[2]
FUZZ_APP = ROOT / "tests" / "fixtures" / "fuzz_app.py"
MCP_CORE = Path(sys.executable).with_name("mcp-core")

EXAMPLES = int(os.environ.get("MCP_CORE_FUZZ_EXAMPLES", "60"))
DEFINITION_EXAMPLES = max(EXAMPLES // 6, 5)
ANSWER_TIMEOUT = 30.0  # seconds to wait for one answer before calling it unanswered
MODERN = "2026-07-28"
LEGACY = "2025-11-25"

HELLO: Final = {
    "protocolVersion": LEGACY,
    "capabilities": {},
    "clientInfo": {"name": "fuzz", "version": "1"},
}
"""The params of a handshake-era ``initialize``."""

FIGURES: Counter[str] = Counter(
    {
        f"{transport} {figure}": 0
        for transport in ("stdio", "http")
        for figure in ("crashes", "unanswered")
    }
)

# -- strategies ------------------------------------------------------------------------------------

HOSTILE_TEXT = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        [
            "",
            "\ud800",
            "a\udfffb",
            "\x00",
            "x" * 10_000,
            "../../etc/passwd",
            "Ω≈ç√",
            "app://items/{id}",
            "app://items/%FF",
            "app://items/1",
            "echo",
            "exits",
            "fails",
            "not_a_number",
            "reload",
            "RuntimeError",
        ]
    ),
)
TOOLS = st.sampled_from(["echo", "add", "exits", "fails", "not_a_number", "reload", "nope"])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    HOSTILE_TEXT,
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(HOSTILE_TEXT, inner, max_size=4),
    max_leaves=12,
)


def nested(depth: int) -> Any:
    """A value nested ``depth`` levels deep."""
    value: Any = "leaf"
    for index in range(depth):
        value = {"a": value} if index % 2 else [value]
    return value


DEEP = st.integers(min_value=1, max_value=400).map(nested)
ARGUMENTS = st.one_of(
    st.dictionaries(st.sampled_from(["text", "a", "b", "x"]) | HOSTILE_TEXT, JSON, max_size=4),
    JSON,
    DEEP,
)


def _params(method: str) -> st.SearchStrategy[Any]:
    shaped: Mapping[str, st.SearchStrategy[Any]] = {
        "tools/call": st.fixed_dictionaries(
            {"name": st.one_of(TOOLS, TOOLS, HOSTILE_TEXT)}, optional={"arguments": ARGUMENTS}
        ),
        "resources/read": st.fixed_dictionaries(
            {
                "uri": st.sampled_from(["app://note", "app://items/7", "app://items/x"])
                | HOSTILE_TEXT
            }
        ),
        "resources/subscribe": st.fixed_dictionaries({"uri": HOSTILE_TEXT}),
        "prompts/get": st.fixed_dictionaries(
            {"name": st.sampled_from(["greet", "nope"]) | HOSTILE_TEXT},
            optional={"arguments": st.dictionaries(HOSTILE_TEXT, JSON, max_size=3)},
        ),
        "completion/complete": st.fixed_dictionaries(
            {
                "ref": st.sampled_from(
                    [
                        {"type": "ref/prompt", "name": "greet"},
                        {"type": "ref/resource", "uri": "app://items/{id}"},
                    ]
                )
                | JSON,
                "argument": st.fixed_dictionaries({"name": HOSTILE_TEXT, "value": HOSTILE_TEXT})
                | JSON,
            }
        ),
        "logging/setLevel": st.fixed_dictionaries(
            {"level": st.sampled_from(["debug", "error"]) | HOSTILE_TEXT}
        ),
    }
    listing = st.fixed_dictionaries({}, optional={"cursor": HOSTILE_TEXT | JSON})
    # Mostly well-shaped params (they reach the handlers), sometimes anything at all.
    typical = shaped.get(method, listing)
    return st.one_of(typical, typical, typical, JSON, DEEP)


METHODS = [
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "ping",
    "initialize",
    "server/discover",
]


@st.composite
def messages(draw: st.DrawFn, *, modern: bool) -> Any:
    """One message: mostly calls (they reach user code), other requests, now and then anything."""
    aim = draw(st.sampled_from(["call"] * 5 + ["known"] * 3 + ["unknown", "anything"]))
    if aim == "call":
        method = "tools/call"
        params: Any = {"name": draw(st.one_of(*[TOOLS] * 4, HOSTILE_TEXT))}
        if draw(st.booleans()):
            params["arguments"] = draw(ARGUMENTS)
    elif aim == "known":
        method = draw(st.sampled_from(METHODS))
        params = draw(_params(method) | st.none())
    else:
        method = draw(HOSTILE_TEXT)
        params = draw(JSON | st.none()) if aim == "anything" else None
    if modern and isinstance(params, dict) and draw(st.booleans()):
        params = {
            **params,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        }
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    shape = draw(st.sampled_from(["request"] * 17 + ["notification", "malformed", "malformed"]))
    if shape == "request":
        message["id"] = draw(st.integers(min_value=1, max_value=2**53) | st.text(max_size=8))
    elif shape == "malformed":
        malformed: list[Any] = [
            {**message, "jsonrpc": "1.0", "id": 1},
            {**message, "id": None},
            {**message, "id": 1.5},
            {"jsonrpc": "2.0", "id": 1},
            [message, message],
        ]
        message = draw(st.one_of(st.sampled_from(malformed), JSON))
    return message


def _records(definition: Any) -> dict[str, Any]:
    return {
        "kind": definition.ref.kind.label,
        "definition": definition.to_wire(),
        "handler": "discovery_pkg_refs.handlers:Calculator.add",
    }


@st.composite
def hostile_records(draw: st.DrawFn) -> Any:
    """A collection-file record: a valid definition from the kit, often mutated to break it."""
    record = _records(draw(definitions()))
    mutation = draw(
        st.sampled_from(
            ["none", "deep", "surrogate", "schema", "regex", "huge", "junk", "handler", "garbage"]
        )
    )
    wire = record["definition"]
    if mutation == "deep":
        wire["_meta"] = {"deep": nested(draw(st.integers(min_value=60, max_value=900)))}
    elif mutation == "surrogate":
        wire["description"] = "lone \ud800 surrogate"
    elif mutation == "schema" and "inputSchema" in wire:
        wire["inputSchema"] = {"type": "object", "properties": {"a": {"type": draw(JSON)}}}
    elif mutation == "regex" and "inputSchema" in wire:
        wire["inputSchema"] = {"type": "object", "properties": {"a": {"pattern": "(["}}}
    elif mutation == "huge":
        wire["description"] = "x" * 2_000_000
    elif mutation == "junk":
        wire[draw(HOSTILE_TEXT)] = draw(JSON)
    elif mutation == "handler":
        record["handler"] = draw(st.sampled_from(["nope:nothing", "os:system", " ", "x"]))
    elif mutation == "garbage":
        return draw(JSON)
    return record


# -- the oracle ------------------------------------------------------------------------------------

# Python exception names and traceback markers: none may reach a client unless it sent them.
_LEAKS = re.compile(
    r"Traceback \(most recent call last\)|File \"|hunter2|/secret/path|"
    r"\b(?:[A-Z]\w*Error|[A-Z]\w*Exception|SystemExit|KeyboardInterrupt)\b"
)


def _texts(value: Any) -> Iterator[str]:
    """Every string value inside a JSON value (keys are the protocol's, not messages)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for member in value.values():
            yield from _texts(member)
    elif isinstance(value, list):
        for member in value:
            yield from _texts(member)


def _as_request(body: bytes) -> JSONRPCRequest | None:
    """The request the SDK's parser reads from ``body``, or None if it is no request to it."""
    try:
        message = jsonrpc_message_adapter.validate_json(body, by_name=False)
    except (pydantic.ValidationError, ValueError):
        return None
    return message if isinstance(message, JSONRPCRequest) else None


def check_response(response: Any, sent: bytes, request_id: object, *, authored: str = "") -> None:
    """A well-formed JSON-RPC response to ``request_id`` that leaks nothing.

    Text the client ``sent`` or the ``authored`` definitions hold may come back; nothing else
    that looks like a Python exception may.
    """
    assert isinstance(response, dict), response
    assert response.get("jsonrpc") == "2.0", response
    assert response.get("id") == request_id, (response, request_id)
    assert ("result" in response) != ("error" in response), response
    if "error" in response:
        error = response["error"]
        assert isinstance(error, dict), response
        assert isinstance(error.get("code"), int), response
        assert not isinstance(error.get("code"), bool), response
        assert isinstance(error.get("message"), str), response
        assert error["code"] != 0, f"the SDK's catch-all answered (an exception escaped): {error}"
    else:
        assert isinstance(response["result"], dict), response
    echoed = json.dumps(json.loads(sent), ensure_ascii=False) + authored
    for text in _texts(response):
        for leak in _LEAKS.finditer(text):
            assert leak.group(0) in echoed, f"leaked {leak.group(0)!r}: {response}"


def encode(message: Any) -> bytes:
    """The message as one line of JSON (lone surrogates as escapes, as a client could send)."""
    return json.dumps(message, ensure_ascii=True).encode()


# -- stdio -----------------------------------------------------------------------------------------


class StdioServer:
    """``mcp-core run fuzz_app.py`` with its stdout read line by line on a thread."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.process = subprocess.Popen(  # noqa: S603 -- our own console script
            [str(MCP_CORE), "run", str(FUZZ_APP)],
            cwd=ROOT,
            env={**os.environ, **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def send(self, body: bytes) -> None:
        """Write one line."""
        assert self.process.stdin is not None
        self.process.stdin.write(body + b"\n")
        self.process.stdin.flush()

    def answer(self, request_id: object) -> Any:
        """The response to ``request_id``, skipping notifications; None if none came in time."""
        while True:
            try:
                line = self.lines.get(timeout=ANSWER_TIMEOUT)
            except queue.Empty:
                return None
            message = json.loads(line)
            if isinstance(message, dict) and "id" in message and message["id"] == request_id:
                return message
            assert "id" not in message or message.get("id") is None, f"stray answer {message}"

    def drain(self) -> list[Any]:
        """Whatever arrived without being asked for (answers to non-requests, notifications)."""
        found = []
        while not self.lines.empty():
            found.append(json.loads(self.lines.get_nowait()))
        return found

    def initialize(self) -> None:
        """The handshake-era initialize exchange."""
        params = {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "f", "version": "1"},
        }
        self.send(
            encode({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": params})
        )
        assert self.answer("init") is not None
        self.send(encode({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def close(self) -> None:
        """Stop the server and close its pipes."""
        self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


@pytest.fixture(scope="module")
def collection_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the definition fuzz writes its generated collections."""
    path = tmp_path_factory.mktemp("fuzz") / "generated.json"
    path.write_text(
        json.dumps({"format": "mcp-core/element-collection", "version": 1, "elements": []})
    )
    return path


@pytest.fixture(scope="module", autouse=True)
def figures() -> Iterator[None]:
    """Print the figures of the run when the module is done (visible with ``-s``)."""
    yield
    print(f"\nwire fuzz figures: {dict(sorted(FIGURES.items()))}")  # noqa: T201 -- the figures of a long run


@pytest.fixture(scope="module")
def stdio_server(collection_file: Path) -> Iterator[StdioServer]:
    """One stdio server for every example, initialized."""
    server = StdioServer({"FUZZ_COLLECTION": str(collection_file)})
    try:
        server.initialize()
        yield server
    finally:
        server.close()


def exchange_stdio(server: StdioServer, message: Any, *, authored: str = "") -> Any:
    """Send ``message``; check the answer it must get; return it (None if it needs none)."""
    body = encode(message)
    request = _as_request(body)
    server.send(body)
    FIGURES["stdio messages"] += 1
    response = None
    if request is not None:
        response = server.answer(request.id)
        if response is None:
            FIGURES["stdio unanswered"] += 1
        assert response is not None, f"no answer to {body[:300]!r}"
        FIGURES["stdio answered"] += 1
        check_response(response, body, request.id, authored=authored)
    if server.process.poll() is not None:
        FIGURES["stdio crashes"] += 1
        pytest.fail(f"the server exited ({server.process.returncode}) after {body[:300]!r}")
    return response


# -- HTTP ------------------------------------------------------------------------------------------


class HttpServer:
    """``mcp-core run fuzz_app.py --transport http`` and a legacy session on it."""

    def __init__(self, env: Mapping[str, str]) -> None:
        url, self.process = run_http(FUZZ_APP, env=env)
        self.url = f"{url}/mcp"
        self.http = httpx2.Client(timeout=ANSWER_TIMEOUT)
        self.session = ""

    def post(self, body: bytes, headers: Mapping[str, str]) -> httpx2.Response:
        """POST one message."""
        base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        return self.http.post(self.url, content=body, headers={**base, **headers})

    def initialize(self) -> None:
        """Open a handshake-era session."""
        params = {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "f", "version": "1"},
        }
        reply = self.post(
            encode({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}), {}
        )
        self.session = reply.headers["mcp-session-id"]
        self.post(encode({"jsonrpc": "2.0", "method": "notifications/initialized"}), self.legacy)

    @property
    def legacy(self) -> dict[str, str]:
        """The headers of the handshake-era session."""
        return {"mcp-session-id": self.session, "mcp-protocol-version": LEGACY}

    def close(self) -> None:
        """Stop the server."""
        self.http.close()
        stop(self.process)


@pytest.fixture(scope="module")
def http_server(collection_file: Path) -> Iterator[HttpServer]:
    """One HTTP server and session for every example."""
    server = HttpServer({"FUZZ_COLLECTION": str(collection_file)})
    try:
        server.initialize()
        yield server
    finally:
        server.close()


def _modern_headers(message: Any) -> dict[str, str]:
    # The routing headers a 2026-07-28 client sends, encoded as the SDK's client encodes them;
    # a value no header can carry (a lone surrogate) is left out, for the server to refuse.
    headers = {"mcp-protocol-version": MODERN}
    if not isinstance(message, dict):
        return headers
    params = message.get("params")
    for header, value in (
        ("mcp-method", message.get("method")),
        ("mcp-name", params.get("name") if isinstance(params, dict) else None),
    ):
        if isinstance(value, str):
            try:
                headers[header] = encode_header_value(value)
            except UnicodeEncodeError:
                continue
    return headers


def _json_rpc_bodies(reply: httpx2.Response) -> list[Any]:
    kind = reply.headers.get("content-type", "")
    if kind.startswith("text/event-stream"):
        # SSE lines end in CR LF, LF or CR only (str.splitlines would also split at U+0085).
        return [
            json.loads(line.removeprefix("data:"))
            for line in re.split(r"\r\n|\r|\n", reply.text)
            if line.startswith("data:") and line.removeprefix("data:").strip()
        ]
    if kind.startswith("application/json") and reply.content:
        return [reply.json()]
    return []


def exchange_http(server: HttpServer, message: Any, *, modern: bool, authored: str = "") -> Any:
    """POST ``message``; check the answer it must get; return it (None if it needs none)."""
    body = encode(message)
    headers = _modern_headers(message) if modern else server.legacy
    try:
        reply = server.post(body, headers)
    except (httpx2.TimeoutException, httpx2.TransportError) as exc:
        if isinstance(exc, httpx2.LocalProtocolError):  # a header httpx refuses to send
            return None
        FIGURES["http unanswered"] += 1
        if server.process.poll() is not None:
            FIGURES["http crashes"] += 1
        pytest.fail(f"no HTTP answer to {body[:300]!r}: {exc!r}")
    FIGURES["http messages"] += 1
    assert reply.status_code < 500, (reply.status_code, reply.text[:300])
    request = _as_request(body)
    if request is None:
        return None
    answers = [b for b in _json_rpc_bodies(reply) if isinstance(b, dict) and "id" in b]
    assert answers, f"no JSON-RPC answer to {body[:300]!r}: {reply.status_code} {reply.text[:300]}"
    FIGURES["http answered"] += 1
    check_response(answers[-1], body, request.id, authored=authored)
    return answers[-1]


# -- the tests -------------------------------------------------------------------------------------

FUZZ = settings(
    max_examples=EXAMPLES,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@FUZZ
@given(message=messages(modern=True))
def test_stdio_messages(stdio_server: StdioServer, message: Any) -> None:
    """Over stdio every parseable request is answered, well-formed; the server stays up."""
    exchange_stdio(stdio_server, message)
    stdio_server.drain()


@FUZZ
@given(message=messages(modern=False))
def test_http_legacy_messages(http_server: HttpServer, message: Any) -> None:
    """Over HTTP (handshake-era session) every request is answered, well-formed."""
    exchange_http(http_server, message, modern=False)


@FUZZ
@given(message=messages(modern=True))
def test_http_modern_messages(http_server: HttpServer, message: Any) -> None:
    """Over HTTP (2026-07-28, stateless) every request is answered, well-formed."""
    exchange_http(http_server, message, modern=True)


def _all_requests() -> list[dict[str, Any]]:
    return [
        {"jsonrpc": "2.0", "id": f"list-{method}", "method": method}
        for method in ("tools/list", "resources/list", "resources/templates/list", "prompts/list")
    ]


@settings(max_examples=DEFINITION_EXAMPLES, suppress_health_check=list(HealthCheck))
@given(records=st.lists(hostile_records(), max_size=6))
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_generated_definitions(
    transport: str,
    records: list[Any],
    collection_file: Path,
    request: pytest.FixtureRequest,
) -> None:
    """Generated (often broken) definitions: lists and calls of everything else keep working."""
    collection_file.write_text(
        json.dumps({"format": "mcp-core/element-collection", "version": 1, "elements": records})
    )
    server = request.getfixturevalue(f"{transport}_server")
    # What the generated definitions say may be listed back (a prompt named "AError" is no leak).
    authored = json.dumps(records, ensure_ascii=False)

    def ask(message: dict[str, Any]) -> Any:
        if transport == "stdio":
            return exchange_stdio(server, message, authored=authored)
        return exchange_http(server, message, modern=False, authored=authored)

    FIGURES["definitions tried"] += len(records)
    reloaded = ask(
        {"jsonrpc": "2.0", "id": "reload", "method": "tools/call", "params": {"name": "reload"}}
    )
    assert reloaded["result"]["content"][0]["text"] == "reloaded"
    listed = [ask(message) for message in _all_requests()]
    tools = [t["name"] for t in listed[0]["result"]["tools"]]
    assert {"echo", "add", "reload"} <= set(tools)
    for name in tools:
        if name not in ("reload", "exits", "fails", "not_a_number"):
            ask(
                {
                    "jsonrpc": "2.0",
                    "id": f"call-{name}",
                    "method": "tools/call",
                    "params": {"name": name, "arguments": {"a": 1, "b": 2}},
                }
            )
    for resource in listed[1]["result"]["resources"]:
        ask(
            {
                "jsonrpc": "2.0",
                "id": "read",
                "method": "resources/read",
                "params": {"uri": resource["uri"]},
            }
        )
    echoed = ask(
        {
            "jsonrpc": "2.0",
            "id": "echo",
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "alive"}},
        }
    )
    assert echoed["result"]["content"][0]["text"] == "alive"
