"""A gateway over real servers, the fastmcp backend killed and brought back, in both eras.

mcp-server-time, -git and -fetch over stdio, fastmcp-sample-server over streamable HTTP, and a
tool of the gateway's own, all through one endpoint.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from mcp import Client

from tests.clients import MCP_CORE, ROOT, text, tool_names, until
from tests.corpus._corpus import HOME, make_place, native, require
from tests.corpus.test_corpus import ERAS
from tests.e2e.conftest import free_port, start, stop

pytestmark = [
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]

BACKENDS = ("time", "git", "fetch", "sample")


def start_sample(port: int, workdir: Path) -> subprocess.Popen[bytes]:
    """The fastmcp sample server over streamable HTTP on ``port``."""
    command = [str(HOME / "sample" / "bin" / "sample-mcp-server"), "--transport", "http"]
    env = {
        "MCP_NOTES_DB": str(workdir / "notes.db"),
        "MCP_TELEMETRY_DB": str(workdir / "telemetry.db"),
        "FASTMCP_CHECK_FOR_UPDATES": "off",
        "FASTMCP_SHOW_SERVER_BANNER": "false",
    }
    return start([*command, "--host", "127.0.0.1", "--port", str(port)], port, env)


@dataclass
class Deployment:
    """The running gateway, its HTTP backend's port, the scratch directory, the processes."""

    url: str
    sample_port: int
    workdir: Path
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)


@pytest.fixture
def gateway(tmp_path: Path, page: str) -> Iterator[Deployment]:
    """The sample backend over HTTP, and the gateway (which starts the others over stdio)."""
    for name in BACKENDS:
        require(name)
    place = make_place(tmp_path, page)
    stdio = {}
    for name in ("time", "git", "fetch"):
        server = native(name, place)
        stdio[name] = {"command": [server.command, *server.args], "env": server.env}
    sample_port, gateway_port = free_port(), free_port()
    spec = {
        "stdio": stdio,
        "http": {"sample": f"http://127.0.0.1:{sample_port}/mcp"},
        "health_interval": 0.2,
        "max_backoff": 1,  # a restarted backend is found within a second
    }
    running = Deployment(f"http://127.0.0.1:{gateway_port}/mcp", sample_port, tmp_path)
    try:
        running.processes["sample"] = start_sample(sample_port, tmp_path)
        command = [str(MCP_CORE), "run", str(ROOT / "tests" / "corpus" / "gateway.py")]
        command += ["--transport", "http", "--port", str(gateway_port)]
        env = {"CORPUS_GATEWAY": json.dumps(spec)}
        running.processes["gateway"] = start(command, gateway_port, env)
        yield running
    finally:
        for process in running.processes.values():
            stop(process)


@pytest.mark.parametrize("era", list(ERAS))
async def test_gateway_over_real_servers(
    gateway: Deployment,
    era: str,
    page: str,
) -> None:
    """Every backend answers through one endpoint; one killed and restarted costs only itself."""
    workdir = gateway.workdir
    async with Client(gateway.url, mode=ERAS[era]) as client:
        await until(lambda: _has(client, "sample_echo"))
        names = await tool_names(client)
        assert {"hello", "time_get_current_time", "git_git_status", "fetch_fetch"} <= names
        assert {"sample_echo", "sample_note_add"} <= names
        now = await client.call_tool("time_get_current_time", {"timezone": "UTC"})
        status = await client.call_tool("git_git_status", {"repo_path": str(workdir / "repo")})
        fetched = await client.call_tool("fetch_fetch", {"url": page, "max_length": 200})
        echoed = await client.call_tool("sample_echo", {"message": "hi"})
        assert (now.structured_content or {})["timezone"] == "UTC"
        assert "nothing to commit" in text(status)
        assert "Corpus page" in text(fetched)
        assert text(echoed) == "[MCP Server Echo]: hi"

        # The fastmcp backend dies: its calls fail fast and clearly; everything else answers.
        stop(gateway.processes["sample"])
        await until(lambda: _fails(client, "sample_echo"))
        down = await client.call_tool("sample_echo", {"message": "hi"})
        assert down.is_error
        assert "the remote MCP server 'sample' is unavailable" in text(down)
        assert "127.0.0.1" not in text(down)
        assert (
            text(await client.call_tool("hello", {"name": "Ann"})) == "hello Ann, from the gateway"
        )
        after = await client.call_tool("time_get_current_time", {"timezone": "Asia/Tokyo"})
        assert (after.structured_content or {})["timezone"] == "Asia/Tokyo"
        assert "sample_echo" in await tool_names(client)  # the last good catalogue, still listed

        # Brought back on the same port: found again, and answering.
        gateway.processes["sample"] = start_sample(gateway.sample_port, workdir)
        await until(lambda: _answers(client, "sample_echo"))
        again = await client.call_tool("sample_echo", {"message": "back"})
        assert text(again) == "[MCP Server Echo]: back"
        assert text(await client.call_tool("hello", {"name": "Bo"})) == "hello Bo, from the gateway"


async def _has(client: Client, name: str) -> bool:
    return name in await tool_names(client)


async def _fails(client: Client, name: str) -> bool:
    result = await client.call_tool(name, {"message": "?"})
    return bool(result.is_error)


async def _answers(client: Client, name: str) -> bool:
    result = await client.call_tool(name, {"message": "?"})
    return not result.is_error
