"""Helpers for the multi-worker tests: the example's cluster, its catalogue and health endpoints.

The cluster is ``examples/deployment/cluster.py`` (Redis, ``mcp-core run`` workers, HAProxy on
127.0.0.1), the same one the example's one script starts. The client side (hearing changes,
polling) is ``tests/clients.py``'s.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import pytest
from mcp import Client

from tests.clients import tool_names

ROOT: Final = Path(__file__).resolve().parents[2]
EXAMPLE: Final = ROOT / "examples" / "deployment"
sys.path.insert(0, str(EXAMPLE))

from cluster import Cluster, free_port, missing_tools, running  # noqa: E402 -- the example's folder is on the path first

__all__ = [
    "EXAMPLE",
    "Cluster",
    "add_catalogue_tool",
    "backend_states",
    "deployed",
    "free_port",
    "has",
    "health",
    "needs_cluster",
]

needs_cluster = pytest.mark.skipif(
    bool(missing_tools()) and not os.environ.get("CI"),
    reason=f"needs {' and '.join(missing_tools())} (scripts/install --with-services)",
)


@contextmanager
def deployed(root: Path) -> Iterator[Cluster]:
    """The example's deployment in ``root`` (Redis, w1, w2, HAProxy) serving a catalogue copy.

    The copy (``cluster.env["CATALOGUE_FILE"]``) is the test's to change. When the block ends
    every process is stopped and the workers' last log lines are printed (pytest shows them when
    a test fails).
    """
    catalogue = root / "catalogue.json"
    shutil.copy(EXAMPLE / "catalogue.json", catalogue)
    with running(root, 2, env={"CATALOGUE_FILE": str(catalogue)}) as cluster:
        try:
            yield cluster
        finally:
            for name in ("w1", "w2"):
                print(f"--- {name}\n{cluster.log(name)[-4000:]}")  # noqa: T201 -- shown when a test fails


def add_catalogue_tool(path: Path, name: str) -> None:
    """Add a template tool to the catalogue file (as an operator editing it would)."""
    document = json.loads(path.read_text())
    document["elements"].append(
        {
            "kind": "tool",
            "definition": {
                "name": name,
                "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                "_meta": {"template": f"{name} says hi to {{name}}"},
            },
            "handler": "greetings:Template",
        }
    )
    path.write_text(json.dumps(document))


def health(url: str) -> tuple[int, dict[str, Any]]:
    """A health endpoint's status and document."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 -- our own loopback server
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def backend_states(document: dict[str, Any]) -> set[str]:
    """The states of the shared backends a health document lists."""
    return {backend["state"] for backend in document.get("backends", [])}


async def has(client: Client, name: str) -> bool:
    """Whether the tool ``name`` is listed now."""
    return name in await tool_names(client)
