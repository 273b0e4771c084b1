"""The stdio prelude's pieces held to the SDK's own (ADR 0115).

The prelude answers a session's first requests without the SDK, so what it writes is held here to
what the SDK's models write: the ``initialize`` result, the key order of a call's result, the
client capabilities it takes, and the protocol version it answers in. The conversations
themselves, over real pipes with the prelude on and off, are in ``test_stdio_prelude.py``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client.stdio import get_default_environment
from mcp_types import methods
from mcp_types.version import LATEST_HANDSHAKE_VERSION
from pydantic import ValidationError

from mcp_core.app import App
from mcp_core.elements import Annotations, ElementKind, Icon, Tool
from mcp_core.handlers import (
    Audio,
    ClientGateway,
    EmbeddedResource,
    Image,
    Invoker,
    ResourceLink,
    Text,
    ToolResult,
)
from mcp_core.handlers._injection import _LOADERS, injector_for, register_injection_loader
from mcp_core.server import _prelude
from mcp_core.server._prelude import PROTOCOL_VERSION, canonical
from mcp_core.visibility import SessionInfo

_SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def test_the_prelude_answers_in_the_sdks_latest_handshake_version() -> None:
    """The one version the prelude serves is the SDK's latest handshake version."""
    assert PROTOCOL_VERSION == LATEST_HANDSHAKE_VERSION


# -- initialize ---------------------------------------------------------------------------------

_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)


@st.composite
def _apps(draw: st.DrawFn) -> App:
    icons = draw(
        st.none()
        | st.lists(
            st.builds(
                Icon,
                src=st.just("https://example.com/i.png"),
                mime_type=st.none() | st.just("image/png"),
                sizes=st.none() | st.just(("48x48",)),
                theme=st.none() | st.sampled_from(["light", "dark"]),
            ),
            max_size=2,
        )
    )
    app = App(
        draw(st.text("abcxyz-", min_size=1, max_size=8)),
        version=draw(st.none() | _TEXT),
        title=draw(st.none() | _TEXT),
        description=draw(st.none() | _TEXT),
        instructions=draw(st.none() | _TEXT),
        website_url=draw(st.none() | st.just("https://example.com")),
        icons=icons,
    )
    kinds = draw(st.sets(st.sampled_from(["tool", "resource", "template", "prompt"])))
    if "tool" in kinds:
        app.tool(name="one")(lambda: 1)
    if "resource" in kinds:
        app.resource("app://r")(lambda: "r")
    if "template" in kinds:
        app.resource_template("app://t/{x}")(lambda x: x)
    if "prompt" in kinds:
        app.prompt(name="p")(lambda: "p")
    return app


def _sdk_initialize(app: App) -> dict[str, Any]:
    """What the SDK's runner answers ``initialize`` with, for this app's server."""
    options = app.server.lowlevel.create_initialization_options()
    result = types.InitializeResult(
        protocol_version=LATEST_HANDSHAKE_VERSION,
        capabilities=options.capabilities,
        server_info=types.Implementation(
            name=options.server_name,
            title=options.title,
            description=options.description,
            version=options.server_version,
            website_url=options.website_url,
            icons=options.icons,
        ),
        instructions=options.instructions,
    )
    wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return methods.serialize_server_result("initialize", LATEST_HANDSHAKE_VERSION, wire)


@_SETTINGS
@given(app=_apps())
def test_initialize_is_the_servers_own_byte_for_byte(app: App) -> None:
    """Capabilities, serverInfo and instructions as the server writes them, keys in its order."""
    start = app._stdio_start()
    ours = start._initialize_result()
    assert json.dumps(ours) == json.dumps(_sdk_initialize(app))


# -- a call's result ----------------------------------------------------------------------------

