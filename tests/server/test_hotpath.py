"""The HTTP hot path answers exactly as the SDK's path would: a differential test.

Two copies of one app are served in process, one as built (ordinary requests take the hot path,
``mcp_core.server._hotpath``), one with the hot path taken out (every request goes through the
SDK's session manager). Hypothesis generates requests, ordinary and hostile (both eras, every
header the transport reads, malformed bodies, oversized bodies, wrong methods, bad tokens), and
each is sent to both: status, headers and body must be the same. Session ids, which are random,
are compared as placeholders. Then a few properties the differential cannot see: the hot path is
taken at all, a handler that logs is answered with a stream, and a client that leaves cancels the
handler.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import re
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping, MutableMapping
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

import mcp.server._streamable_http_modern as sdk_modern
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context
from mcp.shared.inbound import encode_header_value
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.routing import Route

import mcp_core.server._hotpath as hot_module
from mcp_core.app import App
from mcp_core.server._edge import HttpEdge
from mcp_core.server._hotpath import HotPath
from mcp_core.visibility import scoped_by_tag

pytestmark = pytest.mark.filterwarnings(
    "ignore::mcp.shared.exceptions.MCPDeprecationWarning"  # logging/setLevel in 2026-07-28
)

MODERN: Final = "2026-07-28"
LEGACY: Final = "2025-11-25"
MAX_BODY: Final = 3000
ENVELOPE: Final = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "diff", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
TOKENS: Final = {
    name: AccessToken(token=name, client_id=f"{who}-app", scopes=scopes, subject=who)
    for name, who, scopes in (("alice-token", "alice", ["admin"]), ("bob-token", "bob", []))
}
BASE = "http://127.0.0.1:8000"


class StaticTokens:
    """A token verifier that knows two tokens."""

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's access info, or None for an unknown token."""
        return TOKENS.get(token)


def build_app(*, authenticated: bool = False, **options: Any) -> Starlette:  # noqa: C901 -- one nested def per element
    """An app with healthy, failing, talking and hidden elements; bearer auth if ``authenticated``.

    ``options`` go to ``App.asgi`` (``json_response``, ``stateless``).
    """
    app = App("diff")

    @app.tool
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @app.tool
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @app.tool
    def fails() -> str:
        """Fail with details that never reach the client."""
        raise RuntimeError("password=hunter2")

    @app.tool
    def not_a_number() -> float:
        """NaN, which JSON cannot carry."""
        return math.nan

    @app.tool
    async def talks(ctx: Context) -> str:
        """Log, report progress, then answer: the answer becomes a stream."""
        await ctx.info("working")
        await ctx.report_progress(1, 2)
        return "done"

    @app.tool
    def scale(value: float = 1e-07, label: str = "größe", factor: float = 1e16) -> float:
        """Scale a value — by 10⁻³ ± ε (non-ASCII text and floats that encoders write apart)."""
        return value * factor

    @app.tool(tags=("scope:admin",))
    def shutdown() -> str:
        """An admin-only tool."""
        return "shutting down"

    @app.resource("app://note")
    def note() -> str:
        """A fixed note."""
        return "a note"

    @app.prompt
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello {name}"

    app.visibility = scoped_by_tag(app.registry)
    options["max_request_body_size"] = MAX_BODY
    if authenticated:
        options["token_verifier"] = StaticTokens()
        options["auth"] = AuthSettings(
            issuer_url=AnyHttpUrl(BASE),
            resource_server_url=AnyHttpUrl(f"{BASE}/mcp"),
            validate_token_resource=False,
        )
    return app.asgi(**options)


def _endpoint(app: Starlette) -> Any:
    for route in app.routes:
        if isinstance(route, Route) and route.path == "/mcp":
            return route.app
    raise AssertionError("no /mcp route")


def hot_path_of(app: Starlette) -> HotPath:
    """The hot path in front of the app's MCP endpoint (inside the edge and authentication)."""
    guard: Any = _endpoint(app)
    while not isinstance(guard, HotPath):
        guard = guard._app if isinstance(guard, HttpEdge) else guard.app
    return guard


