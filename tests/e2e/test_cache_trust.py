"""Whoever can write the cache store cannot make the server run their code.

A real server process (``mcp-core run --transport http``) serves a plugin package through
``CachedSource(DiscoverySource(["plugins"]), SqliteStore(db))``. Before it starts, an attacker
with write access to the SQLite file plants an entry under the server's cache key. The official
client then lists and calls tools: the planted tools never appear, the command never runs, the
real tools are served, and the planted entry has been overwritten.
"""

from __future__ import annotations

import json
import sys
import textwrap
import time
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_core.elements import Element, ElementCollection, HandlerRef, Tool
from mcp_core.sources import CachedSource, DiscoverySource
from mcp_core.stores import SqliteStore
from tests.e2e.conftest import serving_http

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

PLUGIN = '''
"""A plugin module. It imports a function by name, as plugin code often does."""

from subprocess import getoutput  # noqa: F401 -- reachable as plugins.tools:getoutput

from mcp_core.handlers import tool


@tool
def greet(name: str) -> str:
    """Greet someone."""
    return f"hello {name}"
'''

SERVER = """
import sys
sys.path.insert(0, {plugins!r})

from mcp_core.app import App
from mcp_core.registry import Priority
from mcp_core.sources import CachedSource, DiscoverySource
from mcp_core.stores import SqliteStore

app = App("cached")
app.add_source(
    CachedSource(DiscoverySource(["plugins"]), SqliteStore({db!r}), ttl=3600{secret}),
    Priority.DEFAULT,
)
"""


def forged(tool_name: str, handler: str, *, stored_at: float, mac: str | None = None) -> bytes:
    """A well-formed entry whose one tool runs ``handler`` with a ``cmd`` string."""
    tool = Tool(
        name=tool_name,
        description="Run a command.",
        input_schema={
            "type": "object",
            "properties": {"cmd": {"type": "string"}},
            "required": ["cmd"],
        },
    )
    body = ElementCollection([Element(definition=tool, handler=HandlerRef(handler))]).to_json()
    header: dict[str, object] = {"entry": "mcp-core/cached-collection", "stored_at": stored_at}
    if mac is not None:
        header["mac"] = mac
    return json.dumps(header).encode() + b"\n" + body.encode()


class Deployment:
    """The plugin package, the cache file and the server file, in one directory."""

    def __init__(self, root: Path, secret: bytes | None) -> None:
        self.root = root
        (root / "plugins").mkdir()
        (root / "plugins" / "__init__.py").write_text("", encoding="utf-8")
        (root / "plugins" / "tools.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
        self.db = root / "cache.db"
        self.server = root / "server.py"
        self.server.write_text(
            SERVER.format(
                plugins=str(root),
                db=str(self.db),
                secret="" if secret is None else f", secret={secret!r}",
            ),
            encoding="utf-8",
        )
        self.proof = root / "pwned"

    def cache_key(self) -> str:
        """The key the server's CachedSource reads (its configuration is public knowledge)."""
        sys.path.insert(0, str(self.root))
        try:
            return CachedSource(DiscoverySource(["plugins"]), SqliteStore(self.db)).cache_key
        finally:
            sys.path.remove(str(self.root))

    async def plant(self, entry: bytes) -> None:
        """Write ``entry`` under the server's key, as anyone with the file could."""
        async with SqliteStore(self.db) as store:
            await store.set(self.cache_key(), entry)

    async def stored(self) -> bytes | None:
        """What the cache holds under the server's key now."""
        async with SqliteStore(self.db) as store:
            return await store.get(self.cache_key())


@pytest.fixture
def deployment(tmp_path: Path, request: pytest.FixtureRequest) -> Deployment:
    """A deployment; parametrize indirectly with a secret to configure one."""
    return Deployment(tmp_path, getattr(request, "param", None))


FUTURE = time.time() + 10 * 365 * 24 * 3600

ATTACKS = {
    "a module outside the plugins": ("subprocess:getoutput", None),
    "a name a plugin module imports": ("plugins.tools:getoutput", None),
    "a made-up mac": ("subprocess:getoutput", "0" * 64),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
@pytest.mark.parametrize("deployment", [None, b"shared deployment secret"], indirect=True)
async def test_a_planted_entry_runs_nothing(deployment: Deployment, attack: str) -> None:
    """The planted tool is never listed or run; the real tools are served; the entry is replaced."""
    handler, mac = ATTACKS[attack]
    await deployment.plant(forged("run", handler, stored_at=FUTURE, mac=mac))
    with serving_http(deployment.server) as url:
        async with Client(url, mode="legacy") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            with pytest.raises(MCPError) as refused:
                await client.call_tool("run", {"cmd": f"touch {deployment.proof}"})
            greeting = await client.call_tool("greet", {"name": "ann"})
    assert names == {"greet"}
    assert refused.value.error.code == -32602
    assert not deployment.proof.exists()
    assert greeting.content[0].text == "hello ann"  # type: ignore[union-attr]  # a text block
    replaced = await deployment.stored()
    assert replaced is not None
    assert b"getoutput" not in replaced


@pytest.mark.parametrize("deployment", [b"shared deployment secret"], indirect=True)
async def test_with_a_secret_even_in_scope_entries_must_be_authentic(
    deployment: Deployment,
) -> None:
    """With a secret, an entry naming only real handlers, but renamed by the attacker, is refused."""
    await deployment.plant(forged("renamed_greet", "plugins.tools:greet", stored_at=time.time()))
    with serving_http(deployment.server) as url:
        async with Client(url) as client:
            names = {t.name for t in (await client.list_tools()).tools}
    assert names == {"greet"}


async def test_a_deeply_nested_entry_is_a_miss(deployment: Deployment) -> None:
    """200,000 '[' in the store: the source serves its tools, and the entry is replaced."""
    header = json.dumps({"entry": "mcp-core/cached-collection", "stored_at": time.time()})
    await deployment.plant(header.encode() + b"\n" + b"[" * 200_000)
    with serving_http(deployment.server) as url:
        async with Client(url) as client:
            names = {t.name for t in (await client.list_tools()).tools}
    assert names == {"greet"}
    replaced = await deployment.stored()
    assert replaced is not None
    assert not replaced.endswith(b"[[[[")


async def test_a_shared_schema_bomb_is_a_miss(deployment: Deployment) -> None:
    """Attacker: a cache writer without the secret plants a small entry that expands hugely.

    One 64 KB schema shared by 1,000 tools that all name a real handler: a ~200 KB entry that
    written out is 64 MB per list walk. Before: served (every worker built and sent the pages).
    Now: beyond its expansion bound the entry is corrupt, the real tools are served, and the
    entry is replaced.
    """
    schema = {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "x" * 64_000}},
    }
    tools = [
        Element(
            definition=Tool(name=f"bomb_{n}", input_schema=schema),
            handler=HandlerRef("plugins.tools:greet"),
        )
        for n in range(1000)
    ]
    body = ElementCollection(tools).to_json()
    assert len(body) < 200_000
    header = json.dumps({"entry": "mcp-core/cached-collection", "stored_at": time.time()})
    await deployment.plant(header.encode() + b"\n" + body.encode())
    with serving_http(deployment.server) as url:
        async with Client(url) as client:
            names = {t.name for t in (await client.list_tools()).tools}
    assert names == {"greet"}
    replaced = await deployment.stored()
    assert replaced is not None
    assert b"bomb_" not in replaced