_ANNOTATIONS = st.none() | st.builds(
    Annotations,
    audience=st.none() | st.just(("user",)),
    priority=st.none() | st.floats(0, 1),
    last_modified=st.none() | st.just("2026-01-01T00:00:00Z"),
)
_META = st.none() | st.dictionaries(st.sampled_from(["z", "a", "m"]), st.integers(), max_size=3)
_CONTENT = st.one_of(
    st.builds(Text, _TEXT, annotations=_ANNOTATIONS, meta=_META),
    st.builds(
        Image, st.just(b"\x89PNG"), st.just("image/png"), annotations=_ANNOTATIONS, meta=_META
    ),
    st.builds(Audio, st.just(b"RIFF"), st.just("audio/wav"), annotations=_ANNOTATIONS, meta=_META),
    st.builds(
        EmbeddedResource,
        st.just("app://e"),
        mime_type=st.none() | st.just("text/plain"),
        text=st.just("t"),
        annotations=_ANNOTATIONS,
        meta=_META,
    ),
    st.builds(
        EmbeddedResource, st.just("app://b"), blob=st.just(b"\x00\x01"), annotations=_ANNOTATIONS
    ),
    st.builds(
        ResourceLink,
        st.just("app://l"),
        st.just("l"),
        title=st.none() | _TEXT,
        description=st.none() | _TEXT,
        mime_type=st.none() | st.just("text/plain"),
        size=st.none() | st.integers(0, 10),
        icons=st.none() | st.just((Icon(src="https://example.com/i.png", mime_type="image/png"),)),
        annotations=_ANNOTATIONS,
        meta=_META,
    ),
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
)
_RETURNS = st.one_of(
    _JSON,
    _CONTENT,
    st.lists(_CONTENT, max_size=3),
    st.builds(
        ToolResult,
        st.lists(_CONTENT, max_size=2),
        structured=st.none() | st.dictionaries(_TEXT, _JSON, max_size=3),
        is_error=st.booleans(),
        meta=_META,
    ),
)


@_SETTINGS
@given(value=_RETURNS)
def test_a_calls_result_keeps_the_sdks_key_order(value: object) -> None:
    """Whatever a tool returns, the prelude's result is the SDK's rendering, key for key."""
    app = App("order")
    app.tool(name="give")(lambda: value)
    handlers = app._stdio_start()._handlers

    async def call() -> dict[str, Any]:
        gateway = _prelude._Gateway(SessionInfo(session_id="s"), 1)
        return await handlers.call_tool("give", None, gateway, era=PROTOCOL_VERSION)

    result = asyncio.run(call())
    sdk = methods.serialize_server_result("tools/call", PROTOCOL_VERSION, result)
    assert json.dumps(canonical(result)) == json.dumps(sdk)


# -- what the prelude takes from the client -----------------------------------------------------

_CAPABILITY = st.dictionaries(
    st.sampled_from(["roots", "sampling", "elicitation", "experimental", "tasks", "x"]),
    st.one_of(
        st.dictionaries(
            st.sampled_from(["listChanged", "context", "tools", "form", "url", "other"]),
            st.booleans() | st.just({}) | st.just({"a": 1}) | st.integers() | _TEXT,
            max_size=3,
        ),
        st.integers(),
        st.none(),
    ),
    max_size=4,
)


@_SETTINGS
@given(capabilities=_CAPABILITY)
def test_capabilities_the_prelude_takes_the_sdk_takes_the_same(
    capabilities: dict[str, Any],
) -> None:
    """Capabilities the prelude accepts validate in the SDK's model, to what was sent."""
    if not _prelude._capabilities_taken(capabilities):
        return
    params = {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": capabilities,
        "clientInfo": {"name": "c", "version": "1"},
    }
    try:
        parsed = types.InitializeRequestParams.model_validate(params, by_name=False)
    except ValidationError as exc:  # pragma: no cover -- the failure this test exists for
        pytest.fail(f"the prelude took capabilities the SDK refuses: {capabilities!r}: {exc}")
    dumped = parsed.capabilities.model_dump(by_alias=True, mode="json", exclude_none=True)
    assert dumped == capabilities