def without_hot_path(app: Starlette) -> Starlette:
    """``app`` with its hot path taken out: every request goes the SDK's way."""
    outer: Any = _endpoint(app)
    while True:
        inner = outer._app if isinstance(outer, HttpEdge) else outer.app
        if isinstance(inner, HotPath):
            if isinstance(outer, HttpEdge):
                outer._app = inner.sdk
            else:
                outer.app = inner.sdk
            return app
        outer = inner


@dataclass(frozen=True)
class Answer:
    """What a client sees of one answer."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


@dataclass(frozen=True)
class Sent:
    """One HTTP request."""

    method: str
    headers: tuple[tuple[str, str], ...]
    body: bytes


STREAM_WAIT: Final = 0.5
"""Seconds a client waits for an answer that streams on before it leaves."""
SESSION: Final = "<session>"
"""A header value standing for the session opened on the app the request is sent to."""
EVENT_ID: Final = re.compile(rb"^id: [^\r\n]*", re.MULTILINE)


async def exchange(
    app: Starlette, sent: Sent, *, leave: float | None = None, session: str = "none"
) -> Answer:
    """``sent`` through ``app`` as uvicorn would pass it; ``leave``: disconnect after that long.

    A header valued :data:`SESSION` carries ``session`` instead. In the answer, session ids
    and SSE event ids (random) are placeholders.
    """
    sent = Sent(
        sent.method,
        tuple((k, session if v == SESSION else v) for k, v in sent.headers),
        sent.body,
    )
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": sent.method,
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [(k.encode(), v.encode(errors="surrogatepass")) for k, v in sent.headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    pending = [{"type": "http.request", "body": sent.body, "more_body": False}]
    done = asyncio.Event()

    async def receive() -> MutableMapping[str, Any]:
        if pending:
            return pending.pop()
        if leave is not None:
            await asyncio.sleep(leave)
        else:
            # A stream that stays open (a GET's) is left after a while, as a client would.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), STREAM_WAIT)
        return {"type": "http.disconnect"}

    messages: list[Mapping[str, Any]] = []

    async def send(message: Mapping[str, Any]) -> None:
        messages.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body"):
            done.set()

    await app(scope, receive, send)
    if not messages:
        return Answer(0, (), b"")
    start = messages[0]
    headers = tuple(
        (k.decode("latin-1"), SESSION if k == b"mcp-session-id" else v.decode("latin-1"))
        for k, v in start["headers"]
    )
    body = b"".join(m.get("body", b"") for m in messages[1:])
    return Answer(start["status"], headers, EVENT_ID.sub(b"id: <id>", body))


class Served:
    """Apps served in one event loop on a thread, for synchronous (Hypothesis) tests."""

    def __init__(self, apps: Mapping[str, Starlette]) -> None:
        self.apps = dict(apps)
        self.sessions: dict[str, str] = {}
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self._stops: list[Callable[[], Awaitable[None]]] = []
        for name, app in self.apps.items():
            self.run(self._start(app))
            self.sessions[name] = self.run(open_session(app, "alice-token"))

    def send(self, name: str, sent: Sent, *, leave: float | None = None) -> Answer:
        """``sent`` to the app called ``name``, in its session (a new one after a DELETE)."""
        app = self.apps[name]
        answer: Answer = self.run(exchange(app, sent, leave=leave, session=self.sessions[name]))
        if sent.method == "DELETE":
            self.sessions[name] = self.run(open_session(app, "alice-token"))
        return answer

    def run(self, work: Awaitable[Any], timeout: float = 30) -> Any:
        future: Future[Any] = asyncio.run_coroutine_threadsafe(_coroutine(work), self.loop)
        return future.result(timeout)

    async def _start(self, app: Starlette) -> None:
        inbox: asyncio.Queue[MutableMapping[str, Any]] = asyncio.Queue()
        outbox: asyncio.Queue[MutableMapping[str, Any]] = asyncio.Queue()
        await inbox.put({"type": "lifespan.startup"})
        task = self.loop.create_task(
            app({"type": "lifespan", "asgi": {"version": "3.0"}}, inbox.get, outbox.put)
        )
        started = await outbox.get()
        assert started["type"] == "lifespan.startup.complete", started

        async def stop() -> None:
            await inbox.put({"type": "lifespan.shutdown"})
            await outbox.get()
            await task

        self._stops.append(stop)

    def close(self) -> None:
        for stop in self._stops:
            self.run(stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


async def open_session(app: Starlette, token: str) -> str:
    """Open a handshake-era session on ``app`` (initialize, initialized); its id ("none": none)."""
    headers = (
        ("host", "127.0.0.1:8000"),
        ("accept", "application/json, text/event-stream"),
        ("content-type", "application/json"),
        ("mcp-protocol-version", LEGACY),
        ("authorization", f"Bearer {token}"),
    )
    hello = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "diff", "version": "1"},
        },
    }
    session: list[str] = []
    pending = [{"type": "http.request", "body": json.dumps(hello).encode(), "more_body": False}]
    done = asyncio.Event()

    async def receive() -> MutableMapping[str, Any]:
        if pending:
            return pending.pop()
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            session.extend(v.decode() for k, v in message["headers"] if k == b"mcp-session-id")
        elif not message.get("more_body"):
            done.set()

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [(k.encode(), v.encode()) for k, v in headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    await app(scope, receive, send)
    if not session:
        return "none"  # a stateless app keeps no sessions
    initialized = Sent(
        "POST",
        (*headers, ("mcp-session-id", session[0])),
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
    )
    answer = await exchange(app, initialized)
    assert answer.status == 202, answer
    return session[0]


async def _coroutine(work: Awaitable[Any]) -> Any:
    return await work


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    """Each app twice (hot path, SDK path), plain and behind bearer authentication."""
    served = Served(
        {
            "hot": build_app(authenticated=False),
            "sdk": without_hot_path(build_app(authenticated=False)),
            "hot-auth": build_app(authenticated=True),
            "sdk-auth": without_hot_path(build_app(authenticated=True)),
            "hot-json": build_app(json_response=True),
            "sdk-json": without_hot_path(build_app(json_response=True)),
            "hot-stateless": build_app(stateless=True),
            "sdk-stateless": without_hot_path(build_app(stateless=True)),
        }
    )
    yield served
    served.close()


# -- requests ---------------------------------------------------------------------------------------

TEXT = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["", "\ud800", "\x00", "Ω≈ç√", "x" * 1000, "echo", "talks", "shutdown"]),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
TOOLS = st.sampled_from(
    ["echo", "add", "scale", "fails", "not_a_number", "talks", "shutdown", "nope"]
)


@st.composite
def params(draw: st.DrawFn, method: str, *, rough: bool) -> Any:
    """Params for ``method``: well shaped, or (``rough``) now and then anything."""
    if rough and draw(st.integers(0, 5)) == 0:
        return draw(JSON)
    if method == "tools/call":
        name = draw(TOOLS | TEXT)
        shaped: dict[str, Any] = {"name": name}
        if name == "echo":
            shaped["arguments"] = {"text": draw(TEXT)}
        elif name == "add":
            shaped["arguments"] = {"a": draw(SCALARS), "b": draw(st.integers())}
        elif draw(st.booleans()):
            shaped["arguments"] = draw(JSON)
        return shaped
    if method == "resources/read":
        return {"uri": draw(st.sampled_from(["app://note", "app://nope"]) | TEXT)}
    if method == "prompts/get":
        return {"name": draw(st.sampled_from(["greet", "nope"])), "arguments": {"name": "x"}}
    if method.endswith("/list"):
        return draw(st.fixed_dictionaries({}, optional={"cursor": TEXT | JSON}))
    return {}


METHODS = [
    "tools/call",
    "tools/call",
    "tools/call",
    "tools/list",
    "resources/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "ping",
    "server/discover",
    "initialize",
    "subscriptions/listen",
    "logging/setLevel",
]


@st.composite
def requests(draw: st.DrawFn) -> Sent:  # noqa: C901, PLR0912, PLR0915 -- one draw per part
    """One POST (now and then another method), ordinary or hostile in any of its parts.

    Half the requests have ordinary headers (only their body is drawn), so that many reach the
    handlers: the other half can be hostile anywhere.
    """
    rough = draw(st.booleans())

    def hostile(strategy: st.SearchStrategy[Any], ordinary: Any) -> Any:
        return draw(strategy) if rough else ordinary

    method = draw(st.sampled_from(METHODS) | TEXT) if rough else draw(st.sampled_from(METHODS))
    message: Any = {"jsonrpc": "2.0", "method": method}
    body_params = draw(params(method, rough=rough))
    era = hostile(
        st.sampled_from(["modern"] * 6 + ["legacy"] * 4 + ["bogus", "none"]),
        draw(st.sampled_from(["modern", "legacy"])),
    )
    if isinstance(body_params, dict) and (era == "modern") != (rough and draw(st.booleans())):
        body_params = {**body_params, "_meta": dict(ENVELOPE)}
        if rough and draw(st.integers(0, 9)) == 0:
            body_params["_meta"]["io.modelcontextprotocol/protocolVersion"] = draw(TEXT)
        if draw(st.booleans()):
            body_params["_meta"]["progressToken"] = draw(st.sampled_from(["p", 7]) | JSON)
    if era == "legacy" and isinstance(body_params, dict) and draw(st.booleans()):
        body_params = {**body_params, "_meta": {"progressToken": draw(st.sampled_from(["p", 7]))}}
    if body_params is not None:
        message["params"] = body_params
    shape = hostile(
        st.sampled_from(["request"] * 12 + ["notification", "malformed", "garbage"]), "request"
    )
    if shape == "request":
        message["id"] = draw(st.integers(min_value=-(2**53), max_value=2**53) | st.text(max_size=6))
    elif shape == "malformed":
        message = draw(
            st.sampled_from(
                [
                    {**message, "jsonrpc": "1.0", "id": 1},
                    {**message, "id": None},
                    {**message, "id": 1.5},
                    {"jsonrpc": "2.0", "id": 1},
                    [message, message],
                ]
            )
        )
    if shape == "garbage":
        body = draw(st.sampled_from([b"", b"{", b"\xff\xfe", b"[]", b"null", b'{"id":1}']))
    else:
        body = json.dumps(message).encode()
    headers: list[tuple[str, str]] = []
    host = hostile(st.sampled_from(["127.0.0.1:8000"] * 8 + ["evil.example", ""]), "127.0.0.1:8000")
    if host:
        headers.append(("host", host))
    if rough and draw(st.integers(0, 9)) == 0:
        headers.append(("origin", draw(st.sampled_from(["http://evil.example", BASE]))))
    accept = hostile(
        st.sampled_from(
            ["application/json, text/event-stream"] * 6
            + ["application/json", "text/event-stream", "*/*", ""]
        ),
        "application/json, text/event-stream",
    )
    if accept:
        headers.append(("accept", accept))
    content_type = hostile(
        st.sampled_from(
            ["application/json"] * 6 + ["application/json; charset=utf-8", "text/plain", ""]
        ),
        "application/json",
    )
    if content_type:
        headers.append(("content-type", content_type))
    version = {"modern": MODERN, "legacy": LEGACY, "bogus": "2099-01-01", "none": ""}[era]
    if era == "legacy" or (rough and draw(st.integers(0, 5)) == 0):
        session = hostile(st.sampled_from([SESSION] * 6 + ["f" * 32, ""]), SESSION)
        if session:
            headers.append(("mcp-session-id", session))
    if version and (era != "legacy" or hostile(st.integers(0, 5), 1)):
        headers.append(("mcp-protocol-version", version))
        if rough and draw(st.integers(0, 14)) == 0:
            headers.append(("mcp-protocol-version", version))
    if hostile(st.integers(0, 3), 1) != 0:
        headers.append(("mcp-method", method if hostile(st.integers(0, 5), 1) else "tools/list"))
        if rough and draw(st.integers(0, 14)) == 0:
            headers.append(("mcp-method", method))
    named = (
        body_params.get("uri" if method == "resources/read" else "name")
        if isinstance(body_params, dict)
        else None
    )
    if isinstance(named, str) and hostile(st.integers(0, 3), 1):
        # A lone surrogate has no UTF-8, so no header: such a name goes without.
        encodable = named.encode("utf-8", "surrogatepass").decode("utf-8", "replace") == named
        value = (
            encode_header_value(named) if encodable and hostile(st.integers(0, 5), 1) else "other"
        )
        headers.append(("mcp-name", value))
    if rough and draw(st.integers(0, 9)) == 0:
        headers.append(("mcp-param-text", draw(st.sampled_from(["x", "=?base64?eA==?="]))))
    token = draw(st.sampled_from(["alice-token", "bob-token", "forged", None]))
    if token is not None:
        headers.append(("authorization", f"Bearer {token}"))
    declared = hostile(st.sampled_from(["true"] * 12 + ["huge", "wrong", "none"]), "true")
    if declared == "true":
        headers.append(("content-length", str(len(body))))
    elif declared == "huge":
        headers.append(("content-length", str(MAX_BODY * 10)))
    elif declared == "wrong":
        headers.append(("content-length", "abc"))
    verb = hostile(st.sampled_from(["POST"] * 14 + ["GET", "DELETE", "PUT"]), "POST")
    return Sent(verb, tuple(headers), body)


# -- the differential -----------------------------------------------------------------------------


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(sent=requests(), suffix=st.sampled_from(["", "", "-auth", "-json", "-stateless"]))
def test_both_paths_answer_alike(served: Served, sent: Sent, suffix: str) -> None:
    """Status, headers and body are the same whichever path answers, in every configuration."""
    with reaching_the_sdk(served.apps["hot" + suffix]) as reached:
        hot = served.send("hot" + suffix, sent)
    sdk = served.send("sdk" + suffix, sent)
    if not reached:
        era = "session" if ("mcp-session-id", SESSION) in sent.headers else "2026"
        event(f"not left to the SDK ({era}): {hot.status} {dict(hot.headers).get('content-type')}")
    assert hot == sdk


@contextmanager
def reaching_the_sdk(app: Starlette) -> Iterator[list[object]]:
    """The requests the hot path of ``app`` leaves to the SDK, while inside."""
    hot = hot_path_of(app)
    reached: list[object] = []
    sdk = hot.sdk

    async def spy(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope)
        await sdk(scope, receive, send)

    hot.sdk = spy
    try:
        yield reached
    finally:
        hot.sdk = sdk


ORDINARY: Final = (
    ("host", "127.0.0.1:8000"),
    ("accept", "application/json, text/event-stream"),
    ("content-type", "application/json"),
    ("mcp-protocol-version", MODERN),
)


def in_session(name: str, arguments: dict[str, Any]) -> Sent:
    """An ordinary handshake-era ``tools/call`` in the app's open session."""
    body = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": {"progressToken": "p1"}},
    }
    headers = (*ORDINARY[:3], ("mcp-protocol-version", LEGACY), ("mcp-session-id", SESSION))
    return Sent("POST", headers, json.dumps(body).encode())


