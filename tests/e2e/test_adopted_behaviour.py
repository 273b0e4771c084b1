"""An adopted MCPServer keeps its behaviour: middleware, multi-round input, URL elicitation, info.

``tests/e2e/servers/guarded_server.py`` is served natively (``python guarded_server.py``) and
adopted (``mcp-core run guarded_server.py``), both over the real stdio transport, and driven by
the official client in both protocol eras. Every answer is compared with the native one after
dropping the serverInfo stamp; the one documented difference (``docs/adopt.md``) is that an
``InputRequiredResult`` also works for a 2025-11-25 client once adopted, where natively the SDK
answers "Handler returned an invalid result".
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
from mcp import StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.clients import ROOT, Inbox, stdio

GUARDED = ROOT / "tests" / "e2e" / "servers" / "guarded_server.py"
ERAS = ["legacy", "2026-07-28"]

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


def native() -> StdioServerParameters:
    """The server run as its author runs it."""
    return StdioServerParameters(command=sys.executable, args=[str(GUARDED)], cwd=ROOT)


async def _answers(target: StdioServerParameters, mode: str) -> dict[str, Any]:
    """What the client gets for each request (a result's wire form, or the error's)."""
    inbox = Inbox(form={"name": "Ann"})
    answers: dict[str, Any] = {}

    async def ask(key: str, request: Any) -> None:
        try:
            result = await request
        except MCPError as exc:
            answers[key] = {"error": exc.error.model_dump(mode="json", exclude_none=True)}
            return
        wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        stamp = wire.pop("_meta", {}).get("io.modelcontextprotocol/serverInfo")
        if stamp is not None:  # 2026-07-28: every result says who answered
            answers["serverInfo"] = stamp
        answers[key] = wire

    async with inbox.client(target, mode=mode) as client:
        for name in ("secret", "public", "login", "greet", "connect"):
            await ask(f"tool {name}", client.call_tool(name, {}))
        for name in ("hidden", "introduce"):
            await ask(f"prompt {name}", client.get_prompt(name, {}))
        for uri in ("guarded://private", "guarded://public"):
            await ask(uri, client.read_resource(uri))
        await ask("audited", client.call_tool("audited", {}))
        if mode == "legacy":  # the handshake's
            info = client.server_info
            assert info is not None
            answers["serverInfo"] = info.model_dump(by_alias=True, mode="json", exclude_none=True)
    answers["asked"] = inbox.asked
    answers["opened"] = inbox.opened
    return answers


@pytest.fixture(scope="module", params=ERAS)
def compared(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The era, the native answers and the adopted ones."""
    import anyio

    mode: str = request.param

    async def both() -> tuple[dict[str, Any], dict[str, Any]]:
        return await _answers(native(), mode), await _answers(stdio(GUARDED), mode)

    return (mode, *anyio.run(both))


def test_middleware_denies_adopted_exactly_as_natively(
    compared: tuple[str, dict[str, Any], dict[str, Any]],
) -> None:
    """The policy middleware's refusals (tool, prompt, resource) are the same JSON-RPC errors."""
    _, natively, adopted = compared
    for key in ("tool secret", "prompt hidden", "guarded://private"):
        assert adopted[key] == natively[key], key
        assert adopted[key]["error"]["code"] == -32001
        assert adopted[key]["error"]["data"] == {"policy": "no-secrets"}
    for key in ("tool public", "guarded://public"):
        assert adopted[key] == natively[key], key


def test_every_request_reaches_the_audit_middleware(
    compared: tuple[str, dict[str, Any], dict[str, Any]],
) -> None:
    """Each call, get and read passed through the audit layer, denied ones included."""
    mode, natively, adopted = compared
    audited = adopted["audited"]["structuredContent"]["result"]
    for entry in (
        "tools/call secret",
        "tools/call public",
        "tools/call login",
        "prompts/get hidden",
        "resources/read guarded://private",
        "resources/read guarded://public",
    ):
        assert entry in audited, entry
    # Natively the audit also sees initialize and lists, which mcp-core answers itself; the
    # requests that ask the client are delivered once per round (see the tests below).
    asking = ("greet", "introduce", "connect")
    native_calls = [e for e in natively["audited"]["structuredContent"]["result"] if " " in e]
    assert [e for e in audited if e.split()[1] not in asking] == [
        e for e in native_calls if e.split()[1] not in asking
    ]
    assert mode in ERAS


def test_url_elicitation_required_passes_with_its_url(
    compared: tuple[str, dict[str, Any], dict[str, Any]],
) -> None:
    """-32042 and the URL to open reach the client as the native server sends them."""
    _, natively, adopted = compared
    assert adopted["tool login"] == natively["tool login"]
    error = adopted["tool login"]["error"]
    assert error["code"] == -32042
    assert error["data"]["elicitations"][0]["url"] == "https://example.org/login"


def test_input_required_results_are_answered(
    compared: tuple[str, dict[str, Any], dict[str, Any]],
) -> None:
    """The tool's and the prompt's own questions reach the user; their answer completes them."""
    mode, natively, adopted = compared
    assert adopted["tool greet"]["content"] == [{"type": "text", "text": "Hello, Ann!"}]
    assert adopted["prompt introduce"]["messages"][0]["content"]["text"] == "Introduce Ann."
    asked = [message for message in adopted["asked"] if message == "What is your name?"]
    assert asked == ["What is your name?", "What is your name?"]
    if mode == "legacy":
        # Natively the SDK cannot send an InputRequiredResult on a 2025-11-25 connection.
        assert natively["tool greet"]["error"]["message"] == "Handler returned an invalid result"
    else:
        for key in ("tool greet", "prompt introduce"):
            assert adopted[key] == natively[key], key
        assert natively["asked"] == asked


def test_server_info_is_carried(compared: tuple[str, dict[str, Any], dict[str, Any]]) -> None:
    """Name, version, title, description, website URL and icons, as the server declares them."""
    _, natively, adopted = compared
    assert adopted["serverInfo"] == natively["serverInfo"]
    assert adopted["serverInfo"]["websiteUrl"] == "https://example.org/guarded"
    assert adopted["serverInfo"]["icons"] == [
        {"src": "https://example.org/guarded.png", "mimeType": "image/png"}
    ]


def test_url_mode_elicitation_reaches_the_user(
    compared: tuple[str, dict[str, Any], dict[str, Any]],
) -> None:
    """``ctx.elicit_url`` goes through the gateway: in both eras once adopted."""
    mode, natively, adopted = compared
    assert adopted["tool connect"]["structuredContent"] == {"result": "accept"}
    assert adopted["opened"] == ["https://example.org/connect"]
    if mode == "legacy":
        assert adopted["tool connect"] == natively["tool connect"]
    else:
        # Natively the SDK cannot send a request to a 2026-07-28 client from a tool.
        assert natively["tool connect"]["error"]["code"] == -32600