@pytest.mark.parametrize(
    ("params", "cancels"),
    [
        ({"requestId": 7}, True),
        ({"requestId": "7"}, True),
        ({"requestId": 8}, False),
        ({"requestId": True}, False),
        ({}, False),
        ({"requestId": 7.0}, False),
    ],
)
def test_a_cancellation_names_the_call_as_the_sdk_correlates_ids(
    params: dict[str, Any], cancels: bool
) -> None:
    """``"7"`` and ``7`` are one request, as the SDK's dispatcher correlates them."""

    async def cancelled() -> bool:
        call = asyncio.ensure_future(asyncio.sleep(10))
        _prelude._cancel({7: call}, params)
        await asyncio.sleep(0)
        was = call.cancelled()
        call.cancel()
        return was

    assert asyncio.run(cancelled()) is cancels


# -- tools the prelude may run ------------------------------------------------------------------


def test_takes_gateway_tells_which_tools_reach_the_client() -> None:
    """A function taking the gateway or an injected value reaches it; a plain one does not."""
    app = App("gateway")

    @app.tool
    def plain(x: int) -> int:
        return x

    @app.tool
    async def logs(gateway: ClientGateway) -> str:
        await gateway.log("info", "x")
        return "ok"

    class Handler:
        async def execute(self, arguments: Mapping[str, Any], gateway: ClientGateway) -> str:
            return "h"

    app.add(Tool(name="handler", input_schema={"type": "object"}), Handler())

    async def takes() -> dict[str, bool]:
        invoker: Invoker = app.invoker
        found = {}
        for name in ("plain", "logs", "handler"):
            element = await app.registry.get_tool(name)
            assert element is not None
            found[name] = invoker.takes_gateway(element)
        return found

    assert asyncio.run(takes()) == {"plain": False, "logs": True, "handler": True}


def test_an_injection_loader_runs_once_when_its_package_is_first_met() -> None:
    """The loader of a package runs when a parameter names one of its types, and only then."""
    calls: list[str] = []
    register_injection_loader("decimal", lambda: calls.append("loaded"))
    try:
        assert injector_for(int) is None
        assert calls == []
        import decimal

        assert injector_for(decimal.Decimal | None) is None
        assert injector_for(decimal.Decimal) is None
        assert calls == ["loaded"]
    finally:
        _LOADERS.pop("decimal", None)


def test_importing_the_app_imports_no_sdk() -> None:
    """``from mcp_core import App`` and declaring tools leave the SDK unimported."""
    script = textwrap.dedent(
        """
        import sys
        from mcp_core import App
        app = App("x")

        @app.tool
        def one(x: int) -> int:
            return x

        print(sorted(name for name in ("mcp", "mcp_types") if name in sys.modules))
        """
    )
    done = subprocess.run(  # noqa: S603 -- this interpreter
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]", done.stderr


def test_the_sdk_rules_are_learned_when_an_sdk_type_is_first_met(tmp_path: Path) -> None:
    """A tool taking the SDK's ``Context``, declared after ``mcp_core`` was imported, is served."""
    script = tmp_path / "late.py"
    script.write_text(
        textwrap.dedent(
            """
            import asyncio
            from mcp_core import App

            app = App("late")
            from mcp.server.mcpserver import Context

            @app.tool
            async def who(ctx: Context) -> str:
                return type(ctx).__name__

            async def main() -> None:
                element = await app.registry.get_tool("who")
                tool = element.definition
                print(sorted(tool.input_schema.get("properties", {})))

            asyncio.run(main())
            """
        ),
        encoding="utf-8",
    )
    done = subprocess.run(  # noqa: S603 -- this interpreter
        [sys.executable, str(script)], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]", done.stderr