def call(name: str, arguments: dict[str, Any], request_id: int = 1) -> Sent:
    """An ordinary 2026-07-28 ``tools/call``."""
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": arguments,
            "_meta": {**ENVELOPE, "progressToken": "p1"},
        },
    }
    return Sent(
        "POST",
        (*ORDINARY, ("mcp-method", "tools/call"), ("mcp-name", name)),
        json.dumps(body).encode(),
    )


@pytest.mark.parametrize(
    ("sent", "kind"),
    [
        (call("add", {"a": 1, "b": 2}), "application/json"),
        (call("talks", {}), "text/event-stream"),
        (call("fails", {}), "application/json"),
        (call("not_a_number", {}), "application/json"),
        (in_session("add", {"a": 1, "b": 2}), "application/json"),
        (in_session("talks", {}), "text/event-stream"),
        (in_session("fails", {}), "application/json"),
        (in_session("not_a_number", {}), "application/json"),
    ],
    ids=[
        "2026",
        "2026 talks",
        "2026 fails",
        "2026 NaN",
        "session",
        "session talks",
        "session fails",
        "session NaN",
    ],
)
def test_ordinary_requests_take_the_hot_path(served: Served, sent: Sent, kind: str) -> None:
    """An ordinary request never reaches the SDK's endpoint; its answer is the SDK's."""
    with reaching_the_sdk(served.apps["hot"]) as reached:
        answer = served.send("hot", sent)
    assert reached == []
    assert answer.status == 200
    assert dict(answer.headers)["content-type"] == kind
    assert answer == served.send("sdk", sent)


@pytest.mark.parametrize("hot_path", [True, False], ids=["hot path", "SDK path"])
def test_a_client_that_leaves_cancels_its_handler(hot_path: bool) -> None:
    """A handler still running when its client disconnects is cancelled, on either path."""
    app = App("leaving")
    events: list[str] = []

    @app.tool
    async def slow() -> str:
        """Wait until cancelled."""
        events.append("started")
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            events.append("cancelled")
            raise
        return "finished"

    asgi = app.asgi()
    served = Served({"app": asgi if hot_path else without_hot_path(asgi)})
    try:
        answer = served.run(exchange(asgi, call("slow", {}), leave=0.3))
    finally:
        served.close()
    assert events == ["started", "cancelled"]
    assert answer == Answer(0, (), b"")


def test_a_silent_handler_is_kept_alive_with_pings(monkeypatch: pytest.MonkeyPatch) -> None:
    """A handler silent past the ping interval is answered with a stream of pings, on either path."""
    monkeypatch.setattr(sdk_modern, "_SSE_PING_INTERVAL", 0.1)
    monkeypatch.setattr(hot_module, "_SSE_PING_INTERVAL", 0.1)
    answers = []
    for hot_path in (True, False):
        app = App("silent")

        @app.tool
        async def slow() -> str:
            """Take a while, silently."""
            await asyncio.sleep(0.45)
            return "done"

        asgi = app.asgi()
        served = Served({"app": asgi if hot_path else without_hot_path(asgi)})
        try:
            answers.append(served.run(exchange(asgi, call("slow", {}))))
        finally:
            served.close()
    for answer in answers:
        assert answer.status == 200
        assert dict(answer.headers)["content-type"] == "text/event-stream"
        assert answer.body.startswith(b": ping\r\n\r\n")
        assert answer.body.endswith(b"\r\n\r\n")
    hot, sdk = answers
    assert hot.headers == sdk.headers
    assert hot.body.replace(b": ping\r\n\r\n", b"") == sdk.body.replace(b": ping\r\n\r\n", b"")