def test_kinds_reach_the_capabilities_as_the_server_derives_them() -> None:
    """Every combination of kinds, with and without change events, as the server's capabilities."""
    info = _prelude.ServerInfo("k")
    for bits in range(16):
        kinds = ElementKind.NONE
        for index, kind in enumerate(
            (
                ElementKind.TOOL,
                ElementKind.RESOURCE,
                ElementKind.RESOURCE_TEMPLATE,
                ElementKind.PROMPT,
            )
        ):
            if bits >> index & 1:
                kinds |= kind
        for notifies in (False, True):
            capabilities = info.initialize_result(kinds, notifies=notifies)["capabilities"]
            assert ("tools" in capabilities) is bool(kinds & ElementKind.TOOL)
            assert ("completions" in capabilities) is bool(
                kinds & (ElementKind.PROMPT | ElementKind.RESOURCE_TEMPLATE)
            )
            assert capabilities["logging"] == {}
            for entry in capabilities.values():
                if "listChanged" in entry:
                    assert entry["listChanged"] is notifies


# -- where the prelude serves, and where it steps aside -----------------------------------------

_SDK_LOADED_APP = """
import sys
from mcp_core import App

app = App("loaded")


@app.tool
def sdk_loaded() -> bool:
    return "mcp" in sys.modules


if __name__ == "__main__":
    app.run()
"""

_HANDSHAKE = (
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
    '{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
)


def _first_calls(command: list[str], env: Mapping[str, str] | None = None) -> list[object]:
    """What ``sdk_loaded`` answers before and after a ``logging/setLevel``, spawned with ``command``."""
    process = subprocess.Popen(  # noqa: S603 -- this interpreter or its console script
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # A plain environment: settings a test before may have left in this process's (a
        # deployment's variables, an OpenTelemetry provider) rightly turn the prelude off.
        env={**get_default_environment(), **(env or {})},
    )
    assert process.stdin is not None
    assert process.stdout is not None
    answers: list[object] = []
    try:
        process.stdin.write(_HANDSHAKE)
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1
        for request_id in (2, 4):
            if request_id == 4:  # a request only the SDK's server serves: the prelude hands over
                process.stdin.write(
                    '{"jsonrpc":"2.0","id":3,"method":"logging/setLevel",'
                    '"params":{"level":"info"}}\n'
                )
                process.stdin.flush()
                assert json.loads(process.stdout.readline()) == {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "result": {},
                }
            process.stdin.write(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "method": "tools/call",
                        "params": {"name": "sdk_loaded"},
                    }
                )
                + "\n"
            )
            process.stdin.flush()
            answer = json.loads(process.stdout.readline())
            assert answer["id"] == request_id, answer
            answers.append(answer["result"]["structuredContent"]["result"])
    finally:
        process.stdin.close()
        process.wait(timeout=60)
        process.stdout.close()
        if process.stderr is not None:
            process.stderr.close()
    return answers


@pytest.mark.parametrize("entry", ["python", "mcp-core run"])
def test_the_first_call_is_answered_before_the_sdk_is_imported(entry: str, tmp_path: Path) -> None:
    """``python server.py`` and ``mcp-core run server.py``: the SDK comes when a request needs it."""
    script = tmp_path / "server.py"
    script.write_text(_SDK_LOADED_APP, encoding="utf-8")
    command = (
        [sys.executable, str(script)]
        if entry == "python"
        else [sys.executable, "-m", "mcp_core", "run", str(script)]
    )
    assert _first_calls(command) == [False, True]


@pytest.mark.parametrize(
    ("extra", "env"),
    [
        (["--page-size", "5"], {}),  # the CLI configures the server: it is built first
        ([], {"MCP_CORE_STDIO_PRELUDE": "0"}),
    ],
)
def test_the_prelude_steps_aside(extra: list[str], env: dict[str, str], tmp_path: Path) -> None:
    """When the server is configured first, or the environment says so, the SDK serves it all."""
    script = tmp_path / "server.py"
    script.write_text(_SDK_LOADED_APP, encoding="utf-8")
    command = [sys.executable, "-m", "mcp_core", "run", str(script), *extra]
    assert _first_calls(command, env) == [True, True]