def test_a_request_cancelled_by_its_client_ends_alike() -> None:
    """``notifications/cancelled`` for a request in flight in a session: the same end, either path."""
    cancel = Sent(
        "POST",
        (*ORDINARY[:3], ("mcp-protocol-version", LEGACY), ("mcp-session-id", SESSION)),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 5, "reason": "changed my mind"},
            }
        ).encode(),
    )
    answers = []
    for hot_path in (True, False):
        app = App("cancelling")

        @app.tool
        async def slow() -> str:
            """Take a while."""
            await asyncio.sleep(1.5)
            return "finished"

        asgi = app.asgi()
        served = Served({"app": asgi if hot_path else without_hot_path(asgi)})

        async def both(served: Served = served) -> tuple[Answer, Answer]:
            session = served.sessions["app"]
            call = asyncio.ensure_future(
                exchange(served.apps["app"], in_session("slow", {}), session=session)
            )
            await asyncio.sleep(0.3)
            cancelled = await exchange(served.apps["app"], cancel, session=session)
            return await call, cancelled

        try:
            answers.append(served.run(both()))
        finally:
            served.close()
    (hot, hot_ack), (sdk, sdk_ack) = answers
    assert hot_ack == sdk_ack
    assert hot_ack.status == 202
    assert hot == sdk
    assert b"Request cancelled" in hot.body
